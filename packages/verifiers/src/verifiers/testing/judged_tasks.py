"""Checks that every environment built with `vf.JudgedBoxedTask` (i3-math, i3-science) passes,
written once: upstream's arguments (research-environments b9cb04a / prime-environments
2025-12: dataset name, subset, split, shuffle seed, the keyless judge endpoint) and the
published prompts loaded at run time (CompassVerifier's ``CV_COT_PROMPT`` as the judge's,
upstream's ``INSTRUCTION_PROMPT``).

Each check is ``async check(package, tmp_path, monkeypatch)`` for the environment's package
(its ``load_environment``, ``TASK``, ``COMPASS_VERIFIER_COT`` and ``INSTRUCTION_PROMPT``; a
check pointing a published source elsewhere replaces ``package.TASK``, which
``load_environment`` builds from); `JUDGED_TASK_CHECKS` lists them for one parametrized test
per environment.
Publications are loopback copies in upstream's layout holding placeholder wording written for
these checks; the judge is a scripted OpenAI-compatible server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import math
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from verifiers.errors import ConfigError
from verifiers.testing.environments import (
    jsonl_rows,
    key_recording_judge,
    offline_hub,
    published_files,
    rollout_state,
    score_rollouts,
)
from verifiers.testing.responders import last_text
from verifiers.testing.server import ScriptedServer

if TYPE_CHECKING:
    import pytest

__all__ = [
    "JUDGED_TASK_CHECKS",
    "LOADER_ARGUMENTS",
    "UPSTREAM_JUDGED_DEFAULTS",
    "SdkGradingTable",
    "judged_environment",
    "problems_of",
    "sdk_grading_table",
    "signature_defaults",
    "table_messages",
    "verdict_judge",
]

Check = Callable[[ModuleType, Path, "pytest.MonkeyPatch"], Awaitable[None]]

#: CompassVerifier's ``src/prompts.py`` in its layout (a ``CV_COT_PROMPT`` constant with the
#: published placeholder names and format), with placeholder wording
_COMPASS_PUBLISHED = '''\
from transformers import AutoTokenizer  # the published module imports heavy things

CV_PROMPT = """Short form. {question} {gold_answer} {llm_response}"""

CV_COT_PROMPT = """PLACEHOLDER GRADER TEXT.
Grades: \\\\boxed{{A}} correct, \\\\boxed{{B}} incorrect, \\\\boxed{{C}} invalid.
<Original Question Begin>
{question}
<Original Question End>
<Standard Answer Begin>
{gold_answer}
<Standard Answer End>
<Candidate's Answer Begin>
{llm_response}
<Candidate's Answer End>
Final Judgment: \\\\boxed{{A/B/C}} - <LABEL>
"""
'''
_NOBODY = "http://127.0.0.1:9/v1"  # a port nothing listens on
_COMPASS_PATH = "open-compass/CompassVerifier/pinned/src/prompts.py"


@contextmanager
def _compass_published(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """`_COMPASS_PUBLISHED` on loopback with the task's official judge prompt (CompassVerifier's)
    pointed at it; yields the served file (remove it to make the publication unreachable)."""
    with published_files(tmp_path, monkeypatch, {_COMPASS_PATH: _COMPASS_PUBLISHED}) as site:
        _point_judge_prompt_at(package, monkeypatch, f"{site}/{_COMPASS_PATH}")
        yield tmp_path / "site" / _COMPASS_PATH


def _point_judge_prompt_at(package: ModuleType, monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    """Replace ``package.TASK`` by one whose official judge prompt is read from ``url``."""
    moved = dataclasses.replace(package.COMPASS_VERIFIER_COT, url=url)
    task = dataclasses.replace(package.TASK, official_judge_prompts=[moved])
    monkeypatch.setattr(package, "TASK", task)


def _compass_judge(body: dict[str, Any]) -> str:
    """A judge reading the candidate out of the CompassVerifier prompt it was sent."""
    text = last_text(body)
    assert text.startswith("PLACEHOLDER GRADER TEXT."), text  # the loaded prompt is used
    candidate = text.split("<Candidate's Answer Begin>\n", 1)[1].split("\n<Candidate's", 1)[0]
    return {
        "\\text{one half}": "Analysis: the same value.\nFinal Judgment: \\boxed{A} - CORRECT",
        "\\text{two}": "Analysis: differs.\nFinal Judgment: \\boxed{B} - INCORRECT",
        "\\text{unsure}": "Final Judgment: \\boxed{A} - CORRECT, or maybe not",
    }.get(candidate, "Final Judgment: \\boxed{C} - REFUSAL")


#: The arguments INTELLECT-3's judged environments take from upstream, with upstream's defaults
#: (prime-environments i3_math / i3_science, 2025-12); each adds its own subset (and key).
UPSTREAM_JUDGED_DEFAULTS: dict[str, Any] = {
    "dataset_name": "PrimeIntellect/INTELLECT-3-RL",
    "dataset_split": "train",
    "dataset_shuffle": False,
    "min_avg_reward": 0.0,
    "max_avg_reward": 1.0,
    "judge_model": None,
    "judge_base_url": None,
    "judge_sampling_args": {},
    "judge_api_key_var": None,
}


#: ``load_environment``'s arguments in order, as every judged environment takes them (the order
#: i3-math and i3-science wrote out before `vf.JudgedBoxedTask.loader` generated it), with the
#: defaults they share; each environment's ``TASK`` gives the rest.
LOADER_ARGUMENTS: dict[str, Any] = {
    "source": "auto",
    "dataset_name": None,
    "dataset_subset": None,
    "dataset_split": "train",
    "dataset_shuffle": False,
    "seed": 42,
    "difficulty_key": None,
    "min_avg_reward": 0.0,
    "max_avg_reward": 1.0,
    "keep_unrated": False,
    "instruction_prompt": None,
    "system_prompt": None,
    "max_answer_chars": 500,
    "require_think_close": False,
    "math_verify_timeout": 5.0,
    "math_verify_workers": None,
    "numeric_rel_tol": 0.0,
    "judge_model": None,
    "judge_base_url": None,
    "judge_api_key_var": None,
    "judge_sampling_args": None,
    "judge_timeout": 1200.0,
    "judge_max_concurrent": 256,
    "judge_prompt": None,
}


def signature_defaults(
    load_environment: Callable[..., Any], names: Iterable[str]
) -> dict[str, Any]:
    """The defaults of `load_environment`'s arguments `names`, as upstream's tests read them
    (``inspect.signature``); a ``judge_sampling_args`` of None reads as ``{}``, its meaning."""
    params = inspect.signature(load_environment).parameters
    ours = {name: params[name].default for name in names}
    if "judge_sampling_args" in ours:
        ours["judge_sampling_args"] = ours["judge_sampling_args"] or {}
    return ours


def problems_of(env: Any) -> list[str]:
    """The problems of the rows, without the instruction line before them."""
    return [q.split("\n\n", 1)[1] for q in env.dataset["question"]]


def _refusal(call: Callable[[], object], error: type[Exception]) -> str:
    """The message of the `error` that `call()` raises; an AssertionError when it returns."""
    try:
        call()
    except error as e:
        return str(e)
    raise AssertionError(f"{call} was accepted")


def _task_name(package: ModuleType) -> str:
    return package.__name__.replace("_", "-")


# -- the published prompts ----------------------------------------------------------------------


async def check_official_source_is_compass_verifiers_file(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = package.COMPASS_VERIFIER_COT
    assert package.TASK.official_judge_prompts == [src]
    assert src.url.startswith("https://raw.githubusercontent.com/open-compass/CompassVerifier/")
    assert src.url.endswith("/src/prompts.py") and src.name == "CV_COT_PROMPT"
    assert dict(src.placeholders) == {"gold_answer": "answer", "llm_response": "response"}


async def check_official_judge_prompt_is_loaded_and_its_verdicts_read(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge gets the published template with the gold answer in its slot; a label followed
    by more text is no verdict."""
    with _compass_published(package, tmp_path, monkeypatch), ScriptedServer(_compass_judge) as srv:
        env = package.load_environment(
            source="sample",
            math_verify_workers=1,
            judge_model="judge",
            judge_base_url=srv.base_url,
            judge_prompt="official",
        )
        template = env.rubric.judge_rubric.judge_prompt
        assert "{answer}" in template and "{response}" in template
        assert "{gold_answer}" not in template and "\\boxed{{A}}" in template
        cases = [
            ("\\boxed{\\text{one half}}", 1.0),
            ("\\boxed{\\text{two}}", 0.0),
            ("\\boxed{\\text{unsure}}", 0.0),
        ]
        task = _task_name(package)
        states = [rollout_state("Solve it.", text, "1/2", task=task) for text, _ in cases]
        await score_rollouts([(env, s) for s in states])
        for (text, reward), s in zip(cases, states, strict=True):
            assert s["error"] is None and s["reward"] == reward, text
        assert [s["judge_verdict"] for s in states] == ["A", "B", None]
        sent = last_text(srv.requests[0])
        assert "<Standard Answer Begin>\n1/2\n<Standard Answer End>" in sent
        assert "\\boxed{A} correct" in sent  # the {{ }} escapes were unescaped once


