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
from verifiers import ConfigError

__all__ = [
    "ANSWER_FORMATS",
    "HUB_ID",
    "LETTERS",
    "OFFICIAL_INSTRUCTIONS",
    "OFFICIAL_JUDGE_PROMPT",
    "extract_answer_line_letter",
    "extract_boxed_letter",
    "format_question",
    "load_environment",
    "option_order",
    "parse_judge_verdict",
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
#: letter, its "regex" a final "Answer: X" style line; its "judge" asks for the boxed letter
#: and lets a yes/no judge compare the response with the correct letter).
SAMPLE = SUBSETS[True][1]
VERIFIERS = {"exact-match": "boxed", "regex": "answer_line", "judge": "boxed"}
LETTERS = "ABCD"
QUESTION = "Question"
CORRECT = "Correct Answer"
INCORRECT = ("Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")
RECORD_ID = "Record ID"

#: answer_format -> the instruction placed before the question (our wording; the upstream
#: environment's own lines are loaded with ``instruction_prompt="official"``).
ANSWER_FORMATS = {
    # The letter in a box, the format the INTELLECT-3 evaluation asked for.
    "boxed": (
        "Work through the question step by step. Then write only the letter of the correct "
        "option inside \\boxed{}."
    ),
    # A final "Answer: X" line, the format of the common zero-shot chain-of-thought evaluations.
    "answer_line": (
        "Answer the multiple-choice question below. Think it through step by step, then end "
        "your response with a line of the form 'Answer: X', where X is the letter (A, B, C or "
        "D) of the correct option."
    ),
}


# -- published prompts (loaded at run time, never stored here) --------------------------------
_UPSTREAM = "https://raw.githubusercontent.com/PrimeIntellect-ai/research-environments/"
#: ``instruction_prompt="official"``: the upstream environment's instruction for the format:
#: the INTELLECT-3 version's ``INSTRUCTION_PROMPT`` (its first commit, the state the reported
#: 74.4 was measured with) for "boxed", the 2025-12 version's ``MCQ_ANSWER_PROMPT`` for
#: "answer_line".
OFFICIAL_INSTRUCTIONS: dict[str, list[vf.PromptSource]] = {
    "boxed": [
        vf.PromptSource(
            url=_UPSTREAM + "b9cb04acef3b5608a0e05883af7f329c0c69dbaa/environments/gpqa/gpqa.py",
            name="INSTRUCTION_PROMPT",
        )
    ],
    "answer_line": [
        vf.PromptSource(
            url=_UPSTREAM
            + "377868b2fede2c329705dba4f8bab9de6b887849/environments/gpqa/gpqa/gpqa.py",
            name="MCQ_ANSWER_PROMPT",
        )
    ],
}
#: ``judge_prompt="official"``: the yes/no prompt upstream's judge used, verifiers' own
#: ``DEFAULT_JUDGE_PROMPT`` as of v0.1.8 (upstream passed no prompt of its own).
OFFICIAL_JUDGE_PROMPT = vf.PromptSource(
    url="https://raw.githubusercontent.com/PrimeIntellect-ai/verifiers/"
    "fa7f5fad1c39437d0e66af7cc6bd25c04fe0a7cb/verifiers/rubrics/judge_rubric.py",
    name="DEFAULT_JUDGE_PROMPT",
)


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


_VERDICT_WORD = re.compile(r"[a-z]+")


def parse_judge_verdict(reply: str | None) -> float:
    """1.0 when the judge's reply (after any reasoning, `vf.strip_reasoning`) starts with the
    word "yes", 0.0 with "no"; anything else is a judge failure (`vf.JudgeError`: an
    infrastructure error on the rollout), never a guess. Upstream scored 1 whenever "yes"
    appeared anywhere in the reply, so "no, not yes" counted as correct."""
    text = vf.strip_reasoning(reply or "").strip().lower()
    m = _VERDICT_WORD.search(text)
    if m and m.start() == 0 and m.group(0) in ("yes", "no"):
        return 1.0 if m.group(0) == "yes" else 0.0
    raise vf.JudgeError(f"the judge's verdict is neither yes nor no: {(reply or '')[:200]!r}")


def _final_text(text: str) -> str:
    return vf.strip_reasoning(text).strip()


def _judge_rubric(
    letter_parser: vf.Parser,
    model: str,
    base_url: str | None,
    api_key_var: str | None,
    sampling_args: dict[str, Any] | None,
    prompt: Any,
) -> vf.Rubric:
    """Upstream's judge mode: a yes/no `vf.JudgeRubric` shown the question (with its
    options), the correct letter and the final response; the exact letter is a metric."""
    template = vf.resolve_prompt(
        prompt,
        vf.DEFAULT_JUDGE_PROMPT,
        [OFFICIAL_JUDGE_PROMPT],
        argument="judge_prompt",
        required=("answer", "response"),
    )
    # A named endpoint follows the keyless rule (no key variable: the key "EMPTY"); with
    # neither, OPENAI_BASE_URL / OPENAI_API_KEY, as upstream's default client.
    endpoint = (
        vf.judge_endpoint(base_url, api_key_var)
        if base_url is not None or api_key_var is not None
        else {}
    )
    rubric = vf.JudgeRubric(
        parser=vf.Parser(extract_fn=_final_text),
        judge_model=model,
        judge_sampling_args=sampling_args,
        judge_prompt=template,
        **endpoint,
    )

    async def judge_reward(
        judge: Any, prompt: Any, completion: Any, answer: str, state: Any
    ) -> float:
        """1.0 iff the judge says the response gives the correct option (strict yes/no)."""
        if not rubric.parser.parse_answer(completion):
            return 0.0  # no final answer (empty, or reasoning cut off): nothing to judge
        return parse_judge_verdict(await judge(prompt, completion, answer, state))

    async def correct_letter(completion: Any, answer: str) -> float:
        """The exact-match grade of the same response (a metric, weight 0)."""
        return 1.0 if letter_parser.parse_answer(completion) == answer else 0.0

    rubric.add_reward_func(judge_reward, weight=1.0)
    rubric.add_reward_func(correct_letter, weight=0.0)
    return rubric


def load_environment(
    diamond: bool = True,
    system_prompt: str | None = None,
    verifier: str | None = None,
    instruction_prompt: Any = None,
    source: Any = "auto",
    shuffle_seed: int = 0,
    answer_format: str = "boxed",
    sampling_args: dict[str, Any] | None = None,
    judge_model: str = "gpt-4.1-nano",
    judge_base_url: str | None = None,
    judge_api_key_var: str | None = None,
    judge_sampling_args: dict[str, Any] | None = None,
    judge_prompt: Any = None,
) -> vf.Environment:
    """GPQA (Diamond by default) as a single-turn environment.

    No ``**kwargs``: an argument this function does not name is a TypeError (and a ConfigError
    listing the accepted ones through ``vf.load_environment``), never silently stored.

    Args:
        diamond: True (upstream's default): the Diamond set (``gpqa_diamond``, 198 questions);
            False: the main set (``gpqa_main``, 448). The bundled sample has rows of each.
        system_prompt: an optional system message (none by default, as upstream).
        verifier: upstream's name for the grading mode: "exact-match" (the letter in
            ``\\boxed{}``, = answer_format "boxed"), "regex" (a final answer line, =
            "answer_line") or "judge" (the boxed-letter prompt, graded by a yes/no LLM
            judge). None: use ``answer_format``, graded exactly.
        instruction_prompt: replaces the instruction put before the question (upstream's
            meaning); None: the answer format's own instruction (our wording);
            ``"official"``: the upstream environment's instruction for that format, loaded
            at load time (`OFFICIAL_INSTRUCTIONS`, cached on disk); a `vf.PromptSource` dict
            loads another published text.
        source: "auto" (the real dataset when reachable, else the bundled sample, with a
            warning), "hub" (``Idavidrein/gpqa``/``gpqa_diamond`` or an error; the dataset is
            gated, so log in to Hugging Face first), "sample", a local file / folder, a list
            of row dicts or a ``datasets.Dataset`` in the real dataset's columns.
        shuffle_seed: seed of the option order (an int; the same seed gives the same order for
            a question everywhere).
        answer_format: "boxed" (the letter in ``\\boxed{}``, the INTELLECT-3 format) or
            "answer_line" (a final ``Answer: X`` line).
        sampling_args: default sampling arguments of the environment.
        judge_model: the judge model (``verifier="judge"`` only; upstream's JudgeRubric
            default, "gpt-4.1-nano").
        judge_base_url / judge_api_key_var: the judge's endpoint and the variable holding its
            key; a URL without a key variable sends the key "EMPTY" (`vf.judge_endpoint`);
            neither: ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, as upstream.
        judge_sampling_args: sampling arguments of judge requests.
        judge_prompt: the judge's template (``{question}``, ``{answer}``, ``{response}``);
            None: ``vf.DEFAULT_JUDGE_PROMPT``; ``"official"``: upstream verifiers' default
            prompt, loaded at load time (`OFFICIAL_JUDGE_PROMPT`).
    """
    if not isinstance(diamond, bool):
        raise ConfigError(f"diamond must be True or False, got {diamond!r}")
    judged = verifier == "judge"
    if verifier is not None:
        if verifier not in VERIFIERS:
            raise ConfigError(
                f"verifier must be one of {', '.join(map(repr, VERIFIERS))}; got {verifier!r}"
            )
        if answer_format != "boxed" and answer_format != VERIFIERS[verifier]:
            raise ConfigError(
                f"verifier={verifier!r} and answer_format={answer_format!r} disagree; pass one"
            )
        answer_format = VERIFIERS[verifier]
    if not judged and (
        judge_base_url is not None
        or judge_api_key_var is not None
        or judge_sampling_args is not None
        or judge_prompt is not None
        or judge_model != "gpt-4.1-nano"
    ):
        raise ConfigError("the judge_* arguments need verifier='judge'")
    if answer_format not in ANSWER_FORMATS:
        raise ConfigError(
            f"answer_format must be one of {', '.join(map(repr, ANSWER_FORMATS))}; "
            f"got {answer_format!r}"
        )
    if isinstance(shuffle_seed, bool) or not isinstance(shuffle_seed, int):
        raise ConfigError(f"shuffle_seed must be an integer, got {shuffle_seed!r}")
    instruction = vf.resolve_prompt(
        instruction_prompt,
        ANSWER_FORMATS[answer_format],
        OFFICIAL_INSTRUCTIONS[answer_format],
        argument="instruction_prompt",
    )
    raw, what = _load_raw(source, diamond)
    rows = _build_rows(raw, shuffle_seed, instruction, what)
    if not rows:
        raise ConfigError("the GPQA dataset has no rows")
    extract = extract_boxed_letter if answer_format == "boxed" else extract_answer_line_letter
    parser = vf.Parser(extract_fn=extract)

    if judged:
        rubric = _judge_rubric(
            parser,
            judge_model,
            judge_base_url,
            judge_api_key_var,
            judge_sampling_args,
            judge_prompt,
        )
    else:
        rubric = vf.letter_rubric(parser)

    from datasets import Dataset

    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(rows),
        system_prompt=system_prompt,
        parser=parser,
        rubric=rubric,
        sampling_args=sampling_args,
    )
