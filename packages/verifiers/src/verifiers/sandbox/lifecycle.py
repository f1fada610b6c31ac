"""Cleaning up when an event loop ends: a provider used from `asyncio.run` after
`asyncio.run` (a trainer's step, a notebook's `evaluate_sync`) must not leave that loop's
sandboxes running, nor its helper processes unreaped.

asyncio has no loop-teardown callback, but `asyncio.run` (like `asyncio.Runner` and
pytest-asyncio) closes every async generator still open with `loop.shutdown_asyncgens()`
before closing the loop, while the loop still runs: an async generator parked at a `yield`
gets `GeneratorExit` there, and its `finally` can await the clean-up."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable

logger = logging.getLogger("verifiers.sandbox")

# loop -> {id(owner): the parked generator}; weak on the loop, and the generators do not
# reference it, so a loop closed without shutting its generators down is still collected.
_WATCHERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, AsyncGenerator]] = (
    weakref.WeakKeyDictionary()
)


async def at_loop_end(owner: object, callback: Callable[[], Awaitable[None]]) -> None:
    """Run `await callback()` in the running loop when it shuts down (once per owner and
    loop; later calls for the same pair cost a dictionary lookup)."""
    loop = asyncio.get_running_loop()
    watchers = _WATCHERS.setdefault(loop, {})
    key = id(owner)
    if key in watchers:
        return

    async def watch() -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            _WATCHERS.get(asyncio.get_running_loop(), {}).pop(key, None)
            try:
                await callback()
            except Exception as e:  # clean-up is best effort; asyncio would log it obscurely
                logger.warning("sandbox clean-up at the end of an event loop failed: %r", e)

    gen = watch()
    watchers[key] = gen  # a strong reference: collected early, it would run `finally` early
    await gen.__anext__()  # registers it with the loop (its first-iteration hook)
