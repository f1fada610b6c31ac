"""The `@vf.stop` conditions and `@vf.cleanup` handlers of one environment object.

Both are found once, when the environment is built (`discover_decorated`), and kept in
upstream's shapes: `conditions` is the list classic subclasses iterate as
`self._stop_conditions`, `handlers` the list they know as `self._cleanup_handlers`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from verifiers.state import State, record_error
from verifiers.utils.callables import CallSpec, call_spec, is_async_callable

logger = logging.getLogger("verifiers")

StopCondition = Callable[[State], Awaitable[Any]]
SyncRunner = Callable[..., Awaitable[Any]]
F = TypeVar("F", bound=Callable[..., Any])


def mark_stopped(state: State, condition: str) -> None:
    """End the rollout, naming the condition that ended it."""
    state["is_completed"] = True
    state["stop_condition"] = condition
    for step in state["trajectory"]:
        if step.get("is_truncated"):
            state["is_truncated"] = True
            return


def first_cleanup(state: State) -> bool:
    """Whether this rollout's cleanup is still to run (True once: the handlers run once per
    rollout, whichever of the loop's end or a subclass's `_cleanup` call comes first)."""
    if dict.get(state, "_cleaned_up"):  # a plain key: no `State.get` call
        return False
    state["_cleaned_up"] = True
    return True


_PLAIN_FORM = "__vf_plain_form__"


def plain_form(form: Callable[[Any, State], bool]) -> Callable[[F], F]:
    """Give a built-in async stop condition the plain function its body calls,
    `form(env, state)`: `StopConditions.check` calls that, without a coroutine per check,
    while the method is not overridden (the method stays async for subclasses to await)."""

    def mark(method: F) -> F:
        setattr(method, _PLAIN_FORM, form)
        return method

    return mark


class StopConditions:
    """Stop conditions in priority order; the first that holds ends the rollout."""

    def __init__(self, conditions: list[Callable[..., Any]]) -> None:
        # Sync conditions are wrapped once here, so checking them never asks.
        self.conditions: list[StopCondition] = [_as_async(c) for c in conditions]
        # What `check` calls for each: a built-in's plain form bound to its environment, or
        # the condition itself; rebuilt if a subclass edits `conditions` (upstream's
        # `self._stop_conditions`) after construction.
        self._checked = list(self.conditions)
        self._calls = [_plain_call(c) for c in self.conditions]

    async def check(self, state: State) -> bool:
        conditions = self.conditions
        if conditions != self._checked:
            self._checked = list(conditions)
            self._calls = [_plain_call(c) for c in conditions]
        for condition, (plain, env) in zip(conditions, self._calls, strict=True):
            held = plain(env, state) if plain is not None else await condition(state)
            if held:
                mark_stopped(state, getattr(condition, "__name__", "stop"))
                return True
        return False

    async def render(self, state: State, condition: StopCondition) -> bool:
        """Check one condition; when it holds, mark the rollout stopped by it."""
        if await condition(state):
            mark_stopped(state, getattr(condition, "__name__", "stop"))
            return True
        return False


class CleanupHandlers:
    """Cleanup handlers in priority order, each called with the named arguments it asks for
    (`state`, `env`, `task`, `resources`), or with the state alone when it names its state
    otherwise. A failing handler is recorded on the state and the others still run."""

    def __init__(self, handlers: list[Callable[..., Any]], run_sync: SyncRunner) -> None:
        self.handlers = handlers
        self._run_sync = run_sync
        self._specs: dict[Any, CallSpec] = {}  # per handler, read on its first call

    async def run(self, state: State, context: dict[str, Any]) -> None:
        for handler in self.handlers:
            try:
                await self._call(handler, state, context)
            except Exception as e:
                if state.get("error") is None:
                    record_error(state, e, "cleanup")
                name = getattr(handler, "__name__", repr(handler))
                logger.warning("cleanup handler %s failed: %s", name, e)

    async def _call(self, handler: Any, state: State, context: dict[str, Any]) -> None:
        spec = self._specs.get(handler)
        if spec is None:
            spec = self._specs[handler] = call_spec(handler)
        kwargs = spec.select(context)
        args: tuple[Any, ...] = ()
        if spec.params is not None and not kwargs and spec.required:
            args, kwargs = (state,), {}  # a handler naming its state otherwise
        if spec.is_async:
            await handler(*args, **kwargs)
        else:
            await self._run_sync(handler, *args, **kwargs)


def _plain_call(condition: StopCondition) -> tuple[Callable[[Any, State], bool] | None, Any]:
    form = getattr(getattr(condition, "__func__", None), _PLAIN_FORM, None)
    return (form, condition.__self__) if form is not None else (None, None)  # type: ignore[attr-defined]


def _as_async(condition: Callable[..., Any]) -> StopCondition:
    if is_async_callable(condition):
        return condition

    @functools.wraps(condition)
    async def checked(state: State) -> Any:
        return condition(state)

    return checked
