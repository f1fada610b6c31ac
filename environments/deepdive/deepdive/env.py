"""The DeepDive rollout: a research agent with search / open / click / finish tools."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import verifiers as vf
from verifiers import error_record

from .pages import Page
from .search import (
    PageFetchError,
    PageNotFoundError,
    SearchAPIError,
    SearchBackend,
    format_search_results,
)

logger = logging.getLogger("deepdive")

__all__ = [
    "DeepDiveEnv",
    "DeepDiveParser",
    "exact_match_reward",
    "judge_reward",
    "normalize_answer",
    "parse_verdict",
    "redundancy_penalty",
    "search_queries",
]

TRUNCATED = "\n...\n[truncated]"  # upstream's sentinel


def truncate(text: str, limit: int) -> str:
    if limit > 0 and len(text) > limit:
        return text[:limit] + TRUNCATED
    return text


class DeepDiveEnv(vf.StatefulToolEnv):
    """A `StatefulToolEnv` whose tools browse through a `SearchBackend`.

    Per rollout the state holds the last search (`last_search_result`, which `click` opens
    by index), the pages read so far (`page_cache`) and, once `finish` is called,
    `final_answer`. Tool failures (bad result index, empty query) come back to the model as tool
    messages, and a page that cannot be fetched is an error text in its place. A search-API failure does too, unless `search_errors="infra"`: then the rollout
    stops with an infrastructure error (masked by a trainer) instead of going on without search.
    """

    def __init__(
        self,
        backend: SearchBackend,
        *,
        max_turns: int = 32,
        max_search_results: int = 10,
        max_response_chars: int = 20_000,
        page_chars: int = 20_000,
        finish_with_tool: bool = True,
        search_errors: str = "tool",
        debug: bool = False,
        **kwargs: Any,
    ) -> None:
        if search_errors not in ("tool", "infra"):
            raise vf.ConfigError(f"search_errors must be 'tool' or 'infra', got {search_errors!r}")
        if page_chars <= 0 or max_search_results <= 0:
            raise vf.ConfigError("page_chars and max_search_results must be positive")
        super().__init__(tools=[], max_turns=max_turns, **kwargs)
        self.backend = backend
        self.max_search_results = max_search_results
        self.max_response_chars = max_response_chars
        self.page_chars = page_chars
        self.finish_with_tool = finish_with_tool
        self.search_errors = search_errors
        self.debug = debug
        self.add_tool(self.search, args_to_skip=["state"])
        self.add_tool(self.open, args_to_skip=["state"])
        self.add_tool(self.click, args_to_skip=["state"])
        if finish_with_tool:
            self.add_tool(self.finish, args_to_skip=["state"])

    # -- tools (upstream's set and semantics: prime-environments deepdive, 2025-11) ---------
    async def search(self, query: str, num_results: int = 10, state: Any = None) -> str:
        """Search the web. Results are numbered from 0 (Result 0, Result 1, ...) with their
        URL and snippet; click(result_indices) opens them by number.

        Args:
            query: What to search for, in a few keywords.
            num_results: How many results to list (at most 10).
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError("Search query must be a non-empty string.")
        n = max(1, min(int(num_results), self.max_search_results))
        try:
            data = await self.backend.search(query.strip(), n)
        except SearchAPIError as e:
            if self.search_errors == "infra":
                state["search_api_error"] = e
            raise
        state["last_search_result"] = data
        return truncate(format_search_results(query.strip(), data, n), self.max_response_chars)

    async def open(self, urls: list[str], state: Any = None) -> str:
        """Read web pages. Each page comes under its own heading, "# Open Result i", in the
        order given; the links of a page are listed at its end.

        Args:
            urls: The URLs of the pages to read, e.g. from search results or page links.
        """
        if isinstance(urls, str):  # one URL given as a string, not a list: still one page
            urls = [urls]
        if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
            raise ValueError("urls must be a non-empty list of URL strings")
        pages = await asyncio.gather(*(self._read(url, state) for url in urls))
        return "\n\n".join(f"# Open Result {i}\n{text}" for i, text in enumerate(pages))

    async def click(self, result_indices: list[int], state: Any = None) -> str:
        """Read results of the last search by their numbers (Result 0 is the first). Each
        comes under its own heading, "# Click Result i", in the order given.

        Args:
            result_indices: Numbers of the results of the last search to open.
        """
        if isinstance(result_indices, int) and not isinstance(result_indices, bool):
            result_indices = [result_indices]
        if not isinstance(result_indices, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in result_indices
        ):
            raise ValueError("result_indices must be a list of result numbers")
        last = state.get("last_search_result")
        if last is None:
            raise ValueError("No previous search results to open!")
        organic = [r for r in last.get("organic") or [] if isinstance(r, dict)]
        if not all(0 <= i < len(organic) for i in result_indices):
            raise ValueError("Result index out of range")
        pages = await asyncio.gather(
            *(self._read(str(organic[i].get("link", "")), state) for i in result_indices)
        )
        return "\n\n".join(f"# Click Result {i}\n{text}" for i, text in enumerate(pages))

    async def finish(self, final_answer: str, state: Any = None) -> str:
        """Provide the final answer to the task. Stops execution.

        Args:
            final_answer: The answer to the question, as short as possible (a name, a number).
        """
        state["final_answer"] = final_answer
        return final_answer

    async def _read(self, url: str, state: Any) -> str:
        """One page as the model reads it; a page that cannot be fetched is an error text in
        its place (as upstream), so the other pages of the same call still arrive."""
        cache: dict[str, Page] = state.setdefault("page_cache", {})
        page = cache.get(url)
        if page is None:
            try:
                page = await self.backend.fetch(url)
            except (PageNotFoundError, PageFetchError) as e:
                return f"Error fetching {url}: {e}"
            cache[url] = cache[page.url] = page
        text = f"Title: {page.title}\nURL: {page.url}\n\n{page.text}"
        if page.links:
            text += "\n\nLinks (open(urls) reads them):\n" + "\n".join(
                f"[{i}] {link.text} -> {link.url}" for i, link in enumerate(page.links, 1)
            )
        return truncate(text, self.page_chars)

    def update_tool_args(
        self,
        tool_name: str,
        tool_args: dict[str, Any],
        messages: vf.Messages,
        state: vf.State,
        **kwargs: Any,
    ) -> dict[str, Any]:
        return {**tool_args, "state": state}

    # -- the loop ------------------------------------------------------------------------------
    async def env_response(
        self, messages: vf.Messages, state: vf.State, **kwargs: Any
    ) -> vf.Messages:
        reply = await super().env_response(messages, state, **kwargs)
        if self.debug:  # upstream's debug flag: show each tool result as it is produced
            for message in reply if isinstance(reply, list) else [reply]:
                logger.info("deepdive tool result: %s", _text(message)[:2000])
        failure = state.pop("search_api_error", None)
        if failure is not None:
            state["error"] = error_record(failure, "tool")
            state["final_env_response"] = reply
        elif "final_answer" in state:
            state["final_env_response"] = reply
        return reply

    @vf.stop(priority=50)
    async def has_submitted(self, state: vf.State) -> bool:
        return "final_answer" in state and state.get("final_env_response") is not None

    def state_to_output(
        self, state: vf.State, state_columns: list[str] | None = None
    ) -> vf.RolloutOutput:
        out = super().state_to_output(state, state_columns)
        out["final_answer"] = state.get("final_answer")  # type: ignore[typeddict-unknown-key]
        return out


