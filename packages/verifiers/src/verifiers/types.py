"""Data shapes shared by environments, rubrics, clients and trainers.

Messages are plain OpenAI chat dicts. The `*Message` classes below are dict subclasses that
also allow attribute access (`msg.content`), so code written for either the dict-era or the
pydantic-era classic API reads them the same way; they serialise as ordinary JSON objects.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NotRequired, TypedDict

Info = dict[str, Any]
SamplingArgs = dict[str, Any]
Messages = list[dict[str, Any]]
RewardFunc = Callable[..., float | Awaitable[float]]
GroupRewardFunc = Callable[..., list[float] | Awaitable[list[float]]]
DatasetBuilder = Callable[[], Any]


class Message(dict):
    """A chat message: a dict that also answers attribute access."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            if name in _OPTIONAL_MESSAGE_FIELDS:
                return None
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


_OPTIONAL_MESSAGE_FIELDS = frozenset(
    {"content", "tool_calls", "tool_call_id", "name", "reasoning_content"}
)


class SystemMessage(Message):
    __slots__ = ()

    def __init__(self, content: Any = "", **extra: Any) -> None:
        super().__init__(role="system", content=content, **extra)


class UserMessage(Message):
    __slots__ = ()

    def __init__(self, content: Any = "", **extra: Any) -> None:
        super().__init__(role="user", content=content, **extra)


class AssistantMessage(Message):
    __slots__ = ()

    def __init__(self, content: Any = None, **extra: Any) -> None:
        super().__init__(role="assistant", content=content, **extra)


class ToolMessage(Message):
    __slots__ = ()

    def __init__(self, content: Any = "", tool_call_id: str = "", **extra: Any) -> None:
        super().__init__(role="tool", content=content, tool_call_id=tool_call_id, **extra)


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
