"""The sandboxes a provider has running, and how they close together: all of them when the
provider closes, or those of one event loop when that loop ends (`lifecycle.at_loop_end`);
every tier's provider keeps its running sandboxes in one of these."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar

from verifiers.sandbox import cgroups, lifecycle


class _Closable(Protocol):
    loop: asyncio.AbstractEventLoop  # the loop the sandbox's pipes or calls belong to

    async def close(self) -> None: ...


B = TypeVar("B", bound=_Closable)


class LiveSandboxes(Generic[B]):
    """A set of running sandboxes. `track` also makes an agent sandbox leave the set when it
    closes; `close` closes them (all, or those of the running event loop) concurrently, best
    effort: one failing close does not keep the others open."""

    def __init__(self) -> None:
        self._boxes: set[B] = set()

    def add(self, box: B) -> None:
        self._boxes.add(box)

    def discard(self, box: B) -> None:
        self._boxes.discard(box)

    def track(self, box: B) -> B:
        """Add `box`, an agent sandbox, until it closes (its `on_close` hook); returns it."""
        self._boxes.add(box)
        box.on_close = self._boxes.discard  # type: ignore[attr-defined]
        return box

    async def close_with_loop(self) -> None:
        """Close the running loop's sandboxes when it ends (once per loop; then cheap)."""
        await lifecycle.at_loop_end(self, self._loop_ended)

    async def _loop_ended(self) -> None:
        await self.close(this_loop_only=True)

    def __len__(self) -> int:
        return len(self._boxes)

    def __contains__(self, box: object) -> bool:
        return box in self._boxes

    def __iter__(self) -> Iterator[B]:
        return iter(list(self._boxes))

    def take(self) -> list[B]:
        """Every sandbox, leaving the set empty (for providers that close them otherwise)."""
        boxes, self._boxes = list(self._boxes), set()
        return boxes

    async def close(self, this_loop_only: bool = False) -> None:
        """Close the sandboxes, or with `this_loop_only` those made in the running loop (their
        pipes belong to it: the loop is ending)."""
        boxes = list(self._boxes)
        if this_loop_only:
            loop = asyncio.get_running_loop()
            boxes = [b for b in boxes if b.loop is loop]
        await asyncio.gather(*(b.close() for b in boxes), return_exceptions=True)

    async def close_and_reclaim(self) -> None:
        """Close every sandbox, then retry removing the cgroups whose removal was deferred."""
        await self.close()
        await asyncio.to_thread(cgroups.reclaim_deferred)
