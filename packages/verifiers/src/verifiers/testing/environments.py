"""What environment packages' tests need again and again: a finished rollout's state to score,
an environment loaded once per test module, the local bubblewrap sandbox provider, an attack
table of programs graded by a code environment, upstream's published files served on loopback
(for `vf.PromptSource` arguments), an aiohttp app on loopback, a judge endpoint that records
the key it was sent, and a hub dataset read offline. Each is the real thing on 127.0.0.1;
nothing here stands in for the SDK."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifiers.testing.file_server import serve_folder
from verifiers.testing.hub_dataset import write_hub_dataset
from verifiers.testing.server import ScriptedServer

if TYPE_CHECKING:
    import pytest
    from aiohttp import web

    from verifiers.utils.published_prompts import PromptSource

__all__ = [
    "assert_replies_scored",
    "bwrap_provider",
    "environment_fixture",
    "evaluate_against_script",
    "grade_program_table",
    "jsonl_rows",
    "key_recording_judge",
    "offline_hub",
    "point_at_local_copy",
    "published_files",
    "rollout_state",
    "row_state",
    "score_completion",
    "score_rollouts",
    "scripted_eval",
    "serve_app",
    "write_jsonl",
]


def jsonl_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON-lines file (a bundled sample, a table of rows), blank lines skipped."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Write `rows` to `path` as JSON lines (its folder made if missing): how an environment's
    ``scripts/make_sample.py`` writes the bundled sample that `jsonl_rows` reads back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(dict(row)) + "\n" for row in rows))


def assert_replies_scored(
    score: Callable[[str], float], right: Iterable[str], wrong: Iterable[str]
) -> None:
    """Each reply of a table's `right` scores 1.0 and each of its `wrong` 0.0 under `score`;
    an AssertionError names the first reply that does not."""
    for reply in right:
        assert score(reply) == 1.0, f"a right reply did not score 1.0: {reply!r}"
    for reply in wrong:
        assert score(reply) == 0.0, f"a wrong reply did not score 0.0: {reply!r}"


def rollout_state(
    prompt: str | list[dict[str, Any]],
    completion: str,
    answer: str,
    *,
    task: str,
    info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A finished single-turn rollout, as `rubric.score_rollout` receives it: `prompt` (the
    messages, or the text of one user message), the model's `completion` text, the gold
    `answer`, the environment's `task` name and the row's `info`."""
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
    return {
        "input": {"prompt": messages, "answer": answer, "example_id": 0},
        "prompt": messages,
        "completion": [{"role": "assistant", "content": completion}],
        "answer": answer,
        "info": {} if info is None else info,
        "task": task,
        "example_id": 0,
        "metrics": {},
        "error": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }


def row_state(row: Mapping[str, Any], completion: str) -> dict[str, Any]:
    """A finished rollout of a dataset row of an environment (its ``prompt``, ``answer``,
    ``task`` and ``info``) whose model answered `completion`, for `rubric.score_rollout`."""
    return rollout_state(
        row["prompt"], completion, row["answer"], task=row["task"], info=row["info"]
    )


def environment_fixture(load_environment: Callable[..., Any], **args: Any) -> Any:
    """A module-scoped pytest fixture (assign it to the fixture's name): the environment
    ``load_environment(**args)``, built once for the module, its rubric torn down (the grading
    pool stopped) after the module's last test."""
    import pytest

    @pytest.fixture(scope="module")
    def environment() -> Iterator[Any]:
        env = load_environment(**args)
        yield env
        asyncio.run(env.rubric.teardown())

    return environment


@asynccontextmanager
async def bwrap_provider() -> AsyncIterator[Any]:
    """The local bubblewrap sandbox provider, closed after, with every sandbox it started
    gone. Where it cannot run (root, bubblewrap, cgroups) the test fails, naming why: sandbox
    tests fail there, they do not skip."""
    from verifiers.sandbox import BwrapProvider

    reason = BwrapProvider.unavailable_reason()
    assert reason is None, f"the local bwrap sandbox cannot run here: {reason}"
    provider = BwrapProvider()
    try:
        yield provider
    finally:
        await provider.close()
    assert provider.live == 0


def grade_program_table(
    table: Sequence[tuple[Any, ...]],
    *,
    at_least: int,
    environment: Callable[[Any], Any],
    name_of: Callable[[dict[str, Any]], str],
    eval_split: bool = False,
) -> dict[str, dict[str, Any]]:
    """An attack table of a code environment graded once: `table` has rows ``(name, tests,
    program, expected reward, ...)``, at least `at_least` of them, each named once;
    ``environment(provider)`` builds the environment over the table's rows on the local bwrap
    provider, and ``name_of(row)`` reads a dataset row's table name back. Every program is
    scored at once in real sandboxes (`score_fenced_programs`); returns each name's state."""
    from verifiers.testing.programs import score_fenced_programs

    names = [row[0] for row in table]
    assert len(table) >= at_least and len(set(names)) == len(table), "rows missing or renamed"
    programs = {row[0]: row[2] for row in table}

    async def grade() -> dict[str, dict[str, Any]]:
        async with bwrap_provider() as provider:
            env = environment(provider)
            rows = env.get_eval_dataset() if eval_split else env.get_dataset()
            return await score_fenced_programs(
                env, rows, lambda row: (name_of(row), programs[name_of(row)])
            )

    return asyncio.run(grade())


