"""Introspection of user callables, done once when they are registered."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CallSpec:
    """What a user function accepts: its parameter names and whether it is async."""

    name: str
    params: frozenset[str] | None  # None: it takes **kwargs, so it gets everything
    required: tuple[str, ...]
    is_async: bool
    returns_list: bool

    def select(self, available: dict[str, Any]) -> dict[str, Any]:
        if self.params is None:
            return available
        return {k: available[k] for k in self.params if k in available}

    def missing(self, available_names: Any) -> list[str]:
        return [p for p in self.required if p not in available_names]


def is_async_callable(func: Callable[..., Any]) -> bool:
    while isinstance(func, functools.partial):
        func = func.func
    if inspect.iscoroutinefunction(func):
        return True
    call = getattr(func, "__call__", None)  # noqa: B004 - callable objects with async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def call_spec(func: Callable[..., Any]) -> CallSpec:
    name = getattr(func, "__name__", None) or type(func).__name__
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return CallSpec(name, None, (), is_async_callable(func), False)
    params: set[str] = set()
    required: list[str] = []
    takes_kwargs = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            takes_kwargs = True
        elif p.kind is p.VAR_POSITIONAL:
            continue
        else:
            params.add(p.name)
            if p.default is p.empty:
                required.append(p.name)
    ann = sig.return_annotation
    returns_list = ann is list or str(ann).startswith(("list", "List", "typing.List"))
    return CallSpec(
        name=name,
        params=None if takes_kwargs else frozenset(params),
        required=tuple(required),
        is_async=is_async_callable(func),
        returns_list=returns_list,
    )
