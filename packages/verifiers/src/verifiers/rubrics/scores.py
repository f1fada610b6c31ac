"""Score bookkeeping: one call's values and errors per rollout, the weighted reward, and how a
score lands on a state (reward, metrics, error, scoring time, group-relative advantage)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from verifiers.errors import InfraError, RewardError
from verifiers.openai_sdk import imported_openai
from verifiers.state import chain_fields, set_ms_timing
from verifiers.types import RolloutError

NAN = float("nan")


@dataclass(slots=True)
class Score:
    """The outcome of scoring one rollout."""

    reward: float = 0.0
    metrics: dict[str, float] = field(default_factory=dict)
    error: RolloutError | None = None


class Weighted(Protocol):
    """What aggregation needs of a reward function's plan."""

    @property
    def name(self) -> str: ...

    @property
    def weight(self) -> float: ...


def reward_error(func_name: str, exc: BaseException) -> RolloutError:
    record: RolloutError = {
        "error": "RewardError",
        "message": f"reward function {func_name!r} raised {type(exc).__name__}: {exc}",
        "stage": "scoring",
        "infra": is_infra_exception(exc),
    }
    chain = chain_fields(exc)
    record["error_chain_repr"] = chain["error_chain_repr"]
    record["error_chain_str"] = chain["error_chain_str"]
    return record


def is_infra_exception(exc: BaseException) -> bool:
    """An `InfraError`, or an openai SDK error saying the endpoint was unreachable, timed out,
    rate-limited or failed (5xx): classic reward functions call judge models through
    `AsyncOpenAI` directly, and such a failure says nothing about the policy."""
    if isinstance(exc, InfraError):
        return True
    openai = imported_openai()  # a reward function's plain ValueError never imports it
    return openai is not None and isinstance(
        exc, (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError)
    )


def is_infra_failure(error: Any) -> bool:
    """Whether a state's `error` (a record or an exception) is an infrastructure failure."""
    if isinstance(error, dict):
        return bool(error.get("infra"))
    return isinstance(error, InfraError)


def as_score(value: Any) -> float:
    try:
        return float(value)  # ints and bools count, as upstream's float(...)
    except (TypeError, ValueError):
        raise RewardError(
            f"returned {type(value).__name__} {value!r:.80}, which is not a number"
        ) from None


class ScoreTable:
    """The values (NaN until recorded) and first error of each rollout of one scoring call."""

    __slots__ = ("errors", "values")

    def __init__(self, rollouts: int, funcs: int) -> None:
        self.values = [[NAN] * funcs for _ in range(rollouts)]
        self.errors: list[RolloutError | None] = [None] * rollouts

    def infra_failed(self, i: int) -> bool:
        error = self.errors[i]
        return error is not None and bool(error.get("infra"))

    def record(self, i: int, k: int, name: str, value: Any) -> None:
        """Function `k` (`name`) returned `value` for rollout `i`."""
        try:
            self.values[i][k] = as_score(value)
        except RewardError as e:
            self.fail(i, k, name, e)

    def fail(self, i: int, k: int, name: str, exc: BaseException) -> None:
        self.values[i][k] = NAN
        if self.errors[i] is None:
            self.errors[i] = reward_error(name, exc)

    def scores(self, specs: Sequence[Weighted]) -> list[Score]:
        # As upstream, a name used twice keeps its last value; each function still adds its
        # own weighted score to the reward.
        weighted = [(k, s.weight) for k, s in enumerate(specs) if s.weight != 0.0]
        names = [s.name for s in specs]
        out = []
        for row, error in zip(self.values, self.errors, strict=True):
            reward = 0.0  # a loop, not `sum` over a generator: called once per rollout
            for k, w in weighted:
                reward += w * row[k]
            out.append(Score(reward, dict(zip(names, row, strict=True)), error))
        return out


def apply_score(state: dict[str, Any], score: Score) -> None:
    # A rollout cut short by infrastructure (model server, sandbox, judge) has no meaningful
    # reward: NaN, so it can neither pass as a real 0.0 nor pull its group's mean.
    get = dict.get  # own keys (no `State.get` call; `error` and `metrics` are no input fields)
    error = get(state, "error")
    state["reward"] = NAN if error is not None and is_infra_failure(error) else score.reward
    metrics = get(state, "metrics")
    if metrics:
        metrics.update(score.metrics)
    else:
        state["metrics"] = score.metrics
    if score.error is not None and error is None:
        state["error"] = score.error


def note_scoring_time(states: Sequence[dict[str, Any]], seconds: float) -> None:
    """Record the scoring time on states and output records that carry timing, also when a
    trainer calls the rubric itself (prime-rl v0.2 scores eval rollouts with
    `score_rollout(state, score_sem)`, v0.5 defers `score_group(outputs)`): ours in seconds,
    upstream's `scoring_ms` / `total_ms` where the record has them."""
    for state in states:
        timing = dict.get(state, "timing")
        if not isinstance(timing, dict):
            continue
        timing["scoring"] = seconds
        if "scoring_ms" in timing or "generation_ms" in timing:
            set_ms_timing(timing)


def set_advantages(states: Sequence[dict[str, Any]]) -> None:
    """Group-relative advantage: each reward minus the mean of the group's finite rewards."""
    if len(states) == 1:  # a group of one, the common case, without the lists
        state = states[0]
        r = dict.get(state, "reward", NAN)
        adv = 0.0 if r is not None and math.isfinite(r) else NAN  # r minus its own mean
        state["advantage"] = adv
        for step in dict.get(state, "trajectory") or ():
            if step.get("advantage") is None:
                step["advantage"] = adv
            if step.get("reward") is None:
                step["reward"] = r
        return
    rewards = [s.get("reward", NAN) for s in states]
    finite = [r for r in rewards if r is not None and math.isfinite(r)]
    mean = sum(finite) / len(finite) if finite else NAN
    for state, r in zip(states, rewards, strict=True):
        adv = r - mean if r is not None else NAN
        state["advantage"] = adv
        for step in state.get("trajectory") or ():
            if step.get("advantage") is None:
                step["advantage"] = adv
            if step.get("reward") is None:
                step["reward"] = r
