"""prime-rl's env servers on a Ray cluster (issue 25 item 4): one call places ZeroMQ env
servers on cluster nodes and returns their addresses.

    servers = start_env_servers("i3-math", {}, num_servers=4, workers_per_server=2,
                                resources={"env_server": 1})
    pool = EnvClientPool(servers.addresses)      # or prime-rl's [[env]] address = ...
    ...
    servers.stop()

Each server is started by a small actor on its node (`spawn_env_server`, so the server and its
workers exit when the actor or its node dies) and binds that node's IP. Beyond loopback the
servers need the shared secret (`secret=` or `$VF_ENV_SERVER_SECRET` of the caller; clients
read the same variable); without one a server on such a node refuses to start (before it
binds) and the call raises that `ConfigError` after stopping the others. The keys an
environment reads reach its servers only: `env_vars` names them, their values are read here
and set in the server processes, never in the actor's or node's environment; a request never
chooses them (the servers' key policy, `api_keys`, decides which key a model endpoint gets).
A node that dies takes its servers along: clients get infra-error records for the rollouts
that were on them (the connection drops) and the pool sends later requests elsewhere.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from verifiers.errors import ClusterError, ConfigError
from verifiers.ray.cluster import require_ray
from verifiers.serve.auth import resolve_secret
from verifiers.serve.credentials import ApiKeyPolicy, ApiKeysSetting

__all__ = ["EnvServers", "start_env_servers"]

STOP_TIMEOUT = 30.0  # seconds to wait for a server's actor to stop it


def _tcp_address(ip: str, port: int) -> str:
    return f"tcp://[{ip}]:{port}" if ":" in ip else f"tcp://{ip}:{port}"


def _free_port(ip: str) -> int:
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((ip, 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class ServerLaunch:
    """What each server's host actor is sent: `spawn_env_server`'s keyword arguments (all but
    `address`: the host binds its own node's IP) and how long to wait for the server's health
    checks."""

    spawn_kwargs: dict[str, Any] = field(repr=False)  # the secret and the keys' values too
    startup_timeout: float


class EnvServerHost:
    """The actor that owns one env server process on its node."""

    def __init__(self) -> None:
        self.server: Any = None

    def start(self, launch: ServerLaunch) -> tuple[str, str]:
        """Start the server on this node's IP, wait until it is healthy; (address, node id)."""
        ray = require_ray()
        from verifiers.serve import ZMQEnvClient, spawn_env_server

        ip = ray.util.get_node_ip_address()
        address = _tcp_address(ip, _free_port(ip))
        spawn = launch.spawn_kwargs
        self.server = spawn_env_server(address=address, **spawn)

        async def healthy() -> None:
            client = ZMQEnvClient(address=address, name=spawn["env_id"], secret=spawn["secret"])
            try:
                await client.wait_for_server_startup(timeout=launch.startup_timeout)
            finally:
                await client.close()

        try:
            asyncio.run(healthy())
        except BaseException:
            self.stop()
            raise
        return address, ray.get_runtime_context().get_node_id()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None


@cache
def _host_actor_class() -> Any:
    return require_ray().remote(EnvServerHost)


@dataclass
class EnvServers:
    """Env servers running on cluster nodes: `addresses[i]` runs on node `node_ids[i]`."""

    env_id: str
    addresses: list[str]
    node_ids: list[str]
    secret: str | None = field(default=None, repr=False)
    actors: list[Any] = field(default_factory=list, repr=False)

    def client_pool(self, **client_kwargs: Any) -> Any:
        """An `EnvClientPool` over these servers (with their secret, if they have one)."""
        from verifiers.serve import EnvClientPool

        client_kwargs.setdefault("secret", self.secret)
        return EnvClientPool(self.addresses, name=self.env_id, **client_kwargs)

    def stop(self) -> None:
        """Stop every server and its actor; servers on nodes that died are gone already."""
        ray = require_ray()
        actors, self.actors = self.actors, []
        pending = [a.stop.remote() for a in actors]
        if pending:
            ray.wait(pending, num_returns=len(pending), timeout=STOP_TIMEOUT)
        for actor in actors:
            try:
                ray.kill(actor)
            except Exception:
                pass

    def __enter__(self) -> EnvServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_env_servers(
    env_id: str,
    env_args: Mapping[str, Any] | None = None,
    *,
    num_servers: int = 1,
    workers_per_server: int = 1,
    num_cpus: float = 1.0,
    resources: Mapping[str, float] | None = None,
    label_selector: Mapping[str, str] | None = None,
    env_vars: Sequence[str] = (),
    api_keys: ApiKeysSetting | ApiKeyPolicy = None,
    secret: str | None = None,
    extra_env_kwargs: Mapping[str, Any] | None = None,
    startup_timeout: float = 600.0,
    log_level: str | None = "WARNING",
) -> EnvServers:
    """Place `num_servers` env servers for `env_id` on the cluster this process is connected to
    (`verifiers.ray.connect`), spread over the nodes that have `num_cpus`, `resources` and the
    labels in `label_selector`; return once every one answers health checks.

    `env_vars`: names of variables of this process whose values the environment needs (a judge
    key); they are set in the servers' processes only. `api_keys` (else
    `$VF_ENV_SERVER_API_KEYS` here): which of the servers' variables a request's model endpoint
    may get, see `verifiers.serve.ApiKeyPolicy`. `secret` (else `$VF_ENV_SERVER_SECRET` here):
    the servers' CurveZMQ secret, required when a node's IP is not loopback."""
    ray = require_ray()
    if not ray.is_initialized():
        raise ClusterError(
            "start_env_servers needs a Ray connection: call verifiers.ray.connect(address) first"
        )
    if num_servers < 1 or workers_per_server < 1:
        raise ConfigError("num_servers and workers_per_server must be at least 1")
    missing = [name for name in env_vars if name not in os.environ]
    if missing:
        raise ConfigError(
            f"env_vars names variables that are not set here: {', '.join(missing)} (their "
            "values are read in this process and sent to the servers)"
        )
    env = {name: os.environ[name] for name in env_vars}
    secret = resolve_secret(secret)
    policy = ApiKeyPolicy.resolve(api_keys)

    options: dict[str, Any] = {
        "num_cpus": num_cpus,
        "scheduling_strategy": "SPREAD",
        "max_restarts": 0,  # a server that died lost its rollouts; the pool goes on without it
    }
    if resources:
        options["resources"] = dict(resources)
    if label_selector:
        options["label_selector"] = dict(label_selector)
    spawn = dict(
        env_id=env_id,
        env_args=dict(env_args or {}),
        extra_env_kwargs=dict(extra_env_kwargs or {}),
        num_workers=workers_per_server,
        log_level=log_level,
        env=env,
        secret=secret,
        api_keys=policy.to_setting(),
    )
    launch = ServerLaunch(spawn, startup_timeout)
    actors = [_host_actor_class().options(**options).remote() for _ in range(num_servers)]
    started = [a.start.remote(launch) for a in actors]
    servers = EnvServers(env_id, [], [], secret, actors)
    try:
        for address, node_id in ray.get(started):
            servers.addresses.append(address)
            servers.node_ids.append(node_id)
    except BaseException:
        servers.stop()
        raise
    return servers
