"""States and output records for rollouts that failed before they could record anything."""

from __future__ import annotations

import time
from typing import Any

from verifiers.state import State, now, record_error
from verifiers.types import SamplingArgs


def failed_state(
    env: Any,
    input: dict[str, Any],
    client: Any,
    model: str,
    sampling_args: SamplingArgs | None,
    exc: BaseException,
    stage: str,
) -> State:
    """A state carrying `exc` for an input whose rollout raised (or never ran): the
    environment's usual initial state if it can make one, else the input's own fields."""
    try:
        state = env.new_state(input, client, model, sampling_args)
    except Exception:
        state = State(
            input=input,
            prompt=input.get("prompt") or [],
            completion=[],
            answer=input.get("answer", ""),
            info={},
            task=input.get("task"),
            example_id=input.get("example_id", 0),
            trajectory=[],
            metrics={},
            is_completed=False,
            is_truncated=False,
            stop_condition=None,
            usage={"input_tokens": 0, "output_tokens": 0},
            timing={"start": now(), "start_time": time.time()},
        )
    record_error(state, exc, stage)
    state["stop_condition"] = "has_error"
    return state


def retryable(err: Any) -> bool:
    """Whether a rollout's recorded error is worth another attempt (`max_retries`)."""
    return bool(err.get("infra")) or err.get("error") in (
        "InvalidModelResponseError",
        "EmptyModelResponseError",
    )