async def check_official_prompt_is_cached_for_offline_runs(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _compass_published(package, tmp_path, monkeypatch) as published:
        load = package.load_environment
        first = load(source="sample", judge_model="j", judge_prompt="official")
        published.unlink()  # the publication is gone (or the network is): the cache is read
        again = load(source="sample", judge_model="j", judge_prompt="official")
    assert again.rubric.judge_rubric.judge_prompt == first.rubric.judge_rubric.judge_prompt


async def check_unreachable_publication_is_a_config_error_naming_the_way_out(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VF_PROMPT_CACHE", str(tmp_path / "empty-cache"))
    _point_judge_prompt_at(package, monkeypatch, "http://127.0.0.1:9/src/prompts.py")
    message = _refusal(
        functools.partial(
            package.load_environment, source="sample", judge_model="j", judge_prompt="official"
        ),
        ConfigError,
    )
    assert "127.0.0.1:9/src/prompts.py (CV_COT_PROMPT): unreachable" in message
    assert message.endswith("allow network access, or pass the template text as judge_prompt")


async def check_own_judge_template_and_misuse(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load = package.load_environment
    own = "Is {response} equal to {answer}?"
    env = load(source="sample", judge_model="j", judge_prompt=own)
    assert env.rubric.judge_rubric.judge_prompt == own
    refused = [
        (dict(judge_model="j", judge_prompt="Grade {answer}."), "lacks the placeholders"),
        (dict(judge_prompt="official"), "judge_prompt needs judge_model"),
    ]
    for args, why in refused:
        message = _refusal(functools.partial(load, source="sample", **args), ConfigError)
        assert why in message, message


async def check_official_instruction_is_upstreams_constant_loaded_at_run_time(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """instruction_prompt="official": the INSTRUCTION_PROMPT constant of upstream's module
    (research-environments b9cb04a), read with ast and never executed; None is ours."""
    name = package.__name__
    source = package.TASK.official_instruction
    copy = tmp_path / f"{name}.py"
    copy.write_text(
        'import verifiers as vf\n\nINSTRUCTION_PROMPT = "PLACEHOLDER UPSTREAM LINE."\n'
        "def load_environment(**kwargs):\n    raise SystemExit('never executed')\n"
    )
    moved = dataclasses.replace(source, url=copy.as_uri())
    monkeypatch.setattr(
        package, "TASK", dataclasses.replace(package.TASK, official_instruction=moved)
    )
    upstream = f"/b9cb04acef3b5608a0e05883af7f329c0c69dbaa/environments/{name}/{name}.py"
    assert source.name == "INSTRUCTION_PROMPT"
    assert source.url is not None and source.url.endswith(upstream), source.url
    load = package.load_environment
    official = load(source="sample", instruction_prompt="official")
    ours = load(source="sample").dataset[0]["question"]
    assert ours.startswith(package.INSTRUCTION_PROMPT + "\n\n")
    problem = ours.removeprefix(package.INSTRUCTION_PROMPT)
    assert official.dataset[0]["question"] == "PLACEHOLDER UPSTREAM LINE." + problem
    own = load(source="sample", instruction_prompt="Just solve it.")
    assert own.dataset[0]["question"] == "Just solve it." + problem


# -- upstream's arguments -----------------------------------------------------------------------
async def check_signature_reads_as_if_written_out(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The generated signature: `LOADER_ARGUMENTS` in order, each by position or name, with the
    task's dataset, difficulty key, judge prompt and own defaults; a positional call loads what
    the named one does; a repeated or unknown argument is a TypeError naming the function."""
    params = inspect.signature(package.load_environment).parameters
    assert list(params) == list(LOADER_ARGUMENTS)
    assert {p.kind for p in params.values()} == {inspect.Parameter.POSITIONAL_OR_KEYWORD}
    task = package.TASK
    own = {
        "dataset_name": task.dataset_name,
        "difficulty_key": task.difficulty_key,
        "judge_prompt": package.JUDGE_PROMPT,
        **task.defaults,
    }
    assert {name: p.default for name, p in params.items()} == {**LOADER_ARGUMENTS, **own}
    load = package.load_environment
    assert problems_of(load("sample", task.dataset_name, own["dataset_subset"], "train", True)) == (
        problems_of(load(source="sample", dataset_shuffle=True))
    )
    refused: list[tuple[tuple[Any, ...], dict[str, Any], str]] = [
        (("sample",), {"source": "hub"}, "load_environment() multiple values for argument"),
        ((), {"diamond": False}, "load_environment() got an unexpected keyword argument"),
    ]
    for args, kwargs, why in refused:
        message = _refusal(functools.partial(load, *args, **kwargs), TypeError)
        assert why in message, message


async def check_dataset_shuffle_reorders_with_upstream_seed(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load = package.load_environment
    plain = problems_of(load(source="sample"))
    shuffled = problems_of(load(source="sample", dataset_shuffle=True))
    assert shuffled != plain and sorted(shuffled) == sorted(plain)
    assert problems_of(load(source="sample", dataset_shuffle=True, seed=42)) == shuffled


async def check_dataset_name_subset_split_pick_the_rows(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two configs (the default subset and another) with two splits each."""
    subset = inspect.signature(package.load_environment).parameters["dataset_subset"].default
    hub = offline_hub(tmp_path, monkeypatch, (subset, "other"), ("train", "test"), {"answer": "1"})

    def load(**kw: Any) -> list[str]:
        return problems_of(
            package.load_environment(source="hub", dataset_name=str(hub), difficulty_key=None, **kw)
        )

    assert load() == [f"{subset}-train problem"]
    assert load(dataset_subset="other", dataset_split="test") == ["other-test problem"]


async def check_judge_without_key_variable_sends_empty_like_upstream(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through a real HTTP server: a judge endpoint without a key variable is sent the key
    "EMPTY" (not OPENAI_API_KEY), a named variable's key otherwise; sampling args pass."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-judge")
    async with key_recording_judge("Final Judgment: \\boxed{A}") as (url, seen):
        env = package.load_environment(
            source="sample", judge_model="j", judge_base_url=url,
            judge_sampling_args={"temperature": 0.3},
        )  # fmt: skip
        judge = env.rubric.judge_rubric
        assert judge.judge_sampling_args == {"temperature": 0.3}
        prompt = [{"role": "user", "content": "Solve it."}]
        completion = [{"role": "assistant", "content": "\\boxed{\\text{one half}}"}]
        try:
            assert "boxed{A}" in await judge.judge(prompt, completion, "1/2", {})
        finally:
            await judge.teardown()
    assert seen == ["Bearer EMPTY"]
    monkeypatch.setenv("I3_JUDGE_KEY", "sk-judge")
    named = package.load_environment(
        source="sample", judge_model="j", judge_api_key_var="I3_JUDGE_KEY"
    )
    assert named.rubric.judge_rubric.judge_client.api_key == "sk-judge"


async def check_unknown_argument_is_refused_naming_the_accepted_ones(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import verifiers as vf

    try:
        vf.load_environment(_task_name(package), source="sample", diamond=False)
    except ConfigError as e:
        assert "does not take 'diamond'" in str(e) and "dataset_shuffle" in str(e), str(e)
    else:
        raise AssertionError("an unknown argument was accepted")


async def check_unreachable_judge_is_an_infra_error_not_a_zero(
    package: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer left to a judge nobody answers: the rollout's error is infra and its reward
    NaN, never a 0 that would be trained on."""
    from verifiers.client import OpenAIClient

    env = package.load_environment(
        source="sample", math_verify_workers=1, judge_model="j", judge_base_url=_NOBODY
    )
    judge = env.rubric.judge_rubric
    dead = OpenAIClient(_NOBODY, api_key="x", max_retries=0)  # no retries: it fails at once
    judge.judge_client = dead
    state = rollout_state("Solve it.", "\\boxed{\\text{one half}}", "1/2", task=_task_name(package))
    try:
        await score_rollouts([(env, state)])
    finally:
        await dead.aclose()
    assert math.isnan(state["reward"]) and state["error"]["infra"] is True
    assert "JudgeError" in state["error"]["message"]


JUDGED_TASK_CHECKS: list[Check] = [
    check_signature_reads_as_if_written_out,
    check_official_source_is_compass_verifiers_file,
    check_official_judge_prompt_is_loaded_and_its_verdicts_read,
    check_official_prompt_is_cached_for_offline_runs,
    check_unreachable_publication_is_a_config_error_naming_the_way_out,
    check_own_judge_template_and_misuse,
    check_official_instruction_is_upstreams_constant_loaded_at_run_time,
    check_dataset_shuffle_reorders_with_upstream_seed,
    check_dataset_name_subset_split_pick_the_rows,
    check_judge_without_key_variable_sends_empty_like_upstream,
    check_unknown_argument_is_refused_naming_the_accepted_ones,
    check_unreachable_judge_is_an_infra_error_not_a_zero,
]


# -- a judge-backed environment ------------------------------------------------------------------
def verdict_judge(verdicts: dict[str, str], otherwise: str) -> Callable[[dict[str, Any]], str]:
    """A `ScriptedServer` responder for a judge: ``verdicts[candidate]`` (``otherwise`` for any
    other) for the candidate answer in the judge prompt (the ``<<< >>>`` block of the template
    `vf.grade_judge_prompt` writes)."""

    def reply(body: dict[str, Any]) -> str:
        found = re.search(r"Candidate's final answer:\n<<<\n(.*?)\n>>>", last_text(body), re.S)
        return verdicts.get(found.group(1) if found else "", otherwise)

    return reply


@contextmanager
def judged_environment(
    load_environment: Callable[..., Any], verdicts: dict[str, str], otherwise: str
) -> Iterator[tuple[Any, ScriptedServer]]:
    """The environment from ``load_environment(source="sample")`` judged by a scripted server
    replying as `verdict_judge` does; yields the environment and the judge's server, and tears
    the environment's grading pool down after."""
    with ScriptedServer(verdict_judge(verdicts, otherwise)) as server:
        env = load_environment(
            source="sample",
            math_verify_workers=1,
            judge_model="judge",
            judge_base_url=server.base_url,
        )
        try:
            yield env, server
        finally:
            asyncio.run(env.rubric.teardown())


# -- the SDK's grading table ----------------------------------------------------------------------
def sdk_grading_table(checkout: Path) -> list[dict[str, Any]]:
    """The rows of the SDK's grading table in a checkout of this repository (JSON lines:
    question, response, gold, rel_tol, verdict, proof; ``bench/grading/make_table.py``)."""
    return jsonl_rows(checkout / "packages/verifiers/tests/data/grading_table.jsonl")


def table_messages(row: dict[str, Any]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """A grading-table row's prompt (its question) and completion (its response)."""
    prompt = [{"role": "user", "content": row["question"]}]
    return prompt, [{"role": "assistant", "content": row["response"]}]


class SdkGradingTable:
    """The SDK's grading table (`sdk_grading_table`) as one judged environment grades it:
    ``rows``, and ``envs``: one environment per tolerance the rows state, built on first use
    and kept (no pool starts until a rollout is scored through one)."""

    def __init__(self, load_environment: Callable[..., Any], checkout: Path) -> None:
        self.rows = sdk_grading_table(checkout)
        self._load_environment = load_environment
        self._envs: dict[float, Any] | None = None

    @property
    def envs(self) -> dict[float, Any]:
        if self._envs is None:
            self._envs = {
                tol: self._load_environment(
                    source="sample", numeric_rel_tol=tol, math_verify_workers=1
                )
                for tol in sorted({r["rel_tol"] for r in self.rows})
            }
        return self._envs

    def pool_rewards(self, rows: Sequence[dict[str, Any]], task: str) -> list[float]:
        """The rewards of `rows`, each scored through its tolerance's environment's grading
        pool as rollouts are (the pools are torn down after)."""
        envs = self.envs
        states = [rollout_state(r["question"], r["response"], r["gold"], task=task) for r in rows]
        scored = [(envs[r["rel_tol"]], s) for r, s in zip(rows, states, strict=True)]
        asyncio.run(score_rollouts(scored))
        return [s["reward"] for s in states]
