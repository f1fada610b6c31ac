"""ToolEnv: the model calls Python functions as tools until it answers without a tool call."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from verifiers.decorators import stop
from verifiers.envs.classic_hooks import replies_with_messages
from verifiers.envs.multiturn_env import MultiTurnEnv
from verifiers.errors import ConfigError, InfraError, ToolCallError, ToolParseError
from verifiers.state import State
from verifiers.tools import ToolSpec, build_tool, describe_validation_error
from verifiers.types import Messages, RolloutOutput, ToolCall, ToolMessage
from verifiers.utils.callables import is_async_callable
from verifiers.utils.tool_utils import is_valid_tool_content_parts


def default_error_formatter(error: Exception) -> str:
    return f"Error: {type(error).__name__}: {error}"


class ToolEnv(MultiTurnEnv):
    """Calls the tools of each assistant turn and answers with tool messages.

    `tool_map` maps each tool's name to its function, as upstream's does. Sync tools run in
    worker threads; `tool_timeout` bounds each call (seconds). Unknown tools, malformed JSON
    and arguments that do not fit the schema are answered with a tool message saying what was
    wrong; an exception whose type is in `stop_errors` ends the rollout (an `InfraError` as
    itself, so the rollout is marked infra; anything else as `ToolCallError`). The calls of one
    turn run one after another, in order, as upstream runs them (tools often depend on each
    other's effects); `parallel_tool_calls=True` runs them concurrently.
    """

    def __init__(
        self,
        tools: Sequence[Callable[..., Any]] | None = None,
        max_turns: int = 10,
        error_formatter: Callable[[Exception], str] = default_error_formatter,
        stop_errors: Sequence[type[Exception]] | None = None,
        tool_timeout: float | None = None,
        parallel_tool_calls: bool = False,
        **kwargs: Any,
    ) -> None:
        self.tool_map: dict[str, Callable[..., Any]] = {}
        self._tool_specs: dict[str, ToolSpec] = {}
        self.tools: list[Callable[..., Any]] = []
        self.error_formatter = error_formatter
        self.stop_errors = tuple(stop_errors or ())
        self.tool_timeout = tool_timeout
        self.parallel_tool_calls = parallel_tool_calls
        super().__init__(max_turns=max_turns, **kwargs)
        for tool in tools or ():
            self.add_tool(tool)
        self._call_tool_takes_state = _accepts_keyword(self.call_tool, "state")

    # -- tools -----------------------------------------------------------------------------
    def add_tool(self, tool: Callable[..., Any], args_to_skip: Iterable[str] = ()) -> None:
        spec = build_tool(tool, args_to_skip)
        if spec.name in self.tool_map:
            raise ConfigError(f"duplicate tool name {spec.name!r}: tool names must be unique")
        self.tool_map[spec.name] = tool
        self._tool_specs[spec.name] = spec
        self.tools.append(tool)
        self._refresh_tool_defs()

    def remove_tool(self, tool: Callable[..., Any] | str) -> None:
        name = tool if isinstance(tool, str) else getattr(tool, "__name__", "")
        func = self.tool_map.pop(name, None)
        if func is None:
            raise ConfigError(f"no tool named {name!r} to remove")
        self._tool_specs.pop(name, None)
        self.tools = [t for t in self.tools if t is not func]
        self._refresh_tool_defs()

    def _refresh_tool_defs(self) -> None:
        self.tool_defs = [self._tool_specs[n].tool_def for n in self.tool_map]

    def tool_spec(self, name: str) -> ToolSpec | None:
        """The schema and validator of tool `name`. Classic subclasses may fill `tool_map`
        themselves; a function found there without a spec gets one built from it."""
        func = self.tool_map.get(name)
        if func is None:
            return None
        spec = self._tool_specs.get(name)
        if spec is None or spec.func is not func:
            try:
                spec = build_tool(func)
            except ConfigError:
                return None  # not describable: called without validation, as upstream does
            self._tool_specs[name] = spec
        return spec

    # -- the loop ----------------------------------------------------------------------------
    @stop
    async def no_tools_called(self, state: State) -> bool:
        if not state["trajectory"]:
            return False
        return not state["trajectory"][-1]["completion"][-1].get("tool_calls")

    @replies_with_messages
    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        calls = [ToolCall.of(c) for c in messages[-1].get("tool_calls") or []]
        if self.parallel_tool_calls and len(calls) > 1:
            return list(await asyncio.gather(*(self._answer(c, messages, state) for c in calls)))
        return [await self._answer(call, messages, state) for call in calls]

    async def _answer(self, call: ToolCall, messages: Messages, state: State) -> Any:
        name, call_id = call.name, call.id or ""
        try:
            arguments = _parse_arguments(call.arguments)
        except ValueError as e:
            if self._stops_on(ToolParseError) or self._stops_on(json.JSONDecodeError):
                raise ToolParseError(f"tool {name!r}: {e}") from e
            return ToolMessage(
                content=f"Error: arguments for tool {name!r} {e}. Send a JSON object.",
                tool_call_id=call_id,
            )
        try:
            arguments = await self.prepare_tool_args(name, arguments, messages, state)
        except _ToolArgumentsRejected as rejected:
            return ToolMessage(content=str(rejected), tool_call_id=call_id)
        extra = {"state": state, "messages": messages} if self._call_tool_takes_state else {}
        try:
            return await self.call_tool(name, arguments, call_id, **extra)
        except (ToolCallError, ToolParseError, InfraError):
            raise
        except Exception as e:  # an overriding call_tool raised
            if self.stop_errors and isinstance(e, self.stop_errors):
                raise ToolCallError(f"tool {name!r} raised {type(e).__name__}: {e}") from e
            return ToolMessage(content=self.error_formatter(e), tool_call_id=call_id)

    def _stops_on(self, error_type: type[Exception]) -> bool:
        return any(issubclass(error_type, s) for s in self.stop_errors)

    async def prepare_tool_args(
        self, tool_name: str, tool_args: dict[str, Any], messages: Messages, state: State
    ) -> dict[str, Any]:
        """Hook for StatefulToolEnv: the arguments `call_tool` gets (hidden ones added)."""
        return tool_args

    async def call_tool(
        self, tool_name: str, tool_args: dict[str, Any], tool_call_id: str, **kwargs: Any
    ) -> ToolMessage:
        """Call tool `tool_name` with `tool_args` and answer with its tool message
        (upstream's signature: subclasses override it and call `super().call_tool(...)`)."""
        if tool_name not in self.tool_map:
            available = ", ".join(sorted(self.tool_map)) or "none"
            return ToolMessage(
                content=f"Error: unknown tool {tool_name!r}. Available tools: {available}.",
                tool_call_id=tool_call_id,
            )
        spec = self.tool_spec(tool_name)
        if spec is not None:
            try:
                tool_args = spec.validate(tool_args)
            except ValidationError as e:
                detail = describe_validation_error(e)
                if self._stops_on(ToolParseError):
                    raise ToolParseError(f"tool {tool_name!r}: {detail}") from e
                return ToolMessage(
                    content=f"Error: invalid arguments for tool {tool_name!r}: {detail}",
                    tool_call_id=tool_call_id,
                )
        try:
            result = await self._invoke(self.tool_map[tool_name], tool_args)
        except TimeoutError as e:
            if not self.tool_timeout:
                return ToolMessage(content=self.error_formatter(e), tool_call_id=tool_call_id)
            return ToolMessage(
                content=f"Error: tool {tool_name!r} timed out after {self.tool_timeout:g}s",
                tool_call_id=tool_call_id,
            )
        except Exception as e:
            if self.stop_errors and isinstance(e, self.stop_errors):
                if isinstance(e, InfraError):  # keep the flag: the trainer must mask it
                    raise
                raise ToolCallError(f"tool {tool_name!r} raised {type(e).__name__}: {e}") from e
            return ToolMessage(content=self.error_formatter(e), tool_call_id=tool_call_id)
        return ToolMessage(content=_tool_content(result), tool_call_id=tool_call_id)

    async def _invoke(self, func: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        if is_async_callable(func):
            call = func(**kwargs)
        else:
            call = self.run_sync(func, **kwargs)
        if self.tool_timeout:
            return await asyncio.wait_for(call, self.tool_timeout)
        result = await call
        if inspect.isawaitable(result):  # a sync callable that returned a coroutine
            result = await result
        return result

    def metric_names(self) -> list[str]:
        return [*super().metric_names(), "total_tool_calls", *(f"{n}_calls" for n in self.tool_map)]

    def state_to_output(
        self, state: State, state_columns: list[str] | None = None
    ) -> RolloutOutput:
        out = super().state_to_output(state, state_columns)
        counts = _calls_made(state)
        tool_metrics = {"total_tool_calls": float(sum(counts.values()))}
        for name in self.tool_map:
            tool_metrics[f"{name}_calls"] = float(counts.get(name, 0))
        out["metrics"] = {**out["metrics"], **tool_metrics}
        out.update(tool_metrics)  # type: ignore[typeddict-item]
        return out


def _calls_made(state: State) -> Counter[str]:
    """Tool calls per tool name in the model's turns (upstream counts the calls the model made,
    also those of a last turn that the turn limit left unanswered)."""
    counts: Counter[str] = Counter()
    for step in state.get("trajectory") or ():
        for message in step.get("completion") or ():
            for call in message.get("tool_calls") or ():
                counts[ToolCall.of(call).name] += 1
    return counts


def _parse_arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, json.JSONDecodeError) as e:
        raise ValueError(f"are not valid JSON ({e}): {str(raw)[:200]!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"must be a JSON object, got {type(value).__name__}")
    return value


def _tool_content(result: Any) -> Any:
    if is_valid_tool_content_parts(result):
        return result  # multimodal content parts pass through
    return result if isinstance(result, str) else str(result)


class _ToolArgumentsRejected(Exception):
    """The model sent arguments it may not set; answered as a tool message."""


def _accepts_keyword(func: Callable[..., Any], name: str) -> bool:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is p.VAR_KEYWORD or p.name == name for p in params)
