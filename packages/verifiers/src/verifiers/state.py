"""The per-rollout state: a dict, so classic environments read and write it freely."""

from __future__ import annotations

import time
import traceback

from verifiers.errors import Error, InfraError
from verifiers.types import RolloutError


class State(dict):
    """Everything known about one rollout while it runs.

    Keys set by the environment: `input`, `prompt`, `answer`, `info`, `task`, `example_id`,
    `client`, `model`, `sampling_args`, `tool_defs`, `trajectory`, `completion`, `reward`,
    `metrics`, `error`, `is_completed`, `is_truncated`, `stop_condition`, `timing`, `usage`.
    Environments add their own keys.
    """

    __slots__ = ()

    def stop(self, condition: str = "stopped") -> None:
        """Ask the loop to stop after the current turn."""
        self["is_completed"] = True
        self["stop_condition"] = condition

    def add_step_reward(self, reward: float) -> None:
        if self.get("trajectory"):
            self["trajectory"][-1]["reward"] = reward

    def total_step_reward(self) -> float:
        return sum(s.get("reward") or 0.0 for s in self.get("trajectory") or ())


def error_record(exc: BaseException, stage: str) -> RolloutError:
    """Describe an exception for the rollout's output (and a trainer's mask)."""
    message = str(exc) or repr(exc)
    cause = exc.__cause__ or exc.__context__
    if cause is not None and str(cause) and str(cause) not in message:
        message = f"{message} (caused by {type(cause).__name__}: {cause})"
    record: RolloutError = {
        "error": type(exc).__name__,
        "message": message,
        "stage": stage,
        "infra": isinstance(exc, InfraError),
    }
    if not isinstance(exc, Error):  # a bug in user code: keep where it happened
        tb = traceback.extract_tb(exc.__traceback__)
        if tb:
            frame = tb[-1]
            record["where"] = f"{frame.filename}:{frame.lineno} in {frame.name}"  # type: ignore[typeddict-unknown-key]
    return record


def now() -> float:
    return time.perf_counter()
