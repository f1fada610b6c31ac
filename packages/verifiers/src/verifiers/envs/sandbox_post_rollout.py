"""SandboxEnv's classic `post_rollout` hook, run once per rollout before scoring while the
rollout's sandbox is up. Its call shape is decided once, when the environment is built: the
0.1.6-0.1.7 form `post_rollout(self, messages, state, **kwargs)` gets the conversation."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from verifiers.envs.sandbox_leases import SandboxLeases
from verifiers.state import State


def takes_messages(hook: Callable[..., Any]) -> bool:
    """Whether `hook` (a bound method) is the classic `(messages, state, ...)` form."""
    params = [
        p
        for p in inspect.signature(hook).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return bool(params) and params[0].name == "messages"


class PostRollout:
    """Runs `hook` once per rollout (also when `destroy_sandbox` ran it and released the
    sandbox already). The states it ran for are held until `forget`, so their ids are not
    reused meanwhile."""

    def __init__(self, hook: Callable[..., Awaitable[None]], leases: SandboxLeases) -> None:
        self._hook = hook
        self._with_messages = takes_messages(hook)
        self._leases = leases
        self._ran: dict[int, State] = {}

    async def run_once(self, state: State) -> None:
        if id(state) in self._ran:
            return
        self._ran[id(state)] = state
        # no tool call needed the sandbox yet; post_rollout and the reward functions may
        box = await self._leases.settled(state.get("sandbox_id") or "")
        if box is not None:
            state["sandbox"] = box
        # without a sandbox of ours (a setup_state of its own failed) upstream still calls it
        if self._with_messages:
            prompt, completion = state.get("prompt"), state.get("completion")
            messages = list(completion or [])
            if isinstance(prompt, list):
                messages = [*prompt, *messages]
            await self._hook(messages, state)
        else:
            await self._hook(state)

    def forget(self, state: State) -> None:
        self._ran.pop(id(state), None)

    def clear(self) -> None:
        self._ran.clear()
