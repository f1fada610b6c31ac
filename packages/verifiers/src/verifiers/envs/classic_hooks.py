"""How a MultiTurnEnv class's hooks are called, decided once when the class is defined.

Subclasses written for different verifiers releases implement the same hooks in different
shapes:

- `is_completed(messages, state)` (0.1.2-0.1.7, the "dict era") next to the stop conditions,
  or an `is_completed(state)` override (0.1.8+), or none (`@vf.stop` conditions only);
- `env_response` returning `(messages, state)` (dict era), a message list, one message, or
  nothing; sync (0.1.2) or async;
- sync or async `setup_state`, `init_state` and `add_model_response`.

`hook_calls(cls, MultiTurnEnv)` reads the class once and picks one caller per hook, so the rollout loop
calls them without asking again. A reply's shape is only known when it comes back, so an
`env_response` written outside this SDK goes through `classic_reply`; one marked
`@replies_with_messages` (the SDK's own, which return a list of messages) does not.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from verifiers.envs.rollout_hooks import mark_stopped
from verifiers.envs.trajectory import messages_so_far
from verifiers.state import State
from verifiers.types import Messages
from verifiers.utils.callables import is_async_callable

if TYPE_CHECKING:
    from verifiers.envs.multiturn_env import MultiTurnEnv

F = TypeVar("F", bound=Callable[..., Any])

_REPLIES_WITH_MESSAGES = "__vf_replies_with_messages__"


def replies_with_messages(func: F) -> F:
    """Mark an `env_response` that always returns a list of messages (or, in a text
    environment, text): its replies need no classic adaptation."""
    setattr(func, _REPLIES_WITH_MESSAGES, True)
    return func


Reply = Callable[["MultiTurnEnv", Messages, State], Awaitable[Any]]
IsDone = Callable[["MultiTurnEnv", State], Awaitable[bool]]
Setup = Callable[["MultiTurnEnv", State], Awaitable[None]]
InitState = Callable[..., Awaitable[State]]
AddResponse = Callable[..., Awaitable[None]]


@dataclass(frozen=True, slots=True)
class HookCalls:
    """One caller per hook of a class (each takes the environment first)."""

    init_state: InitState
    setup_state: Setup
    env_reply: Reply
    is_done: IsDone
    add_model_response: AddResponse
    # Whether the class keeps MultiTurnEnv's own `init_state`, `setup_state` (which does
    # nothing), `is_completed` (the stop conditions), `add_model_response` and `cleanup`
    # (the handlers): the loop then skips `setup_state` and does the others' work without
    # their coroutines, unless the instance itself was given the method.
    base_init_state: bool = False
    base_setup_state: bool = False
    base_is_completed: bool = False
    base_add_model_response: bool = False
    base_cleanup: bool = False


def hook_calls(cls: type[MultiTurnEnv], base: type[MultiTurnEnv]) -> HookCalls:
    """The callers of `cls`'s hooks (`base`: MultiTurnEnv, whose own hooks need no call)."""
    return HookCalls(
        init_state=method_caller("init_state", is_async_callable(cls.init_state)),
        setup_state=_setup_state_call(is_async_callable(cls.setup_state)),
        env_reply=_env_reply_call(cls.env_response),
        is_done=_is_done_call(cls.is_completed),
        add_model_response=method_caller(
            "add_model_response", is_async_callable(cls.add_model_response)
        ),
        base_init_state=cls.init_state is base.init_state,
        base_setup_state=cls.setup_state is base.setup_state,
        base_is_completed=cls.is_completed is base.is_completed,
        base_add_model_response=cls.add_model_response is base.add_model_response,
        base_cleanup=cls.cleanup is base.cleanup,
    )


def is_dict_era_is_completed(func: Callable[..., Any]) -> bool:
    """`is_completed(self, messages, state, ...)`: the 0.1.2-0.1.7 signature."""
    try:
        params = list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return False
    return len(params) >= 3 and params[1] == "messages"


def classic_reply(reply: Any, messages: Messages, state: State) -> Any:
    """An `env_response` reply in any classic shape as the messages to append (text, as it
    is, in a text environment): `(messages, state)` updates the state first; one message
    becomes a list of one; nothing becomes no messages."""
    if isinstance(reply, tuple) and len(reply) == 2 and isinstance(reply[1], dict):
        reply, new_state = reply
        if new_state is not state:
            state.update(new_state)
    if isinstance(messages, str):
        return reply
    if isinstance(reply, dict):
        return [reply]
    return list(reply or [])


def method_caller(name: str, is_async: bool) -> Callable[..., Awaitable[Any]]:
    """A caller of the environment's method `name` (`caller(env, *args)`), for a class whose
    method is async or a classic sync one."""
    if is_async:

        def call_async(env: MultiTurnEnv, *args: Any) -> Awaitable[Any]:
            # the method's own coroutine, awaited by the loop: no coroutine layer of ours
            return getattr(env, name)(*args)  # type: ignore[no-any-return]

        return call_async

    async def call_sync(env: MultiTurnEnv, *args: Any) -> Any:
        # A classic sync override, called in the loop; one wrapped by a decorator that
        # hides its coroutine still gets awaited.
        result = getattr(env, name)(*args)
        return await result if inspect.isawaitable(result) else result

    return call_sync


def _setup_state_call(is_async: bool) -> Setup:
    async def setup(env: MultiTurnEnv, state: State) -> None:
        if is_async:
            result = await env.setup_state(state)
        else:
            result = await env.run_sync(env.setup_state, state)
        if isinstance(result, dict) and result is not state:
            state.update(result)  # a classic setup_state returning a new dict

    return setup


def _env_reply_call(env_response: Callable[..., Any]) -> Reply:
    is_async = is_async_callable(env_response)
    if getattr(env_response, _REPLIES_WITH_MESSAGES, False) and is_async:

        async def reply_messages(env: MultiTurnEnv, messages: Messages, state: State) -> Any:
            return await env.env_response(messages, state)

        return reply_messages

    async def reply_classic(env: MultiTurnEnv, messages: Messages, state: State) -> Any:
        if is_async:
            reply = await env.env_response(messages, state)
        else:
            reply = await env.run_sync(env.env_response, messages, state)
        return classic_reply(reply, messages, state)

    return reply_classic


def _is_done_call(impl: Callable[..., Any]) -> IsDone:
    if not is_dict_era_is_completed(impl):

        def modern(env: MultiTurnEnv, state: State) -> Awaitable[bool]:
            # through the attribute: an override, or one set on the instance, is what answers;
            # its own coroutine is what the loop awaits (read as true or false there)
            return env.is_completed(state)

        return modern
    legacy_is_async = is_async_callable(impl)  # 0.1.2's is sync

    async def dict_era(env: MultiTurnEnv, state: State) -> bool:
        # The stop conditions first, then the class's own `is_completed(messages, state)`
        # (which may ask the base again through `super()`, as 0.1.x subclasses do).
        if state.get("is_completed") or await env.stop_conditions.check(state):
            return True
        own_is_completed: Any = env.is_completed  # the dict-era signature
        done = own_is_completed(messages_so_far(state), state)
        if legacy_is_async or inspect.isawaitable(done):
            done = await done
        if done:
            mark_stopped(state, "is_completed")
            return True
        return False

    return dict_era
