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


def plain_form(form: Callable[[Any, State], Any]) -> Callable[[F], F]:
    """Give a built-in async stop condition or cleanup handler the plain function its body
    calls, `form(env, state)`: `StopConditions` and `CleanupHandlers` call that, without a
    coroutine per call, while the method is not overridden (the method stays async for
    subclasses to await)."""

    def mark(method: F) -> F:
        setattr(method, _PLAIN_FORM, form)
        return method

    return mark


# Plain forms whose conditions one call answers at once: (the forms, a check that holds
# whenever any of them does). See `fold_stop_forms`.
_FOLDS: list[tuple[frozenset[Callable[..., Any]], Callable[[Any, State], bool]]] = []


def fold_stop_forms(
    forms: list[Callable[[Any, State], Any]], any_holds: Callable[[Any, State], bool]
) -> None:
    """Let `StopConditions.check_now` ask `any_holds(env, state)` once instead of each of
    `forms` an environment's conditions hold (all on that one environment): while it and
    the other conditions answer False (the rollout goes on, the common case), no condition
    is called one by one. `any_holds` must hold whenever any of `forms` does."""
    _FOLDS.append((frozenset(forms), any_holds))


class StopConditions:
    """Stop conditions in priority order; the first that holds ends the rollout."""

    def __init__(self, conditions: list[Callable[..., Any]]) -> None:
        # Sync conditions are wrapped once here, so checking them never asks.
        self.conditions: list[StopCondition] = [_as_async(c) for c in conditions]
        # What `check` calls for each: a built-in's plain form bound to its environment, or
        # the condition itself; rebuilt if a subclass edits `conditions` (upstream's
        # `self._stop_conditions`) after construction.
        self._checked: list[StopCondition] = []
        self._calls: list[tuple[StopCondition, str, Callable[[Any, State], bool] | None, Any]]
        self._all_plain = False
        # (checks that hold whenever a condition does, their environment): see `_plan`
        self._folded: tuple[tuple[Callable[[Any, State], Any], ...], Any] | None = None
        self._plan()

    def _plan(self) -> None:
        conditions = self.conditions
        self._checked = list(conditions)
        self._calls = [(c, getattr(c, "__name__", "stop"), *_plain_call(c)) for c in conditions]
        self._all_plain = all(plain is not None for _, _, plain, _ in self._calls)
        self._folded = None
        if self._all_plain and len({id(env) for _, _, _, env in self._calls}) == 1:
            forms = [plain for _, _, plain, _ in self._calls if plain is not None]
            # those a fold covers, in one call; the others one by one
            folds: list[Callable[[Any, State], Any]] = []
            rest = set(forms)
            for covered, any_holds in _FOLDS:
                if len(covered & rest) > 1:
                    folds.append(any_holds)
                    rest -= covered
            folds = [f for f in forms if f in rest] + folds
            if len(folds) < len(forms):
                self._folded = (tuple(folds), self._calls[0][3])

    def check_now(self, state: State) -> bool | None:
        """`check` without a coroutine when every condition has a plain form; None when
        one must be awaited (then call `check`)."""
        if self.conditions != self._checked:
            self._plan()
        folded = self._folded
        if folded is not None:
            checks, env = folded
            try:
                for check in checks:
                    if check(env, state):
                        break
                else:
                    return False  # none holds: the rollout goes on
            except Exception:
                pass  # the conditions one by one, in order, say what holds or raises
        elif not self._all_plain:
            return None
        for _, name, plain, env in self._calls:
            if plain(env, state):  # type: ignore[misc]
                mark_stopped(state, name)
                return True
        return False

    async def check(self, state: State) -> bool:
        if self.conditions != self._checked:
            self._plan()
        for condition, name, plain, env in self._calls:
            held = plain(env, state) if plain is not None else await condition(state)
            if held:
                mark_stopped(state, name)
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
        # The built-ins' plain forms (`plain_form`), when every handler has one; rebuilt
        # if a subclass edits `handlers` (upstream's `self._cleanup_handlers`).
        self._planned: list[Callable[..., Any]] | None = None
        self._plain: list[tuple[Callable[..., Any], Callable[[Any, State], Any], Any]] | None
        self._plain = None

    def run_plain(self, state: State) -> bool:
        """Run the handlers here when every one has a plain form (the built-in
        `render_state` alone, say), with `run`'s handling of failures; False, having run
        nothing, when one must be awaited (then call `run`)."""
        if self.handlers != self._planned:
            self._planned = list(self.handlers)
            calls = [(h, *_plain_call(h)) for h in self.handlers]
            plain = all(form is not None for _, form, _ in calls)
            self._plain = calls if plain else None  # type: ignore[assignment]
        if self._plain is None:
            return False
        for handler, form, env in self._plain:
            try:
                form(env, state)
            except Exception as e:
                self._failed(handler, state, e)
        return True

    async def run(self, state: State, context: dict[str, Any]) -> None:
        for handler in self.handlers:
            try:
                await self._call(handler, state, context)
            except Exception as e:
                self._failed(handler, state, e)

    @staticmethod
    def _failed(handler: Any, state: State, e: Exception) -> None:
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


def _plain_call(method: Callable[..., Any]) -> tuple[Callable[[Any, State], Any] | None, Any]:
    """A bound built-in's plain form and its object, or (None, None)."""
    form = getattr(getattr(method, "__func__", None), _PLAIN_FORM, None)
    return (form, method.__self__) if form is not None else (None, None)  # type: ignore[attr-defined]


def _as_async(condition: Callable[..., Any]) -> StopCondition:
    if is_async_callable(condition):
        return condition

    @functools.wraps(condition)
    async def checked(state: State) -> Any:
        return condition(state)

    return checked