async def score_completion(
    env: Any, completion: str, answer: str, question: str = "Solve it.", *, task: str
) -> dict[str, Any]:
    """The state of a single-turn rollout of `env` (`rollout_state`) after its rubric scored
    it (the pool is left running: tear it down once, after the last)."""
    state = rollout_state(question, completion, answer, task=task)
    await env.rubric.score_rollout(state)
    return state


async def score_rollouts(scored: Sequence[tuple[Any, dict[str, Any]]]) -> None:
    """Score each ``(environment, state)`` pair with the environment's rubric, all at once,
    then tear every rubric used down (its grading pool), whatever happened."""
    rubrics = {id(env.rubric): env.rubric for env, _ in scored}
    try:
        await asyncio.gather(*(env.rubric.score_rollout(state) for env, state in scored))
    finally:
        for rubric in rubrics.values():
            await rubric.teardown()


@contextmanager
def published_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: Mapping[str, str]
) -> Iterator[str]:
    """Serve `files` (path on the site -> text) from ``tmp_path/site`` on loopback while the
    block runs, with a prompt cache of this test's own (``VF_PROMPT_CACHE``, empty at first);
    yields the site's base URL (no trailing slash)."""
    site = tmp_path / "site"
    for relative, text in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.setenv("VF_PROMPT_CACHE", str(tmp_path / "cache"))
    with serve_folder(site) as base:
        yield base


def point_at_local_copy(
    monkeypatch: pytest.MonkeyPatch, owner: object, attr: str, copy: Path, text: str
) -> PromptSource:
    """Write `text` to `copy` and point ``owner.attr`` (a `vf.PromptSource`) at it, as a
    ``file://`` URL; returns the source as it was, for checking where it points upstream."""
    source: PromptSource = getattr(owner, attr)
    copy.write_text(text)
    monkeypatch.setattr(owner, attr, dataclasses.replace(source, url=copy.as_uri()))
    return source


@asynccontextmanager
async def serve_app(app: web.Application) -> AsyncIterator[str]:
    """Run the aiohttp `app` on a free port of 127.0.0.1 while the block runs; yields its base
    URL (``http://127.0.0.1:PORT``)."""
    from aiohttp import web

    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def key_recording_judge(reply: str) -> AsyncIterator[tuple[str, list[str | None]]]:
    """An OpenAI-compatible chat endpoint answering every request with `reply`; yields its
    base URL (``.../v1``) and the list of ``Authorization`` headers it receives (None where a
    request had none), to check which key a judge client sends."""
    from aiohttp import web

    seen: list[str | None] = []

    async def completions(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization"))
        body = await request.json()
        message = {"role": "assistant", "content": reply}
        return web.json_response(
            {
                "id": "judge",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", ""),
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            }
        )

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    async with serve_app(app) as base:
        yield f"{base}/v1", seen


def offline_hub(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    configs: Iterable[str],
    splits: Iterable[str],
    row: Mapping[str, Any],
) -> Path:
    """A hub-style dataset at ``tmp_path/hub`` read offline (``HF_HUB_OFFLINE``, a cache of
    this test's own) with one row per (config, split): `row` with its ``question`` set to
    ``"{config}-{split} problem"``, so a test can see which one was loaded."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / ".cache"))
    split_names = list(splits)
    tables: dict[str | tuple[str, str], list[dict[str, Any]]] = {
        (c, s): [{**row, "question": f"{c}-{s} problem"}] for c in configs for s in split_names
    }
    return write_hub_dataset(tmp_path / "hub", tables)


async def evaluate_against_script(
    env: Any, responder: Callable[[dict[str, Any]], Any], **evaluate_args: Any
) -> Any:
    """``env.evaluate(client, "m", **evaluate_args)`` with a client of a `ScriptedServer`
    answering with `responder` (retries after 10 ms, not seconds); then the client is closed
    and `env` torn down, whatever happened. Returns what `evaluate` returned."""
    from verifiers.client import OpenAIClient

    async with ScriptedServer(responder) as server:
        client = OpenAIClient(server.base_url, api_key="x", retry_base_delay=0.01)
        try:
            return await env.evaluate(client, "m", **evaluate_args)
        finally:
            await client.close()
            await env.teardown()


def scripted_eval(
    run: Callable[..., tuple[list[dict[str, Any]], dict[str, Any]]],
    cwd: Path,
    env_id: str,
    responder: Callable[[dict[str, Any]], Any],
    options: str,
    env_args: Mapping[str, Any],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """vf-eval of `env_id` with `options` (split on spaces, e.g. ``"-n 8 -r 2"``) and
    ``--env-args env_args``, in `cwd`, through `run` (`run_vf_eval`, or a test suite's
    in-process runner taking the same arguments) against a `ScriptedServer` answering with
    `responder`; returns (result rows, metadata)."""
    with ScriptedServer(responder) as server:
        args = [*options.split(), "--env-args", json.dumps(dict(env_args))]
        return run(cwd, env_id, server.base_url, *args)
