"""The `openai` SDK, imported only where it is used.

`import openai` costs about a second of CPU (its type modules), and our own client speaks
HTTP without it. Modules on the rollout path ask here instead of importing it at the top, so a
run that never touches an SDK object never pays for it.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any


def imported_openai() -> ModuleType | None:
    """`openai` if something already imported it, else None. For isinstance checks against
    its classes: no instance of them (client or exception) exists before the module does."""
    return sys.modules.get("openai")


def is_openai_client(obj: Any) -> bool:
    """Whether `obj` is an `openai.AsyncOpenAI` or `openai.OpenAI` (or a subclass), without
    importing `openai`."""
    openai = imported_openai()
    return openai is not None and isinstance(obj, (openai.AsyncOpenAI, openai.OpenAI))
