"""ToolEnv: the model calls Python functions as tools until it answers without a tool call."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from verifiers.decorators import stop
from verifiers.envs.multiturn_env import MultiTurnEnv
from verifiers.errors import ConfigError, InfraError, ToolCallError, ToolParseError
from verifiers.state import State
from verifiers.tools import Tool, build_tool, describe_validation_error
from verifiers.types import Messages, ToolMessage


def default_error_formatter(error: Exception) -> str:
    return f"Error: {type(error).__name__}: {error}"


class ToolEnv(MultiTurnEnv):
    """Calls the tools of each assistant turn concurrently and answers with tool messages.

    Sync tools run in worker threads; `tool_timeout` bounds each call (seconds). Unknown tools,
    malformed JSON and arguments that do not fit the schema are answered with a tool message
    saying what was wrong; an exception whose type is in `stop_errors` ends the rollout (an
    `InfraError` as itself, so the rollout is marked infra; anything else as `ToolCallError`).
    """

    def __init__(
        self,
        tools: Sequence[Callable[..., Any]] | None = None,
        max_turns: int = 10,
        error_formatter: Callable[[Exception], str] = default_error_formatter,
        stop_errors: Sequence[type[Exception]] | None = None,
        tool_timeout: float | None = None,
        **kwargs: Any,
    ) -> None:
        self.tool_map: dict[str, Tool] = {}
        self.tools: list[Callable[..., Any]] = []
        self.error_formatter = error_formatter
        self.stop_errors = tuple(stop_errors or ())
        self.tool_timeout = tool_timeout
        super().__init__(max_turns=max_turns, **kwargs)
        for tool in tools or ():
            self.add_tool(tool)

    # -- tools -----------------------------------------------------------------------------
    def add_tool(self, tool: Callable[..., Any], args_to_skip: Iterable[str] = ()) -> None:
        spec = build_tool(tool, args_to_skip)
        if spec.name in self.tool_map:
            raise ConfigError(f"duplicate tool name {spec.name!r}: tool names must be unique")
        self.tool_map[spec.name] = spec
        self.tools.append(tool)
        self._refresh_tool_defs()

    def remove_tool(self, tool: Callable[..., Any] | str) -> None:
        name = tool if isinstance(tool, str) else getattr(tool, "__name__", "")
        spec = self.tool_map.pop(name, None)
        if spec is None:
            raise ConfigError(f"no tool named {name!r} to remove")
        self.tools = [t for t in self.tools if t is not spec.func]
        self._refresh_tool_defs()

    def _refresh_tool_defs(self) -> None:
        self.tool_defs = [t.tool_def for t in self.tool_map.values()]

    # -- the loop ----------------------------------------------------------------------------
    @stop
    async def no_tools_called(self, state: State) -> bool:
        if not state["trajectory"]:
            return False
        return not state["trajectory"][-1]["completion"][-1].get("tool_calls")

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        calls = messages[-1].get("tool_calls") or []
        counts = state.setdefault("tool_call_counts", Counter())
        for call in calls:
            counts[call["function"]["name"]] += 1
        if len(calls) == 1:
            return [await self._answer(calls[0], messages, state)]
        return list(await asyncio.gather(*(self._answer(c, messages, state) for c in calls)))

    async def _answer(self, call: dict[str, Any], messages: Messages, state: State) -> ToolMessage:
        call_id = call.get("id", "")
        content = await self.run_tool_call(
            call["function"]["name"], call["function"].get("arguments"), messages, state
        )
        return ToolMessage(content=content, tool_call_id=call_id)

    async def run_tool_call(
        self, name: str, raw_arguments: Any, messages: Messages, state: State
    ) -> Any:
        """The content of the tool message answering one call."""
        tool = self.tool_map.get(name)
        if tool is None:
            available = ", ".join(sorted(self.tool_map)) or "none"
            return f"Error: unknown tool {name!r}. Available tools: {available}."
        try:
            arguments = _parse_arguments(raw_arguments)
        except ValueError as e:
            if self._stops_on(ToolParseError) or self._stops_on(json.JSONDecodeError):
                raise ToolParseError(f"tool {name!r}: {e}") from e
            return f"Error: arguments for tool {name!r} {e}. Send a JSON object."
        try:
            kwargs = tool.validate(arguments)
        except ValidationError as e:
            if self._stops_on(ToolParseError):
                raise ToolParseError(f"tool {name!r}: {describe_validation_error(e)}") from e
            return f"Error: invalid arguments for tool {name!r}: {describe_validation_error(e)}"
        kwargs = await self.prepare_tool_args(tool, kwargs, messages, state)
        try:
            result = await self.call_tool(tool, kwargs)
        except TimeoutError:
            return f"Error: tool {name!r} timed out after {self.tool_timeout:g}s"
        except Exception as e:
            if self.stop_errors and isinstance(e, self.stop_errors):
                if isinstance(e, InfraError):  # keep the flag: the trainer must mask it
                    raise
                raise ToolCallError(f"tool {name!r} raised {type(e).__name__}: {e}") from e
            return self.error_formatter(e)
        return _tool_content(result)

    def _stops_on(self, error_type: type[Exception]) -> bool:
        return any(issubclass(error_type, s) for s in self.stop_errors)

    async def prepare_tool_args(
        self, tool: Tool, kwargs: dict[str, Any], messages: Messages, state: State
    ) -> dict[str, Any]:
        """Hook for StatefulToolEnv: add hidden arguments."""
        return kwargs

    async def call_tool(self, tool: Tool, kwargs: dict[str, Any]) -> Any:
        if tool.is_async:
            call = tool.func(**kwargs)
        else:
            call = self.run_sync(tool.func, **kwargs)
        if self.tool_timeout:
            return await asyncio.wait_for(call, self.tool_timeout)
        return await call

    def metric_names(self) -> list[str]:
        return [*super().metric_names(), "total_tool_calls", *(f"{n}_calls" for n in self.tool_map)]

    def state_to_output(self, state: State, state_columns: list[str] | None = None):
        out = super().state_to_output(state, state_columns)
        counts = state.get("tool_call_counts") or {}
        tool_metrics = {"total_tool_calls": float(sum(counts.values()))}
        for name in self.tool_map:
            tool_metrics[f"{name}_calls"] = float(counts.get(name, 0))
        out["metrics"] = {**out["metrics"], **tool_metrics}
        out.update(tool_metrics)  # type: ignore[typeddict-item]
        return out


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
    if isinstance(result, list) and all(
        isinstance(p, dict) and p.get("type") in ("text", "image_url") for p in result
    ):
        return result  # multimodal content parts pass through
    return result if isinstance(result, str) else str(result)
