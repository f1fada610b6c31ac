"""The model client of the benchmarks that leave the HTTP request out (library_overhead.py,
opcodes.py): `OpenAIClient` with `_post` answering a canned chat completion after one
event-loop pass, so everything around the request runs as in a real rollout."""

from __future__ import annotations

import asyncio
from typing import Any

import verifiers as vf

REPLY = {"role": "assistant", "content": "The answer is \\boxed{5}."}


class CannedReply(vf.OpenAIClient):
    async def _post(self, payload: bytes, url: str | None = None) -> Any:
        await asyncio.sleep(0)
        return {
            "id": "x",
            "object": "chat.completion",
            "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": dict(REPLY)}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
