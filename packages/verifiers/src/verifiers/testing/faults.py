"""Injected failures of the scripted server: `Fault` (what to do to which requests) and
`FaultScript` (the faults in force, with how often each has fired)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from verifiers.testing.responders import last_text
from verifiers.testing.sampled import prompt_text

__all__ = ["Fault", "FaultScript"]

_FAULT_KINDS = ("http", "timeout", "disconnect")


@dataclass
class Fault:
    """An injected failure for matching requests to the POST endpoints.

    ``kind``: ``"http"`` (answer ``status`` with an OpenAI-style error body; 429 carries
    ``retry-after: 0``), ``"timeout"`` (hold the request ``seconds``, then answer normally) or
    ``"disconnect"`` (close the connection without a response). ``kind`` defaults to ``"http"``
    and ``status`` to 500. It fires for the first ``times`` matching requests (``None``: no limit);
    with ``rate`` set each matching request fires with that probability from a ``seed``-ed RNG.
    ``match`` is a regex searched in the last user/tool message text (or the prompt of
    ``/v1/completions``) or a predicate ``(body) -> bool``.
    """

    status: int | None = None
    kind: str = "http"
    times: int | None = 1
    match: str | re.Pattern[str] | Callable[[dict[str, Any]], bool] | None = None
    seconds: float = 30.0
    rate: float | None = None
    seed: int = 0
    message: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in _FAULT_KINDS:
            raise ValueError(f"Fault kind must be one of {_FAULT_KINDS}, got {self.kind!r}")
        if self.kind == "http" and self.status is None:
            self.status = 500
        if isinstance(self.match, str):
            self.match = re.compile(self.match)


@dataclass(slots=True)
class _FaultState:
    fault: Fault
    fired: int = 0
    rng: random.Random = field(default_factory=random.Random)


class FaultScript:
    """The faults in force, in order; the first one that matches a request fires."""

    def __init__(self, faults: list[Fault]) -> None:
        self._states: list[_FaultState] = []
        self.set(faults)

    def __bool__(self) -> bool:
        return bool(self._states)

    @property
    def faults(self) -> list[Fault]:
        return [s.fault for s in self._states]

    def set(self, faults: list[Fault]) -> None:
        """Replace the faults (their fire counts start at zero)."""
        self._states = [_FaultState(f, 0, random.Random(f.seed)) for f in faults]

    def add(self, fault: Fault) -> None:
        self._states.append(_FaultState(fault, 0, random.Random(fault.seed)))

    def pick(self, body: dict[str, Any], completions: bool) -> Fault | None:
        """The fault this request meets (counted as fired), or None."""
        text: str | None = None
        for state in self._states:
            f = state.fault
            if f.times is not None and state.fired >= f.times:
                continue
            match = f.match
            if isinstance(match, str):  # set after construction: compiled as __post_init__ does
                match = f.match = re.compile(match)
            if match is not None:
                if isinstance(match, re.Pattern):
                    if text is None:
                        text = (
                            prompt_text(body.get("prompt"))
                            if completions
                            else last_text(body, ("user", "tool"))
                        )
                    if match.search(text) is None:
                        continue
                elif not match(body):
                    continue
            if f.rate is not None and state.rng.random() >= f.rate:
                continue
            state.fired += 1
            return f
        return None
