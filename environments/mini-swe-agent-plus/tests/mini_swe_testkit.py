"""What mini-swe-agent-plus's test modules share: a scripted agent playing the scenario its
task names."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from verifiers.testing import Reply
from verifiers.testing.responders import message_text


def scenario_agent(
    tag: str, scripts: Mapping[str, Sequence[Reply]]
) -> Callable[[dict[str, Any]], Reply]:
    """A model for `ScriptedServer`: the task text (the first user message) names its
    scenario as `<tag><name>`; the reply is that scenario's script's reply for this turn, its
    last once the script has run out."""
    pattern = re.compile(re.escape(tag) + r"<([^>]+)>")

    def agent(body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        found = pattern.search(message_text(messages[1]))
        assert found is not None, f"the task names no {tag}<...> scenario"
        replies = scripts[found.group(1)]
        turn = sum(1 for m in messages if m["role"] == "assistant")
        return replies[min(turn, len(replies) - 1)]

    return agent
