"""GPQA Diamond: 198 graduate-level biology, chemistry and physics multiple-choice questions.

Single turn. The four options (one correct, three incorrect) are put under the letters A-D in an
order drawn from ``shuffle_seed`` and the question's id with SHA-256, so one seed gives one
order on every machine and Python version (no ``hash()``, no global RNG). The model's final
letter is extracted strictly and compared with the letter the correct option landed on.
See README.md for the prompt formats and the reward.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import verifiers as vf
from verifiers.errors import ConfigError

__all__ = [
    "ANSWER_FORMATS",
    "HUB_ID",
    "LETTERS",
    "extract_answer_line_letter",
    "extract_boxed_letter",
    "format_question",
    "load_environment",
    "option_order",
]

HUB_ID = "Idavidrein/gpqa"
HUB_SPLIT = "train"
DATA_DIR = Path(__file__).parent / "data"
#: diamond -> (hub config, bundled sample). Upstream's ``diamond=False`` is the main set (448).
SUBSETS = {
    True: ("gpqa_diamond", DATA_DIR / "sample.jsonl"),
    False: ("gpqa_main", DATA_DIR / "sample_main.jsonl"),
}
#: upstream's ``verifier`` values -> our answer_format (upstream's "exact-match" is the boxed
#: letter, its "regex" a final "Answer: X" style line).
SAMPLE = SUBSETS[True][1]
VERIFIERS = {"exact-match": "boxed", "regex": "answer_line"}
LETTERS = "ABCD"
QUESTION = "Question"
CORRECT = "Correct Answer"
INCORRECT = ("Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")
RECORD_ID = "Record ID"

#: answer_format -> the instruction placed before the question.
ANSWER_FORMATS = {
    # The INTELLECT-3 evaluation prompt (reported GPQA Diamond 74.4).
    "boxed": (
        "Please reason step by step, then ONLY give the letter of the correct answer within "
        "\\boxed{}."
    ),
    # A final "Answer: X" line, the format of the common zero-shot chain-of-thought evaluations.
    "answer_line": (
        "Answer the multiple-choice question below. Think it through step by step, then end "
        "your response with a line of the form 'Answer: X', where X is the letter (A, B, C or "
        "D) of the correct option."
    ),
}


# -- the shuffle ---------------------------------------------------------------------------
def option_order(key: str, seed: int, n: int = 4) -> list[int]:
    """A permutation of ``range(n)``: ``order[k]`` is the original option shown at letter k
    (original 0 is the correct answer). Each option is ranked by SHA-256 of (seed, key, its
    original index), so the order depends only on those, never on the machine or process."""

    def rank(i: int) -> bytes:
        return hashlib.sha256(f"gpqa-shuffle\x00{seed}\x00{key}\x00{i}".encode()).digest()

    return sorted(range(n), key=rank)


def format_question(question: str, options: list[str], instruction: str) -> str:
    lines = "\n".join(f"{letter}: {text}" for letter, text in zip(LETTERS, options, strict=True))
    return f"{instruction}\n\nQuestion: {question}\n\n{lines}"


# -- strict letter extraction ----------------------------------------------------------------
_ANSWER_LINE_RE = re.compile(
    r"^[ \t>*_#]*answer[ \t*_]*[:：][ \t*_]*\(?[ \t]*([A-Za-z])[ \t]*\)?[ \t*_]*\.?[ \t*_]*$",
    re.IGNORECASE | re.MULTILINE,
)


def extract_boxed_letter(text: str | None, letters: str = LETTERS) -> str:
    """The option letter in the last ``\\boxed{}`` of the final answer, or "" (strict: see
    ``vf.extract_boxed_choice``)."""
    return vf.extract_boxed_choice(text, letters)


def extract_answer_line_letter(text: str | None, letters: str = LETTERS) -> str:
    """The letter of the last line of the final answer that reads ``Answer: X`` (optionally
    bold, ``(X)`` or ``X.``), or "". Only an upper-case letter in ``letters`` counts, and the
    line must hold nothing else: ``Answer: B because ...`` is no answer."""
    matches = _ANSWER_LINE_RE.findall(vf.strip_reasoning(text))
    return matches[-1] if matches and matches[-1] in letters else ""


# -- data ------------------------------------------------------------------------------------
def _text(row: dict[str, Any], column: str, where: str) -> str:
    value = row.get(column)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: column {column!r} is missing or empty")
    return value.strip()


def _build_rows(
    raw: list[dict[str, Any]], seed: int, instruction: str, what: str
) -> list[dict[str, Any]]:
    rows = []
    for i, row in enumerate(raw):
        record_id = row.get(RECORD_ID)
        where = f"{what} row {i}" + (f" ({record_id})" if record_id else "")
        question = _text(row, QUESTION, where)
        options = [_text(row, CORRECT, where)] + [_text(row, c, where) for c in INCORRECT]
        if options[0] in options[1:]:
            raise ConfigError(f"{where}: the correct answer is also listed as an incorrect one")
        key = str(record_id) if record_id else question
        order = option_order(key, seed)
        shown = [options[k] for k in order]
        letter = LETTERS[order.index(0)]
        rows.append(
            {
                "question": format_question(question, shown, instruction),
                "answer": letter,
                "info": {
                    "record_id": None if record_id is None else str(record_id),
                    "subdomain": row.get("Subdomain"),
                    "domain": row.get("High-level domain"),
                    "options": shown,
                    "correct_answer": options[0],
                },
                "task": "gpqa",
            }
        )
    return rows


def _load_raw(source: Any, diamond: bool) -> tuple[list[dict[str, Any]], str]:
    # Rows as dicts (a list source as given), so _build_rows reports a bad row by row.
    config, sample = SUBSETS[diamond]
    return vf.load_source_rows(
        HUB_ID,
        source=source,
        sample=sample,
        split=HUB_SPLIT,
        config=config,
        required_columns=[QUESTION, CORRECT, *INCORRECT],
    )


def load_environment(
    diamond: bool = True,
    system_prompt: str | None = None,
    verifier: str | None = None,
    instruction_prompt: str | None = None,
    source: Any = "auto",
    shuffle_seed: int = 0,
    answer_format: str = "boxed",
    sampling_args: dict[str, Any] | None = None,
) -> vf.Environment:
    """GPQA (Diamond by default) as a single-turn environment.

    No ``**kwargs``: an argument this function does not name is a TypeError (and a ConfigError
    listing the accepted ones through ``vf.load_environment``), never silently stored.

    Args:
        diamond: True (upstream's default): the Diamond set (``gpqa_diamond``, 198 questions);
            False: the main set (``gpqa_main``, 448). The bundled sample has rows of each.
        system_prompt: an optional system message (none by default, as upstream).
        verifier: upstream's name for the grading mode: "exact-match" (the letter in
            ``\\boxed{}``, = answer_format "boxed") or "regex" (a final answer line, =
            "answer_line"). Upstream's "judge" is not offered (see README). None: use
            ``answer_format``.
        instruction_prompt: replaces the instruction put before the question (upstream's
            meaning); None: the answer format's own instruction.
        source: "auto" (the real dataset when reachable, else the bundled sample, with a
            warning), "hub" (``Idavidrein/gpqa``/``gpqa_diamond`` or an error; the dataset is
            gated, so log in to Hugging Face first), "sample", a local file / folder, a list
            of row dicts or a ``datasets.Dataset`` in the real dataset's columns.
        shuffle_seed: seed of the option order (an int; the same seed gives the same order for
            a question everywhere).
        answer_format: "boxed" (the letter in ``\\boxed{}``; the INTELLECT-3 prompt) or
            "answer_line" (a final ``Answer: X`` line).
        sampling_args: default sampling arguments of the environment.
    """
    if not isinstance(diamond, bool):
        raise ConfigError(f"diamond must be True or False, got {diamond!r}")
    if verifier is not None:
        if verifier not in VERIFIERS:
            raise ConfigError(
                f"verifier must be one of {', '.join(map(repr, VERIFIERS))}; got {verifier!r}"
                + (
                    " (a judge-graded GPQA is not offered: letters are graded exactly)"
                    if verifier == "judge"
                    else ""
                )
            )
        if answer_format != "boxed" and answer_format != VERIFIERS[verifier]:
            raise ConfigError(
                f"verifier={verifier!r} and answer_format={answer_format!r} disagree; pass one"
            )
        answer_format = VERIFIERS[verifier]
    if answer_format not in ANSWER_FORMATS:
        raise ConfigError(
            f"answer_format must be one of {', '.join(map(repr, ANSWER_FORMATS))}; "
            f"got {answer_format!r}"
        )
    if isinstance(shuffle_seed, bool) or not isinstance(shuffle_seed, int):
        raise ConfigError(f"shuffle_seed must be an integer, got {shuffle_seed!r}")
    if instruction_prompt is not None and not isinstance(instruction_prompt, str):
        raise ConfigError("instruction_prompt must be a string")
    instruction = (
        ANSWER_FORMATS[answer_format] if instruction_prompt is None else instruction_prompt
    )
    raw, what = _load_raw(source, diamond)
    rows = _build_rows(raw, shuffle_seed, instruction, what)
    if not rows:
        raise ConfigError("the GPQA dataset has no rows")
    extract = extract_boxed_letter if answer_format == "boxed" else extract_answer_line_letter
    parser = vf.Parser(extract_fn=extract)

    async def correct_letter(completion: Any, answer: str) -> float:
        """1.0 iff the extracted letter is the correct option's letter."""
        return 1.0 if parser.parse_answer(completion) == answer else 0.0

    async def answered(completion: Any) -> float:
        """1.0 iff a letter could be extracted at all (a format metric, weight 0)."""
        return 1.0 if parser.parse_answer(completion) else 0.0

    rubric = vf.Rubric(funcs=[correct_letter, answered], weights=[1.0, 0.0], parser=parser)

    from datasets import Dataset

    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(rows),
        system_prompt=system_prompt,
        parser=parser,
        rubric=rubric,
        sampling_args=sampling_args,
    )
