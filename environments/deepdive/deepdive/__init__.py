"""deepdive: multi-hop web research with search / open / click (/ finish) tools and an LLM judge.

`load_environment()` with no arguments runs fully offline: a BM25 index (SQLite FTS5) over a
bundled corpus of self-written pages about fictional places, people and firms, and the bundled
questions about them. With a web-search API key (`SERPER_API_KEY`) the agent searches the real
web and the questions come from `zai-org/DeepDive`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import verifiers as vf
from verifiers import ConfigError, MissingKeyError

from .env import (
    DeepDiveEnv,
    DeepDiveParser,
    exact_match_reward,
    judge_reward,
    normalize_answer,
    parse_verdict,
    redundancy_penalty,
    search_queries,
)
from .pages import DEFAULT_BASE_URL, Link, Page, html_to_page, load_corpus, markdown_to_page
from .search import (
    HTTPSearchBackend,
    LocalSearchBackend,
    PageFetchError,
    PageNotFoundError,
    SearchAPIError,
    SearchBackend,
    format_search_results,
)

__all__ = [
    "DEFAULT_BASE_URL",
    "DeepDiveEnv",
    "DeepDiveParser",
    "HTTPSearchBackend",
    "Link",
    "LocalSearchBackend",
    "Page",
    "PageFetchError",
    "PageNotFoundError",
    "SearchAPIError",
    "SearchBackend",
    "build_dataset",
    "exact_match_reward",
    "format_search_results",
    "html_to_page",
    "judge_reward",
    "load_corpus",
    "load_environment",
    "markdown_to_page",
    "normalize_answer",
    "parse_verdict",
    "redundancy_penalty",
    "search_queries",
]

logger = logging.getLogger("deepdive")

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "sample.jsonl"
CORPUS = DATA / "corpus"
DATASET = "zai-org/DeepDive"
SERPER_URL = "https://google.serper.dev/search"

TOOL_SUFFIX = (
    "\n\nResearch the question with the tools (search, open, click), then call finish with "
    "your final answer."
)
BOXED_SUFFIX = (
    "\nReason step by step using the given tools and provide the final answer in \\boxed{}."
)


def build_dataset(rows: Any, finish_with_tool: bool = True) -> Any:
    """Environment rows from DeepDive rows (`question`, `answer`, optional `id`): the prompt is
    the question plus the tool instructions, `info` keeps the raw question and id. A row whose
    question or answer is missing or empty is a `ConfigError` naming it."""
    from datasets import Dataset

    suffix = TOOL_SUFFIX if finish_with_tool else BOXED_SUFFIX
    out = []
    for i, row in enumerate(rows):
        where = f"row {i}" + (f" (id {row['id']})" if row.get("id") is not None else "")
        question, answer = row.get("question"), row.get("answer")
        if not isinstance(question, str) or not question.strip():
            raise ConfigError(f"deepdive dataset {where}: 'question' must be a non-empty string")
        if isinstance(answer, int | float) and not isinstance(answer, bool):
            answer = str(answer)
        if not isinstance(answer, str) or not answer.strip():
            raise ConfigError(f"deepdive dataset {where}: 'answer' must be a non-empty string")
        aliases = row.get("aliases") or []
        out.append(
            {
                "question": question.rstrip() + suffix,
                "answer": answer.strip(),
                "info": {
                    "raw_question": question.strip(),
                    "id": "" if row.get("id") is None else str(row["id"]),
                    "aliases": [str(a) for a in aliases],
                },
                "task": "deepdive",
            }
        )
    if not out:
        raise ConfigError("deepdive dataset is empty")
    return Dataset.from_list(out)


def _backend(
    search_backend: Any,
    corpus: str | Path | None,
    search_url: str | None,
    serper_api_key_var: str | None,
    serper_timeout: float,
) -> SearchBackend:
    if isinstance(search_backend, SearchBackend):
        return search_backend
    key = os.environ.get(serper_api_key_var) if serper_api_key_var else None
    if search_backend == "auto":
        search_backend = "http" if key else "local"
    if search_backend == "local":
        return LocalSearchBackend(load_corpus(corpus or CORPUS))
    if search_backend == "http":
        if serper_api_key_var and not key:
            raise MissingKeyError(
                f"search_backend='http' needs an API key in ${serper_api_key_var} "
                "(or serper_api_key_var=None for an endpoint without a key)"
            )
        url = search_url or os.environ.get("DEEPDIVE_SEARCH_URL") or SERPER_URL
        return HTTPSearchBackend(url, key, timeout=serper_timeout)
    raise ConfigError(
        f"search_backend must be 'auto', 'local', 'http' or a SearchBackend, got {search_backend!r}"
    )


def load_environment(
    source: Any = "auto",
    dataset_name: str = DATASET,
    dataset_split: str = "qa_rl",
    dataset_test_size: float = 0.1,
    dataset_seed: int = 2025,
    search_backend: Any = "auto",
    corpus: str | None = None,
    search_url: str | None = None,
    serper_api_key_var: str | None = "SERPER_API_KEY",
    serper_timeout: float = 15.0,
    search_errors: str = "tool",
    max_turns: int = 32,
    max_search_results: int = 10,
    max_response_chars: int = 20_000,
    page_chars: int = 20_000,
    finish_with_tool: bool = False,
    judge_model: str | None = "gpt-4.1-mini",
    judge_base_url: str | None = None,
    judge_api_key_var: str | None = "OPENAI_API_KEY",
    judge_timeout: float = 120.0,
    judge_max_retries: int = 5,
    judge_max_concurrent: int = 128,
    redundancy_penalty_weight: float = 0.0,
    system_prompt: str | None = None,
    debug: bool = False,
) -> vf.Environment:
    """The deepdive environment.

    Args:
        source: Questions. "auto": with the local backend the bundled sample (the corpus only
            answers those), with any other backend `dataset_name` from the hub (an error when
            it cannot be loaded). Also "hub", "sample", a .jsonl/.parquet path or a list of rows.
        dataset_name / dataset_split: The hub dataset (`zai-org/DeepDive`, `qa_rl`).
        dataset_test_size / dataset_seed: Eval split of datasets with 20 rows or more
            (`train_test_split`); smaller ones (the sample) use the same rows for both.
        search_backend: "auto" (HTTP when `$serper_api_key_var` is set, else local), "local",
            "http", or a `SearchBackend` instance.
        corpus: Pages for the local backend: a folder of .md files or a .jsonl of
            {url, title, text}; default the bundled corpus.
        search_url: Serper-compatible endpoint (default `$DEEPDIVE_SEARCH_URL` or Serper).
        serper_api_key_var: Environment variable holding the search API key (None: no key).
        serper_timeout: Seconds per search API request.
        search_errors: "tool" (a failed search API call is an error message to the model) or
            "infra" (the rollout stops with an infrastructure error, masked by trainers).
        max_turns: Model turns per rollout.
        max_search_results: Cap on results per search.
        max_response_chars: Cap on every tool message (longer ones end in "[truncated]").
        page_chars: Cap on each page's text in `open` / `click` results (upstream: 20,000).
        finish_with_tool: Offer `finish(final_answer)` (default off, as upstream); otherwise
            the answer is the \\boxed{} of the model's last message.
        judge_model: Judge model name; None grades by normalised exact match (offline).
        judge_base_url: OpenAI-compatible judge endpoint (None: ``OPENAI_BASE_URL``, else OpenAI).
        judge_api_key_var: Environment variable holding the judge's API key (default
            ``OPENAI_API_KEY``, read at the first judgement; another named variable must be
            set at load; None: the key "EMPTY", for a local judge without one).
        judge_timeout / judge_max_retries / judge_max_concurrent: Per-request timeout,
            retries on 429/5xx/timeouts, concurrent judge calls.
        redundancy_penalty_weight: w in reward = judge − w · redundancy_penalty.
        system_prompt: Optional system message.
        debug: Log every tool result (logger ``deepdive``, level INFO).
    """
    arguments = dict(locals())  # the judge_* ones name the judge (vf.judge_from_arguments)
    backend = _backend(search_backend, corpus, search_url, serper_api_key_var, serper_timeout)
    if isinstance(source, str) and source == "auto":
        # The bundled questions are about the bundled corpus: they only make sense with it, and
        # the real questions need the web.
        source = "sample" if isinstance(backend, LocalSearchBackend) else "hub"
    raw = vf.load_dataset_source(
        dataset_name,
        source=source,
        sample=SAMPLE,
        split=dataset_split,
        required_columns=["question", "answer"],
    )
    dataset = build_dataset(raw, finish_with_tool)
    eval_dataset = dataset
    if dataset_test_size and len(dataset) >= 20:
        split = dataset.train_test_split(test_size=dataset_test_size, seed=dataset_seed)
        dataset, eval_dataset = split["train"], split["test"]

    parser = DeepDiveParser()
    if judge_model is None:
        rubric: vf.Rubric = vf.Rubric(parser=parser)
        rubric.add_reward_func(exact_match_reward, weight=1.0)
    else:
        endpoint = _judge_endpoint(judge_base_url, judge_api_key_var)
        rubric = vf.judge_from_arguments(arguments, parser, endpoint=endpoint)
        rubric.add_reward_func(judge_reward, weight=1.0)
    rubric.add_reward_func(redundancy_penalty, weight=-float(redundancy_penalty_weight))

    return DeepDiveEnv(
        backend,
        dataset=dataset,
        eval_dataset=eval_dataset,
        system_prompt=system_prompt,
        parser=parser,
        rubric=rubric,
        max_turns=max_turns,
        max_search_results=max_search_results,
        max_response_chars=max_response_chars,
        page_chars=page_chars,
        finish_with_tool=finish_with_tool,
        search_errors=search_errors,
        debug=debug,
    )


def _judge_endpoint(base_url: str | None, api_key_var: str | None) -> dict[str, Any]:
    """JudgeRubric arguments naming the judge's endpoint and key, with upstream's meanings."""
    if api_key_var == "OPENAI_API_KEY":
        # The SDK's default client reads the same variable, but at the first judgement: the
        # environment loads (and runs without a judge call) where the key is not set.
        return {"judge_base_url": base_url} if base_url is not None else {}
    return vf.judge_endpoint(base_url, api_key_var)  # None: the key "EMPTY" (upstream's rule)
