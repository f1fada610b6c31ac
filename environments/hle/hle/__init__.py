"""Humanity's Last Exam (text-only): expert-written questions with short exact or
multiple-choice answers, graded by an LLM judge that returns a structured JSON verdict.

Single turn. The model answers in an Explanation / Answer / Confidence format; a judge model
reads the question, the gold answer (as the gold answer) and the model's final response (as
the response) and replies with ``{extracted_final_answer, reasoning, correct: yes|no,
confidence}``, validated with pydantic. A reply that is not such a verdict is a judge failure
(an infrastructure error on that rollout), never a silent 0. See README.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

import verifiers as vf
from verifiers import OFFICIAL, ConfigError, JudgeError

from .tools import SERPER_URL, make_search, python

__all__ = [
    "ANSWER_TYPES",
    "BY_ANSWER_TYPE",
    "HUB_ID",
    "JUDGE_PROMPT",
    "JUDGE_RESPONSE_FORMAT",
    "OFFICIAL_JUDGE_PROMPT",
    "OFFICIAL_SYSTEM_PROMPTS",
    "HLEVerdict",
    "final_response",
    "load_environment",
    "parse_verdict",
]

HUB_ID = "cais/hle"
#: system_prompt's default: the system message follows each row's answer type (see
#: ANSWER_TYPES); any other string is used as the system message of every row.
BY_ANSWER_TYPE = "by_answer_type"
SAMPLE = Path(__file__).parent / "data" / "sample.jsonl"

_FORMAT = (
    "Give your response in exactly this format:\n"
    "Explanation: <the reasoning that leads to your {what}>\n"
    "{label}: <{answer}>\n"
    "Confidence: <how sure you are of that answer, from 0% to 100%>"
)
#: answer_type -> system prompt (the HLE answer format: explanation, answer, confidence).
ANSWER_TYPES = {
    "exactMatch": _FORMAT.format(
        what="final answer", label="Exact Answer", answer="your final answer, as short as possible"
    ),
    "multipleChoice": _FORMAT.format(
        what="choice", label="Answer", answer="the answer choice you pick"
    ),
}

JUDGE_PROMPT = """You are grading a response to an exam question against the question's \
official correct answer.

[question]:
{question}

[correct_answer]:
{answer}

[response]:
{response}

