"""StatefulToolEnv: tools with hidden, per-rollout arguments injected by the environment."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, ClassVar

from verifiers.envs.classic_hooks import method_caller
from verifiers.envs.tool_env import ToolEnv, _ToolArgumentsRejected
from verifiers.errors import ToolCallError
from verifiers.state import State
from verifiers.types import Messages
from verifiers.utils.callables import is_async_callable


class StatefulToolEnv(ToolEnv):
    """A ToolEnv whose subclasses implement `update_tool_args` to add hidden arguments (a
    sandbox id, a session, ...). Arguments named in `add_tool(..., args_to_skip=[...])` vanish
    from the schema the model sees and must be supplied by `update_tool_args`."""

    _update_tool_args: ClassVar[Callable[..., Awaitable[Any]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # sync (classic) or async, read once per class
        caller = method_caller("update_tool_args", is_async_callable(cls.update_tool_args))
        cls._update_tool_args = staticmethod(caller)  # type: ignore[assignment]

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
        self, tool_name: str, tool_args: dict[str, Any], messages: Messages, state: State
    ) -> dict[str, Any]:
        """Upstream's order: the parsed arguments go through `update_tool_args` before the
        call (and its validation), so injected arguments are never refused by the schema."""
        spec = self.tool_spec(tool_name)
        if spec is None:
            return tool_args  # unknown tool: `call_tool` answers it
        sent_hidden = sorted(a for a in spec.skipped if a in tool_args)
        if sent_hidden:
            raise _ToolArgumentsRejected(
                f"Error: invalid arguments for tool {tool_name!r}: {', '.join(sent_hidden)}: "
                "set by the environment, not by the model"
            )
        updated = await self._update_tool_args(self, tool_name, dict(tool_args), messages, state)
        if not isinstance(updated, dict):
            raise ToolCallError(
                f"update_tool_args returned {type(updated).__name__} for {tool_name!r}, not a dict"
            )
        missing = [a for a in spec.skipped if a not in updated]
        if missing:
            raise ToolCallError(
                f"update_tool_args did not supply hidden argument(s) {missing} of {tool_name!r}"
            )
        return updated


StatefulToolEnv._update_tool_args = staticmethod(method_caller("update_tool_args", False))  # type: ignore[assignment]