# -- the answer --------------------------------------------------------------------------------
class DeepDiveParser(vf.Parser):
    """The model's final answer in a completion.

    With the finish tool: the `final_answer` of the last `finish` call, if the last assistant
    message made one. Without a finish call, an answer counts only when the last assistant
    message calls no tools (the model stopped by itself): its last `\\boxed{...}` after any
    `</think>` (strict: no box, no answer). A rollout cut off by `max_turns` while still calling
    tools has no answer (""), as has an unclosed `<think>`.
    """

    def parse(self, text: str) -> str:
        return vf.extract_boxed_answer(vf.strip_reasoning(text), strict=True).strip()

    def parse_answer(self, completion: Any) -> str:
        if isinstance(completion, str):
            return self.parse(completion)
        assistants = [m for m in completion or [] if _get(m, "role") == "assistant"]
        if not assistants:
            return ""
        last = assistants[-1]
        calls = _get(last, "tool_calls") or []
        if not calls:
            return self.parse(_text(last))
        for call in reversed(calls):
            name, args = _call_parts(call)
            if name == "finish":
                answer = args.get("final_answer") if isinstance(args, dict) else None
                return answer.strip() if isinstance(answer, str) else ""
        return ""


def _get(message: Any, key: str) -> Any:
    return message.get(key) if isinstance(message, dict) else getattr(message, key, None)


