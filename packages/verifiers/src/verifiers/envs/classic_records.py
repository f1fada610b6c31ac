"""What classic trainers read off finished rollouts, in their releases' shapes.

- 0.1.8 states (prime-rl v0.2): `timing` in milliseconds (`generation_ms`, `scoring_ms`,
  `total_ms`), `oai_tools`, a `task` (the env id or "default" when the input had none) and each
  step's `response` as an openai `ChatCompletion`; the columnar results prime-rl v0.2 saves its
  evaluations from (`_prepare_rollout_results`).
- 0.1.5 training data (`process_env_results_vllm`): one token sequence per rollout.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from verifiers.client import to_openai_tool
from verifiers.errors import TrainingDataError
from verifiers.state import set_ms_timing
from verifiers.training.samples import build_samples
from verifiers.types import ProcessedOutputs

if TYPE_CHECKING:
    from verifiers.envs.environment import Environment


def as_018_state(env: Environment, state: Any) -> None:
    """Give a finished rollout's state the fields a 0.1.8 state had (see the module doc)."""
    if state.get("task") is None:
        state["task"] = env.env_id or "default"
    if "oai_tools" not in state:
        state["oai_tools"] = [to_openai_tool(t) for t in state.get("tool_defs") or ()]
    for step in state.get("trajectory") or ():
        step["response"] = chat_completion(step)
    set_018_timing(state)


def set_018_timing(state: Any) -> None:
    """0.1.8's millisecond timing keys beside ours (seconds)."""
    set_ms_timing(state.setdefault("timing", {}))


_FINISH_REASONS = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})


def chat_completion(step: dict[str, Any]) -> Any:
    """A trajectory step's response as the openai `ChatCompletion` 0.1.8 kept there (prime-rl
    v0.2 reads `.usage` and `.choices[0]` off it when the server sent no token ids); a text
    step's as the `Completion` 0.1.8 kept for `message_type="completion"`."""
    summary = step.get("response")
    if not isinstance(summary, dict):
        return summary  # already an object (a subclass recorded its own)
    usage = summary.get("usage") or {}
    prompt_tokens = int(usage.get("input_tokens", usage.get("prompt_tokens", 0)) or 0)
    completion_tokens = int(usage.get("output_tokens", usage.get("completion_tokens", 0)) or 0)
    finish = summary.get("finish_reason")
    common = {
        "id": summary.get("id") or "",
        "created": 0,
        "model": summary.get("model") or "",
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    from openai.types import Completion  # on first use (see verifiers.openai_sdk)
    from openai.types.chat import ChatCompletion

    completion = step.get("completion")
    if isinstance(completion, str):  # a text (message_type="completion") step: a Completion
        choice = {"index": 0, "text": completion, "logprobs": None}
        choice["finish_reason"] = finish if finish in ("stop", "length") else "stop"
        return Completion.model_validate(
            {**common, "object": "text_completion", "choices": [choice]}
        )
    completion = completion or []
    message = completion[-1] if completion else {"role": "assistant", "content": None}
    dump = getattr(message, "model_dump", None)
    message = dump() if callable(dump) else dict(message)
    choice = {
        "index": 0,
        "message": message,
        "finish_reason": finish if finish in _FINISH_REASONS else "stop",
        "logprobs": None,
    }
    return ChatCompletion.model_validate(
        {**common, "object": "chat.completion", "choices": [choice]}
    )


def prepare_rollout_results_call(
    env: Environment,
    all_states: list[Any],
    model: str,
    client: Any,
    state_columns: list[str] | None,
    results_path: Any,
    gen_sampling_args: Any,
    start_time: float,
) -> dict[str, Any]:
    """0.1.8's columnar results of finished states (what prime-rl v0.2 saves its evals from):
    one list per field, the states themselves, metrics as name -> list, and a metadata dict.
    States may be plain dicts with the input fields at top level (prime-rl's serialisable
    form) or states with an `input`."""
    from datetime import datetime

    from verifiers.utils.path_utils import get_results_path

    def field(name: str, default: Any) -> list[Any]:
        return [s.get(name, default) for s in all_states]

    rewards = field("reward", 0.0)
    metrics: dict[str, list[float]] = {}
    for state in all_states:
        for name, value in (state.get("metrics") or {}).items():
            metrics.setdefault(name, []).append(value)
    example_ids = field("example_id", 0)
    num_examples = len(set(example_ids))
    finite = [r for r in rewards if r is not None]
    metadata = {
        "env_id": env.env_id,
        "env_args": env.env_args,
        "model": model,
        "base_url": str(client.base_url) if hasattr(client, "base_url") else "",
        "num_examples": num_examples,
        "rollouts_per_example": len(all_states) // num_examples if num_examples else 1,
        "sampling_args": gen_sampling_args,
        "date": datetime.now().isoformat(),
        "time_ms": (time.time() - start_time) * 1000.0,
        "avg_reward": sum(finite) / len(finite) if finite else 0.0,
        "avg_metrics": {n: sum(v) / len(v) if v else 0.0 for n, v in metrics.items()},
        "state_columns": list(state_columns or []),
        "path_to_save": results_path or get_results_path(env.env_id, model),
    }
    return {
        "prompt": field("prompt", None),
        "completion": field("completion", None),
        "answer": field("answer", ""),
        "state": list(all_states),
        "task": field("task", "default"),
        "info": field("info", {}),
        "example_id": example_ids,
        "reward": rewards,
        "metrics": metrics,
        "stop_conditions": field("stop_condition", None),
        "is_truncated": field("is_truncated", False),
        "metadata": metadata,
    }


def process_env_results_vllm_call(
    prompts: list[Any],
    completions: list[Any],
    states: list[Any],
    rewards: list[float],
    max_seq_len: int = -1,
    mask_truncated_completions: bool = False,
    zero_truncated_completions: bool = False,
) -> ProcessedOutputs:
    """0.1.5's token-level training data: one sequence per rollout, from the token ids the
    server returned (kept on each state's trajectory)."""
    out: ProcessedOutputs = {
        "prompt_ids": [],
        "prompt_mask": [],
        "completion_ids": [],
        "completion_mask": [],
        "completion_logprobs": [],
        "rewards": [],
        "is_truncated": [],
    }
    for state, reward in zip(states, rewards, strict=True):
        samples = build_samples(state, max_seq_len=max_seq_len if max_seq_len > 0 else None)
        if len(samples) != 1:
            raise TrainingDataError(
                f"rollout {state.get('example_id')} makes {len(samples)} token sequences (its "
                "turns do not extend one another); use vf.training.build_samples for it"
            )
        sample = samples[0]
        mask = list(sample.completion_mask)
        if sample.is_truncated and mask_truncated_completions:
            mask = [0] * len(mask)
        out["prompt_ids"].append(sample.prompt_ids)
        out["prompt_mask"].append([0] * len(sample.prompt_ids))
        out["completion_ids"].append(sample.completion_ids)
        out["completion_mask"].append(mask)
        out["completion_logprobs"].append(sample.completion_logprobs)
        zero = sample.is_truncated and zero_truncated_completions
        out["rewards"].append(0.0 if zero else float(reward))
        out["is_truncated"].append(sample.is_truncated)
    return out