Reply with one JSON object and nothing else, with exactly these fields:
- "extracted_final_answer": the final answer given in [response], copied exactly; "None" if \
[response] gives no final answer.
- "reasoning": a short explanation of why extracted_final_answer does or does not match \
[correct_answer]. Only compare the two: do not solve the question again and do not argue for \
another answer.
- "correct": "yes" if extracted_final_answer is equivalent to [correct_answer] (for numerical \
answers a small rounding difference is allowed), otherwise "no" — including when it differs in \
any meaningful way, is ambiguous, or is missing.
- "confidence": the confidence score from 0 to 100 stated in [response], as an integer; 100 if \
[response] states none."""

# -- the published prompts (loaded at run time, never stored here) ---------------------------
#: The HLE repository at the commit the INTELLECT-3 environment cites for its prompts.
_HLE = (
    "https://raw.githubusercontent.com/centerforaisafety/hle/"
    "67b325111a0c3678eeb563eb30f98344f06846ad/hle_eval/"
)
#: ``system_prompt="official"``: HLE's own answer-format system prompts, by answer type, as
#: its prediction script picks them (constants of ``hle_eval/run_model_predictions.py``).
OFFICIAL_SYSTEM_PROMPTS: dict[str, vf.PromptSource] = {
    "exactMatch": vf.PromptSource(
        url=_HLE + "run_model_predictions.py", name="SYSTEM_EXACT_ANSWER"
    ),
    "multipleChoice": vf.PromptSource(url=_HLE + "run_model_predictions.py", name="SYSTEM_MC"),
}
#: ``judge_prompt="official"``: HLE's judge prompt (``hle_eval/run_judge_results.py``), its
#: ``{correct_answer}`` renamed to the judge's ``{answer}``.
OFFICIAL_JUDGE_PROMPT = vf.PromptSource(
    url=_HLE + "run_judge_results.py",
    name="JUDGE_PROMPT",
    placeholders={"correct_answer": "answer"},
)

#: OpenAI-style structured output request for the verdict (``response_format``).
JUDGE_RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "hle_verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "extracted_final_answer": {"type": "string"},
                "reasoning": {"type": "string"},
                "correct": {"type": "string", "enum": ["yes", "no"]},
                "confidence": {"type": "integer"},
            },
            "required": ["extracted_final_answer", "reasoning", "correct", "confidence"],
            "additionalProperties": False,
        },
    },
}


class HLEVerdict(BaseModel):
    """The judge's verdict on one response."""

    model_config = ConfigDict(extra="forbid")

    extracted_final_answer: str
    reasoning: str
    correct: Literal["yes", "no"]
    confidence: int

    @field_validator("correct", mode="before")
    @classmethod
    def _yes_no(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("confidence", mode="before")
    @classmethod
    def _percent(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip().removesuffix("%").strip()
        if isinstance(value, bool):
            raise ValueError("confidence must be a number from 0 to 100")
        return value

    @field_validator("confidence")
    @classmethod
    def _in_range(cls, value: int) -> int:
        if not 0 <= value <= 100:
            raise ValueError(f"confidence {value} is not between 0 and 100")
        return value


_FENCED_RE = re.compile(r"```(?:json)?[ \t]*\n(.*?)\n?```", re.DOTALL)


def parse_verdict(reply: str | None) -> HLEVerdict:
    """The verdict in a judge reply: the whole reply is one JSON object (or one ```json
    fenced block holding it). Anything else — prose, a yes/no word, prose around the JSON, a
    missing or extra field, ``correct`` other than yes/no — raises `JudgeError`."""
    text = (reply or "").strip()
    fenced = _FENCED_RE.fullmatch(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text.startswith("{"):
        raise JudgeError(f"the judge's reply is not a JSON verdict: {_clip(reply)}")
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as e:
        raise JudgeError(f"the judge's reply is not valid JSON ({e}): {_clip(reply)}") from None
    try:
        return HLEVerdict.model_validate(data)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(map(str, err['loc'])) or 'verdict'}: {err['msg']}" for err in e.errors()
        )
        raise JudgeError(f"the judge's verdict is malformed ({problems}): {_clip(reply)}") from None


def _clip(text: str | None, limit: int = 300) -> str:
    text = repr(text or "")
    return text if len(text) <= limit else text[:limit] + "...'"


def final_response(text: str) -> str:
    """The final part of a response (``vf.strip_reasoning``), stripped."""
    return vf.strip_reasoning(text).strip()


# -- data ------------------------------------------------------------------------------------
def _build_rows(
    raw: list[dict[str, Any]],
    categories: set[str] | None,
    what: str,
    multimodal: bool = False,
    system_prompt: str | dict[str, str] | None = BY_ANSWER_TYPE,
) -> tuple[list[dict[str, Any]], int]:
    rows, with_images = [], 0
    for i, row in enumerate(raw):
        rid = row.get("id")
        where = f"{what} row {i}" + (f" (id {rid})" if rid is not None else "")
        image = row.get("image")
        if image and not multimodal:
            with_images += 1
            continue
        if image and not isinstance(image, str):
            raise ConfigError(f"{where}: 'image' must be an image URL or data URI string")
        category = row.get("category")
        if categories is not None and str(category or "").strip().lower() not in categories:
            continue
        question, answer = row.get("question"), row.get("answer")
        if not isinstance(question, str) or not question.strip():
            raise ConfigError(f"{where}: 'question' is missing or empty")
        if not isinstance(answer, str) or not answer.strip():
            raise ConfigError(f"{where}: 'answer' is missing or empty")
        answer_type = row.get("answer_type")
        if answer_type not in ANSWER_TYPES:
            raise ConfigError(
                f"{where}: answer_type {answer_type!r} is not one of {', '.join(ANSWER_TYPES)}"
            )
        # The image travels in info and is put into the prompt at rollout start (see
        # _ImageParts): mixed text / parts content cannot share one Arrow column.
        user = question.strip()
        system: str | None
        if system_prompt == BY_ANSWER_TYPE:
            system = ANSWER_TYPES[answer_type]
        elif isinstance(system_prompt, dict):  # the official prompts, by answer type
            system = system_prompt[answer_type]
        else:
            system = system_prompt
        prompt = [{"role": "system", "content": system}] if system is not None else []
        rows.append(
            {
                "prompt": [*prompt, {"role": "user", "content": user}],
                "answer": answer.strip(),
                "info": {
                    "id": None if rid is None else str(rid),
                    "answer_type": answer_type,
                    "category": category,
                    "raw_subject": row.get("raw_subject"),
                    "has_image": bool(image),
                    **({"image": image} if image else {}),
                },
                "task": "hle",
            }
        )
    return rows, with_images


def _load_raw(source: Any, name: str, split: str) -> tuple[list[dict[str, Any]], str]:
    # Rows as dicts (a list source as given), so _build_rows reports a bad row by row; the
    # decoded previews are not needed (the `image` column is a URL / data URI string).
    return vf.load_source_rows(
        name,
        source=source,
        sample=SAMPLE,
        split=split,
        required_columns=["question", "answer", "answer_type"],
        drop_columns=["image_preview", "rationale_image"],
    )


def _parse_categories(category: Any) -> set[str] | None:
    items = vf.name_list(category, "category")
    return None if items is None else {str(c).strip().lower() for c in items}


class _ImageParts:
    """Puts a row's image (``info["image"]``) after its question as an ``image_url`` content
    part, upstream's multimodal message shape."""

    def new_state(self, input: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        state = super().new_state(input, *args, **kwargs)  # type: ignore[misc]
        image = (state.get("info") or {}).get("image")
        if image:
            user = dict(state["prompt"][-1])
            user["content"] = [
                {"type": "text", "text": user["content"]},
                {"type": "image_url", "image_url": {"url": image}},
            ]
            state["prompt"] = [*state["prompt"][:-1], user]
        return state


class HLEEnv(_ImageParts, vf.SingleTurnEnv):
    """Single-turn HLE."""


class HLEToolEnv(_ImageParts, vf.ToolEnv):
    """HLE with tools."""


def _system_prompt(value: Any) -> str | dict[str, str] | None:
    """``system_prompt`` resolved: None, ``BY_ANSWER_TYPE`` (ours), a text for every row, or
    ``{answer_type: text}`` for ``"official"`` (HLE's prompts loaded); a source dict loads one
    published text for every row."""
    if value is None or value == BY_ANSWER_TYPE:
        return value
    if isinstance(value, str) and value.strip().lower() == OFFICIAL:
        return {
            kind: vf.load_published_prompt(
                src,
                what=f"HLE {kind} system prompt",
                instead="pass the system message as system_prompt",
            )
            for kind, src in OFFICIAL_SYSTEM_PROMPTS.items()
        }
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list | vf.PromptSource):
        return vf.load_published_prompt(
            value, what="system prompt", instead="pass the system message as system_prompt"
        )
    raise ConfigError("system_prompt must be a string, 'official', a prompt source or None")


def load_environment(
    dataset_name: str = HUB_ID,
    dataset_split: str = "test",
    multimodal: bool = False,
    tools: bool = False,
    system_prompt: str | None = BY_ANSWER_TYPE,
    judge_model: str = "gpt-4.1-mini",
    max_turns: int = -1,
    max_response_chars: int = 20_000,
    source: Any = "auto",
    category: str | list[str] | None = None,
    judge_base_url: str | None = None,
    judge_api_key_var: str | None = None,
    judge_structured_output: bool = True,
    judge_sampling_args: dict[str, Any] | None = None,
    judge_max_concurrent: int = 32,
    judge_timeout: float = 300.0,
    judge_max_retries: int = 5,
    search_api_key_var: str = "SERPER_API_KEY",
    search_url: str = SERPER_URL,
    sampling_args: dict[str, Any] | None = None,
    judge_prompt: Any = JUDGE_PROMPT,
) -> vf.Environment:
    """Humanity's Last Exam (text-only by default) as a single-turn environment, or with
    tools a multi-turn tool environment.

    No ``**kwargs``: an argument this function does not name is a TypeError (and a ConfigError
    listing the accepted ones through ``vf.load_environment``), never silently stored. The
    first eight arguments are upstream's, with its meanings and defaults.

    Args:
        dataset_name: the hub dataset read by source "auto"/"hub".
        dataset_split: its split ("test").
        multimodal: keep the questions with an image (sent as an ``image_url`` part after the
            text); False (default): drop them.
        tools: give the model a web ``search`` (Serper; needs ``search_api_key_var`` set,
            checked at load) and an arithmetic-only ``python`` tool.
        system_prompt: the system message of every row; the default, ``BY_ANSWER_TYPE``,
            picks our Explanation / Answer / Confidence instruction by the row's answer type;
            ``"official"``: HLE's published system prompts, by answer type
            (`OFFICIAL_SYSTEM_PROMPTS`, fetched at load time and cached); a `vf.PromptSource`
            dict: that published text for every row; None: no system message.
        max_turns: turn limit with tools (-1: none); without tools the environment is one turn.
        max_response_chars: search results are cut to this many characters.
        source: "auto" (the real dataset when reachable, else the bundled sample, with a
            warning), "hub" (``cais/hle`` test split or an error; gated: log in to Hugging Face
            first), "sample", a local file / folder, a list of row dicts or a
            ``datasets.Dataset`` in the real dataset's columns. Rows with an image are dropped.
        category: keep only this HLE category or these categories (case-insensitive, e.g.
            "Math", "Physics"); None keeps all.
        judge_model: the judge model name.
        judge_base_url: the judge's OpenAI-compatible endpoint; None: ``OPENAI_BASE_URL`` (or
            OpenAI) with ``OPENAI_API_KEY``, resolved at the first judgement.
        judge_api_key_var: environment variable holding the judge's API key. None with a
            ``judge_base_url``: the key "EMPTY" (a local judge needs none, and a real
            ``OPENAI_API_KEY`` is not sent to it); None without one: ``OPENAI_API_KEY``. A
            named variable must be set.
        judge_structured_output: ask the judge for a JSON-schema constrained reply
            (``response_format``); turn off for servers without structured output — the reply
            must still be the JSON verdict.
        judge_sampling_args: extra request fields for the judge (e.g. temperature, max_tokens).
        judge_max_concurrent: judge requests in flight at most.
        judge_timeout: seconds per judge request.
        judge_max_retries: retries of a judge request that failed with 429/5xx, a timeout or
            no connection (with backoff); 0: one attempt, so an unreachable judge fails the
            rollout (an infrastructure error) at once.
        search_api_key_var / search_url: the Serper key's variable and endpoint (tools only).
        sampling_args: default sampling arguments of the environment.
        judge_prompt: the judge's template (``{question}``, ``{answer}``, ``{response}``);
            default ours (`JUDGE_PROMPT`); ``"official"``: HLE's published judge prompt
            (`OFFICIAL_JUDGE_PROMPT`, fetched at load time and cached; it relies on
            structured output, so ``judge_structured_output`` must stay on); a
            `vf.PromptSource` dict loads another published text.
    """
    arguments = dict(locals())  # the judge_* ones name the judge (vf.judge_from_arguments)
    for name, flag in (("multimodal", multimodal), ("tools", tools)):
        if not isinstance(flag, bool):
            raise ConfigError(f"{name} must be True or False, got {flag!r}")
    system_prompts = _system_prompt(system_prompt)
    official_judge = isinstance(judge_prompt, str) and judge_prompt.strip().lower() == OFFICIAL
    if official_judge and not judge_structured_output:
        raise ConfigError(
            "judge_prompt='official' asks for a verdict only structured output turns into the "
            "JSON this environment reads; keep judge_structured_output=True"
        )
    template = vf.resolve_prompt(
        judge_prompt,
        JUDGE_PROMPT,
        [OFFICIAL_JUDGE_PROMPT],
        argument="judge_prompt",
        required=("answer", "response"),
    )
    categories = _parse_categories(category)
    tool_list: list[Callable[..., Any]] = (
        [make_search(search_api_key_var, max_response_chars, search_url), python] if tools else []
    )
    raw, what = _load_raw(source, dataset_name, dataset_split)
    rows, with_images = _build_rows(raw, categories, what, multimodal, system_prompts)
    if not rows:
        chosen = f" in category {', '.join(sorted(categories))}" if categories else ""
        images = f" ({with_images} with images dropped)" if with_images else ""
        raise ConfigError(f"the HLE {what} has no text-only rows{chosen}{images}")

    sampling: dict[str, Any] = {}
    if judge_structured_output:
        sampling["response_format"] = JUDGE_RESPONSE_FORMAT
    sampling.update(judge_sampling_args or {})
    parser = vf.Parser(extract_fn=final_response)
    # A named endpoint follows the keyless rule (`vf.judge_endpoint`: no key variable sends
    # "EMPTY"); with neither, the judge is OpenAI's with OPENAI_API_KEY, as upstream's.
    endpoint = (
        vf.judge_endpoint(
            judge_base_url, judge_api_key_var, timeout=judge_timeout, max_retries=judge_max_retries
        )
        if judge_base_url is not None or judge_api_key_var is not None
        else {}
    )
    rubric = vf.judge_from_arguments(
        arguments, parser, endpoint=endpoint, prompt=template, sampling_args=sampling
    )

    async def verdict(
        judge: Any, prompt: Any, completion: Any, answer: Any, state: Any
    ) -> HLEVerdict | None:
        if not parser.parse_answer(completion):
            return None  # no final answer (empty, or reasoning cut off): nothing to judge
        return parse_verdict(await judge(prompt, completion, answer, state))

    async def judge_correct(
        judge: Any, prompt: Any, completion: Any, answer: Any, state: Any
    ) -> float:
        """1.0 iff the judge's verdict says correct == "yes"."""
        v = await verdict(judge, prompt, completion, answer, state)
        return 1.0 if v is not None and v.correct == "yes" else 0.0

    async def confidence(
        judge: Any, prompt: Any, completion: Any, answer: Any, state: Any
    ) -> float:
        """The model's stated confidence as extracted by the judge, 0-1 (0 without an answer)."""
        v = await verdict(judge, prompt, completion, answer, state)
        return 0.0 if v is None else v.confidence / 100.0

    rubric.add_reward_func(judge_correct, weight=1.0)
    rubric.add_reward_func(confidence, weight=0.0)

    from datasets import Dataset

    dataset = Dataset.from_list(rows)
    if tools:
        return HLEToolEnv(
            dataset=dataset,
            tools=tool_list,
            max_turns=max_turns,
            parser=parser,
            rubric=vf.RubricGroup([rubric, vf.ToolRubric(tools=tool_list)]),
            sampling_args=sampling_args,
        )
    return HLEEnv(
        dataset=dataset,
        parser=parser,
        rubric=rubric,
        sampling_args=sampling_args,
    )
