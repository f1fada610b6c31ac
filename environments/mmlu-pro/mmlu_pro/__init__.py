"""MMLU-Pro: about 12,000 multiple-choice questions over 14 subjects, with up to ten options (A-J).

Single turn. The options are shown in the dataset's order; the model's final letter is extracted
strictly and compared with the gold letter. ``category`` restricts the set to some subjects.
See README.md for the prompt formats and the reward.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import verifiers as vf
from verifiers import OFFICIAL, ConfigError

__all__ = [
    "ANSWER_FORMATS",
    "CATEGORIES",
    "HUB_ID",
    "LETTERS",
    "OFFICIAL_INSTRUCTIONS",
    "extract_answer_is_letter",
    "extract_boxed_letter",
    "format_cot_example",
    "format_question",
    "load_environment",
]

HUB_ID = "TIGER-Lab/MMLU-Pro"
DATA_DIR = Path(__file__).parent / "data"
#: dataset_split -> the bundled sample standing in for it (so the split visibly selects rows).
SAMPLES = {"test": DATA_DIR / "sample.jsonl", "validation": DATA_DIR / "sample_validation.jsonl"}
SAMPLE = SAMPLES["test"]
LETTERS = "ABCDEFGHIJ"
#: The subjects of MMLU-Pro (the dataset's ``category`` values).
CATEGORIES = (
    "biology",
    "business",
    "chemistry",
    "computer science",
    "economics",
    "engineering",
    "health",
    "history",
    "law",
    "math",
    "other",
    "philosophy",
    "physics",
    "psychology",
)

#: answer_format -> the instruction placed before the question (our wording; the published
#: ones are loaded with ``instruction_prompt="official"``).
ANSWER_FORMATS = {
    # The letter in a box, the format the INTELLECT-3 evaluation asked for.
    "boxed": (
        "Work through the question step by step. Then write only the letter of the correct "
        "option inside \\boxed{}."
    ),
    # The phrase MMLU-Pro's own chain-of-thought evaluation asks the model to finish with.
    "answer_is": (
        "Answer the multiple-choice question below. Think it through step by step, then finish "
        'your response with "The answer is (X)", where X is the letter of the correct option.'
    ),
}


#: ``instruction_prompt="official"``, by format: for "boxed" the upstream environment's
#: ``INSTRUCTION_PROMPT`` (its INTELLECT-3 state, first commit); for "answer_is" MMLU-Pro's
#: own chain-of-thought introduction (``cot_prompt_lib/initial_prompt.txt``, ``{$}`` standing
#: for the subject), used with MMLU-Pro's layout and few-shot examples.
OFFICIAL_INSTRUCTIONS: dict[str, list[vf.PromptSource]] = {
    "boxed": [
        vf.PromptSource(
            url="https://raw.githubusercontent.com/PrimeIntellect-ai/research-environments/"
            "b9cb04acef3b5608a0e05883af7f329c0c69dbaa/environments/mmlu_pro/mmlu_pro.py",
            name="INSTRUCTION_PROMPT",
        )
    ],
    "answer_is": [
        vf.PromptSource(
            url="https://raw.githubusercontent.com/TIGER-AI-Lab/MMLU-Pro/"
            "13c44166cf2ef3c3ca63d0a7aee97538ab099d8a/cot_prompt_lib/initial_prompt.txt"
        )
    ],
}
#: MMLU-Pro's evaluation shows this many worked examples of the question's subject.
OFFICIAL_NUM_FEWSHOT = 5
# MMLU-Pro's layout: the cue each answer starts with (the dataset's worked answers begin "A: "
# plus this cue, which its evaluation rewrites to "Answer: " plus the cue).
_COT_CUE = "Let's think step by step."


def format_question(question: str, options: list[str], instruction: str) -> str:
    lines = "\n".join(f"{letter}. {text}" for letter, text in zip(LETTERS, options, strict=False))
    return f"{instruction}\n\n{question}\n\n{lines}"


def format_cot_example(question: str, options: list[str], cot_content: str | None = None) -> str:
    """One question in MMLU-Pro's chain-of-thought layout: ``Question:``, the question,
    ``Options:`` with one ``X. option`` line each, then the worked answer (an example) or the
    open answer cue (the question asked)."""
    lines = "".join(f"{letter}. {text}\n" for letter, text in zip(LETTERS, options, strict=False))
    head = f"Question:\n{question}\nOptions:\n{lines}"
    if cot_content is None:
        return f"{head}Answer: {_COT_CUE}"
    return head + cot_content.replace(f"A: {_COT_CUE}", f"Answer: {_COT_CUE}") + "\n\n"


# -- strict letter extraction ----------------------------------------------------------------
_ANSWER_IS_RE = re.compile(
    r"(?i:\bthe\s+answer\s+is)\s*:?\s*\*{0,2}\s*\(?\s*([A-Z])\s*\)?(?![A-Za-z0-9])"
)


def extract_boxed_letter(text: str | None, letters: str = LETTERS) -> str:
    """The option letter in the last ``\\boxed{}`` of the final answer, or "" (strict: see
    ``vf.extract_boxed_choice``)."""
    return vf.extract_boxed_choice(text, letters)


def extract_answer_is_letter(text: str | None, letters: str = LETTERS) -> str:
    """The letter of the last "the answer is (X)" (or ``X``, ``**X**``) in the final answer,
    or "". Only an upper-case letter counts, and it must be one of ``letters``: the last
    occurrence decides, and if it names no option there is no answer."""
    matches = _ANSWER_IS_RE.findall(vf.strip_reasoning(text))
    return matches[-1] if matches and matches[-1] in letters else ""


# -- data ------------------------------------------------------------------------------------
def _parse_categories(category: Any) -> set[str] | None:
    items = vf.name_list(category, "category")
    if items is None:
        return None
    chosen = set()
    for item in items:
        name = str(item).strip().lower().replace("_", " ")
        if name not in CATEGORIES:
            raise ConfigError(
                f"unknown MMLU-Pro category {item!r}; the categories are: {', '.join(CATEGORIES)}"
            )
        chosen.add(name)
    return chosen


def _build_rows(
    raw: list[dict[str, Any]],
    categories: set[str] | None,
    render: Callable[[str, list[str], str, Any], str],
    what: str,
) -> list[dict[str, Any]]:
    rows = []
    for i, row in enumerate(raw):
        qid = row.get("question_id")
        where = f"{what} row {i}" + (f" (question_id {qid})" if qid is not None else "")
        category = row.get("category")
        if not isinstance(category, str) or not category.strip():
            raise ConfigError(f"{where}: 'category' is missing or empty")
        category = category.strip()
        if categories is not None and category.lower() not in categories:
            continue
        question = row.get("question")
        if not isinstance(question, str) or not question.strip():
            raise ConfigError(f"{where}: 'question' is missing or empty")
        options = row.get("options")
        if not isinstance(options, list) or not 2 <= len(options) <= len(LETTERS):
            raise ConfigError(f"{where}: 'options' must be a list of 2 to 10 texts")
        if not all(isinstance(o, str) and o.strip() for o in options):
            raise ConfigError(f"{where}: an option is empty or not text")
        letters = LETTERS[: len(options)]
        answer = row.get("answer")
        if not isinstance(answer, str) or answer.strip() not in letters:
            raise ConfigError(
                f"{where}: answer {answer!r} is not one of the letters {', '.join(letters)}"
            )
        answer = answer.strip()
        index = row.get("answer_index")
        if index is not None and index != letters.index(answer):
            raise ConfigError(f"{where}: answer {answer!r} and answer_index {index!r} disagree")
        options = [o.strip() for o in options]
        rows.append(
            {
                "question": render(question.strip(), options, category, qid),
                "answer": answer,
                "info": {
                    "question_id": None if qid is None else str(qid),
                    "id": None if qid is None else str(qid),  # upstream's name for it
                    "category": category,
                    "src": row.get("src"),
                    "num_options": len(options),
                },
                "task": "mmlu-pro",
            }
        )
    return rows


def _load_raw(
    source: Any, name: str, subset: str | None, split: str
) -> tuple[list[dict[str, Any]], str]:
    # Rows as dicts (a list source as given), so _build_rows reports a bad row by row.
    return vf.load_source_rows(
        name,
        source=source,
        sample=SAMPLES[split],
        split=split,
        config=subset,
        required_columns=["question", "options", "answer", "category"],
    )


def _fewshot_pool(source: Any, what_for: str) -> dict[str, list[dict[str, Any]]]:
    """Validation rows with a worked answer, by subject (lower case), in the split's order."""
    rows, what = vf.load_source_rows(
        HUB_ID,
        source=source,
        sample=SAMPLES["validation"],
        split="validation",
        config="default",
        required_columns=["question", "options", "category", "cot_content"],
    )
    pool: dict[str, list[dict[str, Any]]] = {}
    for i, row in enumerate(rows):
        cot, options = row.get("cot_content"), row.get("options")
        if not isinstance(cot, str) or not cot.strip() or not isinstance(options, list):
            raise ConfigError(f"{what} row {i}: a few-shot example needs options and cot_content")
        pool.setdefault(str(row.get("category", "")).strip().lower(), []).append(row)
    if not pool:
        raise ConfigError(f"{what} has no few-shot examples for {what_for}")
    return pool


