"""StatefulToolEnv: tools with hidden, per-rollout arguments injected by the environment."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
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
    from the schema the model sees and must be supplied by `update_tool_args`.

    Hidden arguments that are simply read from the rollout's state need no override:
    `add_tool(tool, args_from_state=["sandbox_id", "state"])` hides them too, and the default
    `update_tool_args` fills each from the state key of its name (`state`: the state itself)."""

    _update_tool_args: ClassVar[Callable[..., Awaitable[Any]]]
    # tool name -> its hidden arguments filled from the state (replaced, never mutated)
    _args_from_state: Mapping[str, tuple[str, ...]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # sync (classic) or async, read once per class
        caller = method_caller("update_tool_args", is_async_callable(cls.update_tool_args))
        cls._update_tool_args = staticmethod(caller)  # type: ignore[assignment]

    def add_tool(
        self,
        tool: Callable[..., Any],
        args_to_skip: Iterable[str] = (),
        *,
        args_from_state: Iterable[str] = (),
    ) -> None:
        from_state = tuple(args_from_state)
        super().add_tool(tool, (*args_to_skip, *from_state))
        if from_state:
            name = next(reversed(self.tool_map))  # the tool just added
            self._args_from_state = {**self._args_from_state, name: from_state}

    def remove_tool(self, tool: Callable[..., Any] | str) -> None:
        super().remove_tool(tool)
        self._args_from_state = {
            n: a for n, a in self._args_from_state.items() if n in self.tool_map
        }

    def update_tool_args(
        self,
        tool_name: str,
        tool_args: dict[str, Any],
        messages: Messages,
        state: State,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """The default: the tool's `args_from_state` added from the state. An environment that
        declares none must implement this (upstream's abstract method); one that does passes
        its other tools' arguments on as they are."""
        names = self._args_from_state.get(tool_name)
        if names is not None:
            return {**tool_args, **{n: state if n == "state" else state.get(n) for n in names}}
        if self._args_from_state:
            return tool_args
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
