"""What the scripted server saw and said: the newest request and response bodies, bounded."""

from __future__ import annotations

from typing import Any

__all__ = ["RequestLog"]


class RequestLog:
    """Received POST bodies (`requests`), the non-streamed completions sent back
    (`responses`), each keeping the newest `max_recorded` (0: none), and `request_count`, every
    POST ever received."""

    def __init__(self, max_recorded: int) -> None:
        self.max_recorded = max_recorded
        self.requests: list[dict[str, Any]] = []
        self.responses: list[dict[str, Any]] = []
        self.request_count = 0

    def request(self, body: dict[str, Any]) -> None:
        self.request_count += 1
        self._keep(self.requests, body)

    def response(self, body: dict[str, Any]) -> None:
        self._keep(self.responses, body)

    def clear(self) -> None:
        self.requests.clear()
        self.responses.clear()
        self.request_count = 0

    def _keep(self, log: list[dict[str, Any]], body: dict[str, Any]) -> None:
        if self.max_recorded > 0:
            if len(log) >= self.max_recorded:  # drop the older half at once, not one per append
                del log[: max(1, self.max_recorded // 2)]
            log.append(body)
