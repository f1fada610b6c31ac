"""Connecting to a Ray cluster: one place that checks the head answers, so an unreachable head
is a clear error within seconds rather than a hang."""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

from verifiers.errors import ClusterUnreachableError, ConfigError

#: Under `uv run`, Ray (2.44+) runs every worker with `uv run` in a copy of the driver's working
#: directory, building a new virtual environment per node. Our actors run in the interpreter the
#: nodes were started with (`ray start` in the environment that has `verifiers[ray]`), so the
#: Ray path turns that hook off unless the user set the variable.
UV_HOOK_VAR = "RAY_ENABLE_UV_RUN_RUNTIME_ENV"


def turn_off_uv_hook() -> None:
    """`RAY_ENABLE_UV_RUN_RUNTIME_ENV=0` unless the user set it. Ray reads it when `ray` is
    imported; if that happened already (a user's `import ray` first), the switch it read is
    set too, or every worker would start with `uv run` in a new, Ray-less environment."""
    os.environ.setdefault(UV_HOOK_VAR, "0")
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None and os.environ[UV_HOOK_VAR] in ("0", "false", "False"):
        setattr(constants, "RAY_ENABLE_UV_RUN_RUNTIME_ENV", False)  # noqa: B010 - not in its stubs


def require_ray() -> Any:
    """Import and return `ray`, or raise a `ConfigError` saying how to install it."""
    try:
        import ray
    except ImportError as e:  # pragma: no cover - the test environment has ray
        raise ConfigError(
            "the Ray path needs Ray: pip install 'verifiers[ray]' (on every node of the cluster)"
        ) from e
    return ray


def _host_port(address: str) -> tuple[str, int] | None:
    """`host:port` of a GCS address (`ray://host:port` is Ray Client's port); None if the
    address is not of that form (Ray then resolves it itself)."""
    rest = address.split("://", 1)[-1]
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]") or "127.0.0.1", int(port)


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Raise `ClusterUnreachableError` unless something accepts TCP at the head's address."""
    hp = _host_port(address)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=timeout):
            pass
    except OSError as e:
        raise ClusterUnreachableError(
            f"cannot reach the Ray head at {address}: {e.strerror or e}. Start one with "
            f"`ray start --head --node-ip-address=<ip>` and pass the address it prints"
        ) from e


def connect(
    address: str | None = "auto",
    *,
    namespace: str | None = None,
    timeout: float = 5.0,
    **init_kwargs: Any,
) -> Any:
    """Connect this process to a Ray cluster (once; later calls reuse the connection) and
    return `ray`.

    `address`: `"auto"` (the cluster `ray start` started on this machine, or `RAY_ADDRESS`),
    `"host:port"` of a head's GCS, or `"local"` / None for a new single-node instance bound to
    loopback. Raises `ClusterUnreachableError` when no head answers."""
    turn_off_uv_hook()
    ray = require_ray()
    if ray.is_initialized():
        return ray
    kwargs: dict[str, Any] = {"namespace": namespace, "log_to_driver": True, **init_kwargs}
    if address in (None, "local"):
        kwargs.setdefault("include_dashboard", False)
        kwargs.setdefault("_node_ip_address", "127.0.0.1")
        # (address=None would join the cluster `ray start` last started on this machine)
        ray.init(address="local", **kwargs)
        return ray
    if address == "auto" and os.environ.get("RAY_ADDRESS"):
        address = os.environ["RAY_ADDRESS"]
    if address != "auto":
        check_reachable(address, timeout)
    try:
        ray.init(address=address, **kwargs)
    except ConnectionError as e:
        raise ClusterUnreachableError(
            f"cannot connect to a Ray cluster at {address!r}: {e}. Start one with "
            f"`ray start --head` (or pass --ray local for a single-node instance)"
        ) from e
    return ray
