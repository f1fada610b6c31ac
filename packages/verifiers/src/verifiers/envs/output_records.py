"""Output records: what a finished rollout's state becomes in `results.jsonl` (and what
upstream 0.3's `verifiers.utils.save_utils.state_to_output` returns)."""

from __future__ import annotations

import math
from collections.abc import Callable
from operator import itemgetter
from typing import Any

from verifiers.state import State, error_info, now
from verifiers.types import RolloutOutput

_RESERVED_OUTPUT_KEYS = frozenset(RolloutOutput.__annotations__)
_INPUT_FIELDS = frozenset(State.INPUT_FIELDS)


def output_record(state: State, state_columns: list[str] | None = None) -> RolloutOutput:
    """A finished rollout's output record (`results.jsonl` line), with the `state_columns`
    it asks for (upstream 0.3's `verifiers.utils.save_utils.state_to_output`)."""
    if type(state) in _PLAIN_STATES:
        try:
            # one C call for every key a finished rollout of the library's own loop holds
            # (a `State` answers missing input fields from its input, as `State.get` does)
            fields = _RECORD_FIELDS(state)
        except KeyError:
            pass
        else:
            # (no `advantage` yet when it is scored alone: set once its group is done)
            return _record(state, state_columns, dict.get(state, "advantage"), *fields)
    return _record_by_key(state, state_columns)


_PLAIN_STATES = frozenset({State, dict})
_RECORD_FIELDS = itemgetter(
    "example_id", "input", "prompt", "completion", "answer", "info", "reward", "metrics",
    "error", "is_completed", "is_truncated", "stop_condition", "parsed_answer", "timing",
    "usage", "task", "tool_defs", "trajectory",
)  # fmt: skip


def _record_by_key(state: State, state_columns: list[str] | None) -> RolloutOutput:
    """`output_record` of a state that lacks some keys (or is of another type): each read
    with its default."""
    # `own` reads the state's own keys without `State.get`'s fallback to the input; the
    # input's fields (`State.INPUT_FIELDS`) go through `state.get`.
    own = dict.get
    field: Callable[..., Any] = own if state.keys() >= _INPUT_FIELDS else type(state).get
    return _record(
        state,
        state_columns,
        own(state, "advantage"),
        field(state, "example_id", 0),
        own(state, "input"),
        field(state, "prompt"),
        own(state, "completion"),
        field(state, "answer", ""),
        field(state, "info"),
        own(state, "reward"),
        own(state, "metrics"),
        own(state, "error"),
        own(state, "is_completed"),
        own(state, "is_truncated"),
        own(state, "stop_condition"),
        own(state, "parsed_answer"),
        own(state, "timing"),
        own(state, "usage"),
        field(state, "task"),
        own(state, "tool_defs"),
        own(state, "trajectory"),
    )


def _record(
    state: State,
    state_columns: list[str] | None,
    advantage: Any,
    example_id: Any,
    source: Any,
    prompt: Any,
    completion: Any,
    answer: Any,
    info: Any,
    reward: Any,
    metrics: Any,
    error: Any,
    is_completed: Any,
    is_truncated: Any,
    stop_condition: Any,
    parsed: Any,
    timing: Any,
    usage: Any,
    task: Any,
    tool_defs: Any,
    trajectory: Any,
) -> RolloutOutput:
    # a prompt or completion as recorded: text stays text ("" included); None is []
    if not prompt and not isinstance(prompt, str):
        prompt = []
    if not completion and not isinstance(completion, str):
        completion = []
    if not metrics:
        metrics = {}
    if not timing:
        timing = {}
    end = now()
    out: RolloutOutput = {
        "example_id": example_id,
        "rollout_index": source.get("rollout_index", 0) if source else 0,
        "prompt": prompt,
        "completion": completion,
        "answer": answer,
        "info": info or {},
        "reward": math.nan if reward is None else float(reward),
        "advantage": advantage,
        "metrics": metrics,
        "error": None if error is None else error_info(error),
        "is_completed": bool(is_completed),
        "is_truncated": bool(is_truncated),
        "stop_condition": stop_condition,
        "parsed_answer": parsed,
        "timing": _output_timing(timing, end - timing.get("start", end)),
        "token_usage": dict(usage) if usage else {},
    }
    if task is not None:
        out["task"] = task
    if tool_defs:
        out["tool_defs"] = tool_defs
    with_steps = bool(state_columns and "trajectory" in state_columns)
    if not with_steps and trajectory:
        for step in trajectory:  # steps with token ids (inline: once per rollout)
            if step.get("tokens"):
                with_steps = True
                break
    if with_steps:
        out["trajectory"] = [_step_record(step) for step in trajectory or ()]
    if metrics:
        if _RESERVED_OUTPUT_KEYS.isdisjoint(metrics):
            out.update(metrics)  # type: ignore[typeddict-item]
        else:
            for name, value in metrics.items():
                if name not in _RESERVED_OUTPUT_KEYS:
                    out[name] = value  # type: ignore[literal-required]
    if state_columns:
        for col in state_columns:
            if col != "trajectory" and col in state:
                out[col] = state[col]  # type: ignore[literal-required]
    return out


def _output_timing(timing: dict[str, Any], total: float) -> dict[str, float]:
    """Seconds under our keys, and upstream's millisecond keys beside them."""
    generation = timing.get("generation", 0.0)
    scoring = timing.get("scoring", 0.0)
    return {
        "generation": generation,
        "scoring": scoring,
        "total": total,
        "start_time": timing.get("start_time", 0.0),
        "generation_ms": generation * 1000.0,
        "scoring_ms": scoring * 1000.0,
        "total_ms": total * 1000.0,
    }


def _step_record(step: dict[str, Any]) -> dict[str, Any]:
    return {
        "prompt": step.get("prompt"),
        "completion": step.get("completion"),
        "response": _response_record(step.get("response")),
        "tokens": step.get("tokens"),
        "reward": step.get("reward"),
        "advantage": step.get("advantage"),
        "is_truncated": step.get("is_truncated", False),
    }


def _response_record(response: Any) -> Any:
    """A step's response summary with OpenAI's usage names beside ours: prime-rl v0.5 counts
    a step's tokens from `usage.prompt_tokens` / `total_tokens` when it has no token ids."""
    usage = response.get("usage") if isinstance(response, dict) else None
    if not isinstance(usage, dict) or "input_tokens" not in usage:
        return response
    prompt, completion = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
    openai_usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    return {**response, "usage": {**usage, **openai_usage}}
