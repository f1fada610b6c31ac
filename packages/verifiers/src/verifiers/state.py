"""The per-rollout state: a dict, so classic environments read and write it freely."""

from __future__ import annotations

import time
import traceback
from typing import TYPE_CHECKING, Any, cast

from verifiers.errors import Error, InfraError

if TYPE_CHECKING:
    from verifiers.types import RolloutError

_INPUT_FIELDS = frozenset({"prompt", "answer", "task", "info", "example_id"})
_MISSING = object()


class State(dict):
    """Everything known about one rollout while it runs.

    Keys set by the environment: `input`, `prompt`, `answer`, `info`, `task`, `example_id`,
    `client`, `model`, `sampling_args`, `tool_defs`, `trajectory`, `completion`, `reward`,
    `metrics`, `error`, `is_completed`, `is_truncated`, `stop_condition`, `timing`, `usage`.
    Environments add their own keys.

    As upstream's, a state made from an input (`State(input=row)`) answers the input's
    fields (`INPUT_FIELDS`) it does not hold itself. `state["error"]` is the exception that
    ended the rollout (so `isinstance(state["error"], vf.ToolCallError)` works); the output
    record carries its serialised form (`error_info`).
    """

    __slots__ = ()

    INPUT_FIELDS = ["prompt", "answer", "task", "info", "example_id"]

    def __missing__(self, key: Any) -> Any:
        if key in _INPUT_FIELDS:
            source = dict.get(self, "input")
            if isinstance(source, dict) and key in source:
                return source[key]
        raise KeyError(key)

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _MISSING)
        if value is not _MISSING:
            return value
        if key in _INPUT_FIELDS:
            source = dict.get(self, "input")
            if isinstance(source, dict):
                return source.get(key, default)
        return default

    def stop(self, condition: str = "stopped") -> None:
        """Ask the loop to stop after the current turn."""
        self["is_completed"] = True
        self["stop_condition"] = condition

    def add_step_reward(self, reward: float) -> None:
        if self.get("trajectory"):
            self["trajectory"][-1]["reward"] = reward

    def total_step_reward(self) -> float:
        return sum(s.get("reward") or 0.0 for s in self.get("trajectory") or ())


def record_error(state: dict[str, Any], exc: BaseException, stage: str) -> None:
    """Put `exc` on the state as the rollout's error, remembering where it happened."""
    try:
        exc.__dict__.setdefault("_vf_stage", stage)
    except AttributeError:  # an exception type without a __dict__: keep its record instead
        state["error"] = error_record(exc, stage)
        return
    state["error"] = exc


def error_info(error: Any) -> RolloutError | None:
    """The serialised form of a state's `error` (an exception or an already built record)."""
    if error is None or isinstance(error, dict):
        return cast("RolloutError | None", error)
    if isinstance(error, BaseException):
        return error_record(error, getattr(error, "_vf_stage", "rollout"))
    return {
        "error": type(error).__name__,
        "message": str(error),
        "stage": "rollout",
        "infra": False,
    }


def error_chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions that caused it, outermost first."""
    chain, seen = [], set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or (
            None if current.__suppress_context__ else current.__context__
        )
    return chain


def chain_fields(exc: BaseException) -> dict[str, str]:
    """Upstream's `ErrorData` fields: the chain of exceptions, as repr and as str (prime-rl
    v0.5 reads `error_chain_repr` off every failed rollout)."""
    chain = error_chain(exc)
    return {
        "error_chain_repr": " -> ".join(repr(e) for e in chain),
        "error_chain_str": " -> ".join(str(e) for e in chain),
    }


def error_record(exc: BaseException, stage: str) -> RolloutError:
    """Describe an exception for the rollout's output (and a trainer's mask)."""
    message = str(exc) or repr(exc)
    cause = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    if cause is not None and str(cause) and str(cause) not in message:
        message = f"{message} (caused by {type(cause).__name__}: {cause})"
    record: RolloutError = {
        "error": type(exc).__name__,
        "message": message,
        "stage": stage,
        "infra": isinstance(exc, InfraError),
    }
    chain = chain_fields(exc)
    record["error_chain_repr"] = chain["error_chain_repr"]
    record["error_chain_str"] = chain["error_chain_str"]
    if not isinstance(exc, Error):  # a bug in user code: keep where it happened
        tb = traceback.extract_tb(exc.__traceback__)
        if tb:
            frame = tb[-1]
            record["where"] = f"{frame.filename}:{frame.lineno} in {frame.name}"  # type: ignore[typeddict-unknown-key]
    return record


def set_ms_timing(timing: dict[str, Any]) -> None:
    """Upstream's millisecond timing keys from ours (seconds): `generation_ms`, `scoring_ms`
    and `total_ms` = generation + scoring (0.1.8 states, and records a trainer scores)."""
    generation_ms = float(timing.get("generation", 0.0)) * 1000.0
    scoring_ms = float(timing.get("scoring", 0.0)) * 1000.0
    timing["generation_ms"] = generation_ms
    timing["scoring_ms"] = scoring_ms
    timing["total_ms"] = generation_ms + scoring_ms


#: The monotonic clock rollouts are timed with (the builtin itself: no call layer).
now = time.perf_counter
