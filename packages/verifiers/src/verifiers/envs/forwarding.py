"""A method of a composed part, reachable on its owner under the owner's classic name.

`Environment` keeps one job per object (its datasets, its threads for sync user code) but
users and subclasses call those jobs on the environment (`env.get_dataset()`,
`await self.run_sync(f)`), as upstream's API has them: `get_dataset = forward(EnvDatasets.get,
"datasets")` makes `env.get_dataset(...)` call `env.datasets.get(...)`, typed as that method.
A subclass may still define the method itself. `forward_attribute` does the same for a value
read from a part (`provider = forward_attribute[Provider]("sandbox_leases")`), read-only as a
property without a setter is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


class forward(Generic[P, R]):
    """Descriptor: `owner.<name>` is `owner.<part>.<method name>` (or `<part>.<name>` when
    `name` is given: the part's own method of that signature under another name)."""

    def __init__(
        self, method: Callable[Concatenate[Any, P], R], part: str, name: str | None = None
    ) -> None:
        self.method_name = name or method.__name__
        self.part = part
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> forward[P, R]: ...

    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> Callable[P, R]: ...

    def __get__(self, obj: object | None, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        bound: Callable[P, R] = getattr(getattr(obj, self.part), self.method_name)
        return bound

    def __call__(self, owner: Any, *args: P.args, **kwargs: P.kwargs) -> R:
        """Called on the class (`Environment.get_dataset(env, ...)`, as an explicit base
        call in a subclass): the same as on the instance."""
        method: Callable[P, R] = getattr(getattr(owner, self.part), self.method_name)
        return method(*args, **kwargs)


class forward_attribute(Generic[T]):
    """Descriptor: `owner.<name>` reads `owner.<part>.<name>`; assigning it raises
    `AttributeError`."""

    def __init__(self, part: str) -> None:
        self.part = part
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> forward_attribute[T]: ...

    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> T: ...

    def __get__(self, obj: object | None, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(getattr(obj, self.part), self.name)

    def __set__(self, obj: object, value: Any) -> None:
        raise AttributeError(f"{self.name!r} is read from {self.part!r} and cannot be set")