def _official_cot(
    intro: str, pool: dict[str, list[dict[str, Any]]], k: int
) -> Callable[[str, list[str], str, Any], str]:
    """MMLU-Pro's chain-of-thought prompt: its introduction for the subject, the subject's
    first ``k`` worked validation examples (never the question itself), then the question."""

    def render(question: str, options: list[str], category: str, qid: Any) -> str:
        examples = [
            r for r in pool.get(category.lower(), []) if qid is None or r.get("question_id") != qid
        ][:k]
        shots = "".join(
            format_cot_example(r["question"], r["options"], r["cot_content"]) for r in examples
        )
        return intro.replace("{$}", category) + "\n" + shots + format_cot_example(question, options)

    return render


def load_environment(
    dataset_name: str = HUB_ID,
    dataset_subset: str | None = "default",
    dataset_split: str = "test",
    system_prompt: str | None = None,
    source: Any = "auto",
    category: str | list[str] | None = None,
    answer_format: str = "boxed",
    sampling_args: dict[str, Any] | None = None,
    instruction_prompt: Any = None,
    num_fewshot: int | None = None,
    fewshot_source: Any = "auto",
) -> vf.Environment:
    """MMLU-Pro as a single-turn environment.

    No ``**kwargs``: an argument this function does not name is a TypeError (and a ConfigError
    listing the accepted ones through ``vf.load_environment``), never silently stored.

    Args:
        dataset_name: the hub dataset read by source "auto"/"hub" (upstream's argument).
        dataset_subset: its config ("default", upstream's default).
        dataset_split: "test" (about 12,000 questions) or "validation" (70); with the bundled
            sample it picks that split's sample file.
        source: "auto" (the real dataset when reachable, else the bundled sample, with a
            warning), "hub" (``TIGER-Lab/MMLU-Pro`` or an error), "sample", a local file /
            folder, a list of row dicts or a ``datasets.Dataset`` in the real dataset's columns.
        category: keep only these subjects (a name or a list, case-insensitive; see
            ``CATEGORIES``); None keeps all.
        answer_format: "boxed" (the letter in ``\\boxed{}``, the INTELLECT-3 format) or
            "answer_is" (a final "The answer is (X)", as MMLU-Pro's own evaluation asks).
        system_prompt: an optional system message (none by default).
        sampling_args: default sampling arguments of the environment.
        instruction_prompt: replaces the instruction put before the question; None: the
            format's own (our wording); ``"official"``: for "boxed" the upstream environment's
            instruction, for "answer_is" MMLU-Pro's chain-of-thought prompt (its introduction,
            layout and worked examples), loaded at load time (`OFFICIAL_INSTRUCTIONS`, cached
            on disk); a `vf.PromptSource` dict loads another published text.
        num_fewshot: worked examples of the question's subject shown first, with the official
            "answer_is" prompt only (default there: 5, as MMLU-Pro's evaluation).
        fewshot_source: where those examples come from: the validation split (source values
            as for ``source``; "auto": the hub, else the bundled validation sample).
    """
    if dataset_split not in SAMPLES:
        raise ConfigError(
            f"dataset_split must be one of {', '.join(map(repr, SAMPLES))}; got {dataset_split!r}"
        )
    if answer_format not in ANSWER_FORMATS:
        raise ConfigError(
            f"answer_format must be one of {', '.join(map(repr, ANSWER_FORMATS))}; "
            f"got {answer_format!r}"
        )
    official = (
        isinstance(instruction_prompt, str) and instruction_prompt.strip().lower() == OFFICIAL
    )
    official_cot = official and answer_format == "answer_is"
    if num_fewshot is not None and (
        isinstance(num_fewshot, bool) or not isinstance(num_fewshot, int) or num_fewshot < 0
    ):
        raise ConfigError(f"num_fewshot must be an integer >= 0, got {num_fewshot!r}")
    if num_fewshot and not official_cot:
        raise ConfigError(
            "num_fewshot needs MMLU-Pro's own prompt: answer_format='answer_is' with "
            "instruction_prompt='official'"
        )
    instruction = vf.resolve_prompt(
        instruction_prompt,
        ANSWER_FORMATS[answer_format],
        OFFICIAL_INSTRUCTIONS[answer_format],
        argument="instruction_prompt",
    )
    if official_cot:
        k = OFFICIAL_NUM_FEWSHOT if num_fewshot is None else num_fewshot
        pool = _fewshot_pool(fewshot_source, "the official prompt") if k else {}
        render = _official_cot(instruction, pool, k)
    else:

        def render(question: str, options: list[str], category: str, qid: Any) -> str:
            return format_question(question, options, instruction)

    categories = _parse_categories(category)
    raw, what = _load_raw(source, dataset_name, dataset_subset, dataset_split)
    rows = _build_rows(raw, categories, render, what)
    if not rows:
        chosen = f" in category {', '.join(sorted(categories))}" if categories else ""
        raise ConfigError(f"the MMLU-Pro {what} has no rows{chosen}")
    extract = extract_boxed_letter if answer_format == "boxed" else extract_answer_is_letter

    def letter(completion: Any, info: dict[str, Any]) -> str:
        text = vf.Parser().parse_answer(completion) or ""
        return extract(text, LETTERS[: int(info.get("num_options") or len(LETTERS))])

    parser = vf.Parser(extract_fn=extract)

    from datasets import Dataset

    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(rows),
        system_prompt=system_prompt,
        parser=parser,
        rubric=vf.letter_rubric(parser, letter),
        sampling_args=sampling_args,
    )
