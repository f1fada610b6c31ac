"""Data shapes shared by environments, rubrics, clients and trainers.

The chat message classes live in `verifiers.messages` (the clients build replies from them);
this module re-exports them under the names the classic API imports from here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NotRequired, TypedDict

from verifiers.messages import (
    AssistantMessage,
    ChatCompletionMessageToolCall,
    ChatMessage,
    ChatMessages,
    FunctionCall,
    Message,
    Messages,
    MessageType,
    SamplingArgs,
    SystemMessage,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
)

Info = dict[str, Any]
IndividualRewardFunc = Callable[..., float | Awaitable[float]]
RewardFunc = Callable[..., float | Awaitable[float]]
GroupRewardFunc = Callable[..., list[float] | Awaitable[list[float]]]
DatasetBuilder = Callable[[], Any]


class Usage(Message):
    """A reply's token counts in upstream 0.3's `vf.Usage` shape."""

    __slots__ = ()

    def __init__(
        self,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        total_tokens: int | None = None,
        reasoning_tokens: int = 0,
        **extra: Any,
    ) -> None:
        if total_tokens is None:
            total_tokens = prompt_tokens + completion_tokens
        super().__init__(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=total_tokens,
            reasoning_tokens=reasoning_tokens,
            **extra,
        )


class ResponseTokens(Message):
    """A reply's token ids, masks and logprobs (upstream 0.3's `vf.ResponseTokens`)."""

    __slots__ = ()


class ResponseMessage(AssistantMessage):
    """The assistant message of an upstream 0.3 `vf.Response`, with its finish reason,
    truncation flag and token data."""

    __slots__ = ()

    def __init__(
        self,
        content: Any = None,
        finish_reason: str | None = None,
        is_truncated: bool | None = None,
        tokens: Any = None,
        **extra: Any,
    ) -> None:
        if isinstance(tokens, dict) and not isinstance(tokens, ResponseTokens):
            tokens = ResponseTokens(tokens)
        super().__init__(
            content, finish_reason=finish_reason, is_truncated=is_truncated, tokens=tokens, **extra
        )


class Response(Message):
    """One model reply as an upstream 0.3 `vf.Client.get_response` returns it: `id`,
    `created`, `model`, `usage` and `message` (a `ResponseMessage`). A client written for 0.3
    may return one; the environment reads it as its own reply
    (`verifiers.client.model_response`)."""

    __slots__ = ()

    def __init__(
        self,
        id: str = "",
        created: int = 0,
        model: str = "",
        usage: Any = None,
        message: Any = None,
        **extra: Any,
    ) -> None:
        if isinstance(usage, dict) and not isinstance(usage, Usage):
            usage = Usage(**usage)
        if isinstance(message, dict) and not isinstance(message, ResponseMessage):
            message = ResponseMessage(**{k: v for k, v in message.items() if k != "role"})
        super().__init__(id=id, created=created, model=model, usage=usage, message=message, **extra)


class TrajectoryStepTokens(TypedDict):
    """Token-level record of one model call, as a trainer consumes it."""

    prompt_ids: list[int]
    prompt_mask: list[int]
    completion_ids: list[int]
    completion_mask: list[int]
    completion_logprobs: list[float]
    overlong_prompt: bool
    is_truncated: bool


class TrajectoryStep(TypedDict):
    """One model call: what was sent, what came back, and its token data."""

    prompt: Messages
    completion: Messages
    response: dict[str, Any]
    tokens: TrajectoryStepTokens | None
    reward: float | None
    advantage: float | None
    is_truncated: bool
    trajectory_id: str
    extras: dict[str, Any]


class RolloutInput(TypedDict):
    prompt: Messages
    example_id: int
    answer: NotRequired[str]
    info: NotRequired[Info]
    task: NotRequired[Any]


class RolloutError(TypedDict):
    """What went wrong in a rollout; `infra` marks failures a trainer should mask."""

    error: str
    message: str
    stage: str
    infra: bool
    error_chain_repr: NotRequired[str]  # upstream's fields: the exception and its causes
    error_chain_str: NotRequired[str]


class RolloutTiming(TypedDict, total=False):
    """Upstream's timing keys (milliseconds, and the wall-clock start)."""

    start_time: float
    generation_ms: float
    scoring_ms: float
    total_ms: float


