"""StatefulToolEnv: tools with hidden, per-rollout arguments injected by the environment."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from verifiers.envs.tool_env import ToolEnv
from verifiers.errors import ToolCallError
from verifiers.state import State
from verifiers.tools import Tool
from verifiers.types import Messages


class StatefulToolEnv(ToolEnv):
    """A ToolEnv whose subclasses implement `update_tool_args` to add hidden arguments (a
    sandbox id, a session, ...). Arguments named in `add_tool(..., args_to_skip=[...])` vanish
    from the schema the model sees and must be supplied by `update_tool_args`."""

    def add_tool(self, tool: Callable[..., Any], args_to_skip: Iterable[str] = ()) -> None:
        super().add_tool(tool, args_to_skip)

    def update_tool_args(
        self,
        tool_name: str,
        tool_args: dict[str, Any],
        messages: Messages,
        state: State,
        **kwargs: Any,
    ) -> dict[str, Any]:
        raise NotImplementedError(
            f"{type(self).__name__} must implement update_tool_args(tool_name, tool_args, "
            "messages, state) to supply hidden tool arguments"
        )

    async def prepare_tool_args(
        self, tool: Tool, kwargs: dict[str, Any], messages: Messages, state: State
    ) -> dict[str, Any]:
        updated = self.update_tool_args(tool.name, dict(kwargs), messages, state)
        if inspect.isawaitable(updated):
            updated = await updated
        if not isinstance(updated, dict):
            raise ToolCallError(
                f"update_tool_args returned {type(updated).__name__} for {tool.name!r}, not a dict"
            )
        missing = [a for a in tool.skipped if a not in updated]
        if missing:
            raise ToolCallError(
                f"update_tool_args did not supply hidden argument(s) {missing} of {tool.name!r}"
            )
        return updated
