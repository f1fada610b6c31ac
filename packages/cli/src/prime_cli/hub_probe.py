"""Whether the hub a new package will name as its SDK's source answers at all.

`prime env init` writes the hub's index into pyproject.toml without needing the hub; when the
hub does not answer, the first `uv pip install` fails far from the cause, so init says so.
"""

from __future__ import annotations

import httpx

from .scaffold import index_url

PROBE_TIMEOUT_S = 5.0  # a hub that answers at all does so well within this


def unreachable_reason(hub_url: str, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """Why nothing answered at the hub's index, or None when it answered (any HTTP status:
    a private or still empty hub is reachable, and that is all this asks)."""
    try:
        httpx.get(index_url(hub_url) + "verifiers/", timeout=timeout, follow_redirects=False)
    except httpx.TimeoutException:
        return f"no answer within {timeout:g} s"
    except httpx.TransportError as e:  # refused, unknown host, TLS failure
        return str(e) or type(e).__name__
    return None


def unreachable_hub_warning(hub_url: str) -> str | None:
    """One line for `prime env init` to print when the hub it wrote down does not answer."""
    reason = unreachable_reason(hub_url)
    if reason is None:
        return None
    return (
        f"warning: cannot reach the hub at {hub_url} ({reason}); pyproject.toml names its index "
        f"{index_url(hub_url)} as the source of verifiers: start that hub before installing, "
        "or put your hub's index URL in [tool.uv.index] there (and `prime config set hub_url "
        "URL` for next time)"
    )