class RolloutScore(TypedDict):
    """One rollout's score, as classic rubrics return it."""

    reward: float
    metrics: dict[str, float]


class RolloutScores(TypedDict):
    """A group's scores, as classic `score_rollouts` returns them."""

    reward: list[float]
    metrics: dict[str, list[float]]


class ProcessedOutputs(TypedDict):
    """Token-level training data of many rollouts (0.1.x `process_env_results_vllm`)."""

    prompt_ids: list[list[int]]
    prompt_mask: list[list[int]]
    completion_ids: list[list[int]]
    completion_mask: list[list[int]]
    completion_logprobs: list[list[float]]
    rewards: list[float]
    is_truncated: list[bool]


class RolloutOutput(TypedDict, total=False):
    """One line of `results.jsonl`: a finished rollout, whatever happened to it."""

    example_id: int
    rollout_index: int
    prompt: Messages
    completion: Messages
    answer: str
    info: Info
    task: Any
    reward: float
    advantage: float | None
    metrics: dict[str, float]
    error: RolloutError | None
    is_completed: bool
    is_truncated: bool
    stop_condition: str | None
    parsed_answer: str | None  # what the rubric's parser extracted (None: nothing)
    timing: dict[str, float]
    token_usage: dict[str, int]
    tool_defs: list[dict[str, Any]]
    trajectory: list[dict[str, Any]]


class GenerateMetadata(TypedDict, total=False):
    env_id: str
    env_args: dict[str, Any]
    model: str
    base_url: str
    num_examples: int
    rollouts_per_example: int
    sampling_args: SamplingArgs
    time: float
    avg_reward: float
    avg_metrics: dict[str, float]
    pass_at_k: dict[str, float]
    pass_threshold: float
    errors: dict[str, int]
    usage: dict[str, int]
    version_info: dict[str, str | None]


class GenerateOutputs(dict):
    """`{"outputs": [...], "metadata": {...}}`, also readable column-wise.

    The 0.3-era API returns this dict; the 0.1-era API returned an object with one list per
    field (`results.reward`, `results.completion`, ...). Both spellings work here.
    """

    _COLUMNS = frozenset(
        {
            "prompt",
            "completion",
            "answer",
            "info",
            "task",
            "example_id",
            "reward",
            "error",
            "stop_condition",
            "is_truncated",
            "advantage",
        }
    )

    def __getattr__(self, name: str) -> Any:
        if name in ("outputs", "metadata"):
            return self[name]
        if name in self._COLUMNS:
            return [o.get(name) for o in self["outputs"]]
        if name == "metrics":
            names: dict[str, None] = {}
            for o in self["outputs"]:
                names.update(dict.fromkeys(o.get("metrics") or {}))
            return {n: [(o.get("metrics") or {}).get(n) for o in self["outputs"]] for n in names}
        if name == "state":
            return self["outputs"]
        raise AttributeError(name)


# `from verifiers.types import State` is how classic environments name the rollout state.
from verifiers.state import State  # noqa: E402

__all__ = [
    "AssistantMessage",
    "ChatCompletionMessageToolCall",
    "ChatMessage",
    "ChatMessages",
    "DatasetBuilder",
    "FunctionCall",
    "GenerateMetadata",
    "GenerateOutputs",
    "GroupRewardFunc",
    "IndividualRewardFunc",
    "Info",
    "Message",
    "MessageType",
    "Messages",
    "ProcessedOutputs",
    "RewardFunc",
    "RolloutError",
    "RolloutInput",
    "RolloutOutput",
    "RolloutScore",
    "RolloutScores",
    "RolloutTiming",
    "SamplingArgs",
    "State",
    "SystemMessage",
    "Tool",
    "ToolCall",
    "ToolMessage",
    "TrajectoryStep",
    "TrajectoryStepTokens",
    "UserMessage",
]


def __getattr__(name: str) -> Any:
    # 0.3 spells the client settings `verifiers.types.ClientConfig`; they live with the clients
    # (imported on first use: `verifiers.client` itself imports this module).
    if name in ("ClientConfig", "EndpointConfig", "EndpointClientConfig"):
        from verifiers import client

        return getattr(client, "EndpointConfig" if name == "EndpointClientConfig" else name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
