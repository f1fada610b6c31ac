"""A rubric's cleanup and teardown handlers (upstream 0.3.1's `@vf.cleanup` / `@vf.teardown`
methods, plus `add_cleanup_handler`), found and introspected once per rubric."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from verifiers.decorators import discover_decorated
from verifiers.utils.callables import CallSpec, call_spec


class Handlers:
    """Runs cleanup handlers (asking by name for `state` and the rollout's fields) by
    descending `cleanup_priority`, then name; teardown handlers once at the end."""

    __slots__ = ("_cleanup", "extra")

    def __init__(self) -> None:
        self.extra: list[Callable[..., Any]] = []
        self._cleanup: list[tuple[Callable[..., Any], CallSpec]] | None = None

    def add_cleanup(self, handler: Callable[..., Any]) -> None:
        self.extra.append(handler)
        self._cleanup = None

    def cleanup_plans(self, owner: object) -> list[tuple[Callable[..., Any], CallSpec]]:
        if self._cleanup is None:
            handlers = sorted(
                discover_decorated(owner, "cleanup") + self.extra,
                key=lambda h: (-getattr(h, "cleanup_priority", 0), getattr(h, "__name__", "")),
            )
            self._cleanup = [(h, call_spec(h)) for h in handlers]
        return self._cleanup

    async def cleanup(self, owner: object, available: Callable[[], dict[str, Any]]) -> None:
        plans = self.cleanup_plans(owner)
        if not plans:
            return
        avail = available()
        for handler, call in plans:
            result = handler(**call.select(avail))
            if inspect.isawaitable(result):
                await result

    @staticmethod
    async def teardown(owner: object) -> None:
        for handler in discover_decorated(owner, "teardown"):
            result = handler()
            if inspect.isawaitable(result):
                await result