def _text(message: Any) -> str:
    content = _get(message, "content")
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _call_parts(call: Any) -> tuple[str, Any]:
    fn = _get(call, "function") or {}
    name = _get(fn, "name") or ""
    raw = _get(fn, "arguments")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raw = None
    return name, raw


def search_queries(completion: Any) -> list[str]:
    """The query of the first tool call of each assistant message, when that call is a search."""
    queries = []
    for message in completion or []:
        if _get(message, "role") != "assistant":
            continue
        calls = _get(message, "tool_calls") or []
        if not calls:
            continue
        name, args = _call_parts(calls[0])
        if name == "search" and isinstance(args, dict) and isinstance(args.get("query"), str):
            queries.append(args["query"])
    return queries


def redundancy_penalty(completion: Any) -> float:
    """Sum of the Jaccard similarities of the word sets (`set(query.split(" "))`) of every
    unordered pair of search queries, divided by n·(n−1): half the mean pairwise similarity,
    at most 0.5; 0 with fewer than two queries. ["a b", "a b", "c"] → (1 + 0 + 0) / 6."""
    words = [set(q.split(" ")) for q in search_queries(completion)]
    n = len(words)
    if n < 2:
        return 0.0
    total = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            union = words[i] | words[j]
            total += len(words[i] & words[j]) / len(union) if union else 0.0
    return total / (n * (n - 1))


_VERDICT = re.compile(r"[a-z]+")


def parse_verdict(verdict: str) -> float:
    """1.0 when the first word of the judge's reply after its reasoning (`vf.strip_reasoning`)
    is "yes", 0.0 when it is "no"; anything else (an unclosed `<think>` too) is a judge
    failure (`vf.JudgeError`), never a silent score."""
    text = vf.strip_reasoning(verdict).strip().lower()
    m = _VERDICT.search(text)
    word = m.group(0) if m else ""
    if word == "yes":
        return 1.0
    if word == "no":
        return 0.0
    raise vf.JudgeError(f"judge verdict is neither yes nor no: {verdict[:200]!r}")


async def judge_reward(
    judge: Any, prompt: Any, completion: Any, answer: Any, state: Any, info: Any
) -> float:
    """1 if the judge says the final answer matches the gold answer, else 0; no answer: 0
    without asking. The judge sees the raw question, the dataset's gold `answer` as the ground
    truth and the model's final answer as the response."""
    parser = DeepDiveParser()
    if not parser.parse_answer(completion):
        return 0.0
    question = (info or {}).get("raw_question") or prompt
    verdict = await judge(question, completion, answer, state)
    return parse_verdict(verdict)


_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """Lower case, accents and punctuation dropped, articles (a, an, the) removed."""
    text = unicodedata.normalize("NFKD", text or "")
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match_reward(completion: Any, answer: Any, info: Any) -> float:
    """The offline grader (`judge_model=None`): 1 if the normalised final answer equals the
    normalised gold answer or one of `info["aliases"]`, else 0."""
    response = normalize_answer(DeepDiveParser().parse_answer(completion))
    if not response:
        return 0.0
    golds: Sequence[str] = [answer, *((info or {}).get("aliases") or [])]
    return float(any(response == normalize_answer(str(g)) for g in golds))
