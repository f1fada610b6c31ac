"""`judge_endpoint`: the judge endpoint arguments of the INTELLECT-3 environments, one rule.

Those environments name their judge with ``judge_base_url`` and ``judge_api_key_var``, and
read ``judge_api_key_var=None`` as "this judge needs no key" (a local vLLM judge): the key
sent is ``EMPTY``, never an ``OPENAI_API_KEY`` that happens to be set. That differs from
`JudgeRubric`'s own ``judge_api_key_var=None`` (which falls back to ``OPENAI_API_KEY``), so
the rule lives here, once, and environments pass its result to `JudgeRubric`.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["OPENAI_URL", "judge_endpoint"]

OPENAI_URL = "https://api.openai.com/v1"


def judge_endpoint(
    base_url: str | None,
    api_key_var: str | None,
    *,
    timeout: float | None = None,
    max_retries: int | None = None,
) -> dict[str, Any]:
    """`JudgeRubric` keyword arguments for a judge named by URL and key variable.

    * ``api_key_var`` None: ``judge_client`` is an ``openai.AsyncOpenAI`` with the key
      ``"EMPTY"`` for ``base_url``, else ``$OPENAI_BASE_URL``, else OpenAI's API.
    * ``api_key_var`` given: ``judge_base_url`` / ``judge_api_key_var`` as given, so the
      rubric reads the key from that variable (which must be set) and the URL from
      ``base_url`` or ``$OPENAI_BASE_URL``.

    ``timeout`` / ``max_retries`` configure the returned ``AsyncOpenAI`` (for code that calls
    it directly); requests the rubric sends use the rubric's own ``judge_timeout`` and
    ``judge_max_retries``.
    """
    if api_key_var is not None:
        return {"judge_base_url": base_url, "judge_api_key_var": api_key_var}
    import openai

    options: dict[str, Any] = {}
    if timeout is not None:
        options["timeout"] = timeout
    if max_retries is not None:
        options["max_retries"] = max_retries
    url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL
    return {"judge_client": openai.AsyncOpenAI(base_url=url, api_key="EMPTY", **options)}
