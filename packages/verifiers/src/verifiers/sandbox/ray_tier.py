"""The Ray tier: sandboxes on any node of a Ray cluster.

Each eligible node gets one sandbox host actor (`verifiers.ray.sandbox_host.SandboxHost`) that
runs a local isolated tier there (bwrap-zygote by default; the image tier for specs naming an
image) with its warm pools. `RayProvider.create` places a sandbox on the host with the most
free slots and returns a `RaySandbox`, a proxy whose calls go to that host.

Faults: a host that dies (killed, or its node left) turns its sandboxes into
`SandboxDeadError` on their next call (a call in flight fails within Ray's failure detection,
and a host that stops answering fails at the call's deadline: never a hang); creation moves to
the remaining hosts, and with no host at all it is a `SandboxCreationError`. Nodes that join
get hosts at the next placement.

Ray is imported only when a `RayProvider` is made (`pip install 'verifiers[ray]'`)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.util
import logging
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from verifiers.errors import ConfigError
from verifiers.sandbox.base import (
    ExecRequest,
    ExecResult,
    Provider,
    ProviderUnavailableError,
    Sandbox,
    SandboxCreationError,
    SandboxDeadError,
    SandboxSpec,
)
from verifiers.sandbox.live import LiveSandboxes

logger = logging.getLogger("verifiers.sandbox")

PER_NODE_VAR = "VF_SANDBOXES_PER_NODE"
RESOURCE_VAR = "VF_SANDBOX_NODE_RESOURCE"

#: whether this process started its Ray instance through `RayProvider(address="local")`
_STARTED_LOCAL = False


def stop_local_ray() -> bool:
    """Stop the single-node Ray instance `RayProvider(address="local")` started in this
    process, if it did (a test module's teardown; at exit Ray stops it anyway)."""
    global _STARTED_LOCAL
    if not _STARTED_LOCAL:
        return False
    import ray

    ray.shutdown()
    _STARTED_LOCAL = False
    return True


def _connect(address: str | None, namespace: str | None) -> Any:
    """`verifiers.ray.connect`, remembering when it starts a local instance; that instance
    binds loopback only (as the test cluster does)."""
    global _STARTED_LOCAL
    from verifiers.ray import connect
    from verifiers.ray.cluster import UV_HOOK_VAR
    from verifiers.ray.testing import loopback_only

    ray = sys.modules.get("ray")
    if address in (None, "local") and (ray is None or not ray.is_initialized()):
        loopback_only()  # before `ray` is imported: Ray reads its switches then
    else:
        os.environ.setdefault(UV_HOOK_VAR, "0")
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None and os.environ.get(UV_HOOK_VAR) == "0":
        # imported before the switch was set: under `uv run`, workers would otherwise be
        # started by `uv run` in a copy of this directory (a new virtualenv per node)
        setattr(constants, "RAY_ENABLE_UV_RUN_RUNTIME_ENV", False)  # noqa: B010 (untyped module)
    ray = importlib.import_module("ray")
    if address in (None, "local") and not ray.is_initialized():
        ray = connect("local", namespace=namespace, log_to_driver=False)
        _STARTED_LOCAL = True
        return ray
    return connect(address, namespace=namespace)


class _HostLost(Exception):
    """A host's actor died or stopped answering (internal: mapped to the SDK's errors)."""


@dataclass(eq=False)
class _Host:
    """The provider's view of one host actor."""

    node_id: str
    actor: Any
    ready: concurrent.futures.Future[dict[str, Any]]  # of `actor.ready.remote()`
    live: int = 0  # sandboxes of this provider on it, creations in flight included
    dead: str | None = None  # why it is out of placement
    died_at: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)

    def lost(self, why: str) -> None:
        if self.dead is None:
            self.dead, self.died_at = why, time.monotonic()
            logger.warning("sandbox host on node %s is gone: %s", self.node_id[:12], why)


class RaySandbox(Sandbox):
    """A sandbox held by a host actor on some node; every call goes there."""

    def __init__(self, provider: RayProvider, host: _Host, sid: str, spec: SandboxSpec) -> None:
        self.id = f"ray-{host.node_id[:8]}-{sid}"
        self.spec = spec
        self.sid = sid
        self.host = host
        self._provider = provider
        self._closed = False
        self._dead: str | None = None
        self.loop = asyncio.get_running_loop()

    @property
    def node_id(self) -> str:
        """The Ray node the sandbox runs on."""
        return self.host.node_id

    @property
    def alive(self) -> bool:
        return not self._closed and self._dead is None and self.host.dead is None

    async def _call(self, method: str, *args: Any, deadline: float) -> Any:
        if self._closed:
            raise SandboxDeadError(f"sandbox {self.id} is closed")
        if self.host.dead is not None:
            raise SandboxDeadError(f"sandbox {self.id} is gone: its host {self.host.dead}")
        if self._dead is not None:
            raise SandboxDeadError(f"sandbox {self.id} is {self._dead}")
        try:
            return await self._provider._rpc(
                self.host, getattr(self.host.actor, method).remote(self.sid, *args), deadline
            )
        except _HostLost as e:
            self._dead = str(e)
            raise SandboxDeadError(f"sandbox {self.id} is gone: {e}") from None
        except SandboxDeadError:
            self._dead = "dead (its agent stopped answering)"
            raise

    async def run(self, request: ExecRequest) -> ExecResult:
        return await self._call(
            "exec",
            request.cmd,
            request.timeout,
            request.stdin,
            request.cwd,
            request.env,
            deadline=request.timeout + self._margin,
        )

    async def python(self, code: str, timeout: float = 30.0) -> dict[str, Any]:  # noqa: ASYNC109
        return await self._call("python", code, timeout, deadline=timeout + self._margin)

    async def write_file(self, path: str, data: str | bytes, mode: int = 0o644) -> None:
        await self._call("write_file", path, data, mode, deadline=60 + self._margin)

    async def read_file(self, path: str) -> bytes:
        return await self._call("read_file", path, deadline=60 + self._margin)

    async def write_dir(self, path: str, files: Mapping[str, str | bytes]) -> None:
        await self._call("write_dir", path, dict(files), deadline=120 + self._margin)

    async def read_dir(self, path: str) -> dict[str, bytes]:
        return await self._call("read_dir", path, deadline=120 + self._margin)

    @property
    def _margin(self) -> float:
        return self._provider.call_margin

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._provider._released(self)
        if self.host.dead is None:
            ref = self.host.actor.close.remote(self.sid)  # runs even if this await is cancelled
            try:
                await self._provider._rpc(self.host, ref, self._margin)
            except Exception as e:  # closing is best effort; the host's shutdown closes all
                logger.debug("closing sandbox %s: %r", self.id, e)

    def kill_now(self) -> None:
        """Close without awaiting (its event loop is gone): the host is told, not waited for."""
        if self._closed:
            return
        self._closed = True
        self._provider._released(self)
        if self.host.dead is None:
            try:
                self.host.actor.close.remote(self.sid)
            except Exception as e:  # Ray already shut down
                logger.debug("closing sandbox %s: %r", self.id, e)


class RayProvider(Provider):
    """Sandboxes on the nodes of a Ray cluster (see the module docstring).

    `address`: the cluster (`"auto"`, `"host:port"`, or `"local"`: this process's cluster if
    it is connected to one, else a new single-node instance on loopback). `tier` /
    `image_tier`: the local tiers the hosts run (`image_tier=None`: no images; a spec's
    image is then ignored, as the bwrap tier ignores it). `sandboxes_per_node`: slots of each
    host. `node_resource`: only nodes that have this custom resource get hosts (None: every
    alive node). `warm_per_node`: sandboxes each host keeps started per spec. `call_margin`: seconds
    past a call's own timeout before a silent host counts as dead. `refresh_interval`: how
    often placement looks for joined and departed nodes. `host_restart_delay`: a host that
    died on a node still alive is replaced after this long (None: never)."""

    name = "ray"

    def __init__(
        self,
        address: str | None = "auto",
        *,
        tier: str = "bwrap-zygote",
        image_tier: str | None = "image",
        sandboxes_per_node: int = 64,
        node_resource: str | None = None,
        warm_per_node: int = 2,
        namespace: str | None = None,
        start_timeout: float = 120.0,
        call_margin: float = 60.0,
        refresh_interval: float = 2.0,
        host_restart_delay: float | None = 30.0,
    ) -> None:
        from verifiers.ray.sandbox_host import HostConfig

        self.config = HostConfig(
            tier=tier, image_tier=image_tier, slots=sandboxes_per_node, warm=warm_per_node
        )
        self.config.check()
        # specs naming an image run on the hosts' image tier; without one, the image is
        # ignored as the bwrap tier ignores it (the local runtime stands in)
        self.supports_images = image_tier is not None
        if start_timeout <= 0 or call_margin <= 0:
            raise ConfigError("start_timeout and call_margin must be positive")
        self.node_resource = node_resource
        self.start_timeout = start_timeout
        self.call_margin = call_margin
        self.refresh_interval = refresh_interval
        self.host_restart_delay = host_restart_delay
        self._ray = _connect(address, namespace)
        self._hosts: dict[str, _Host] = {}  # node id -> its current host
        self._refreshed = float("-inf")
        self._live: LiveSandboxes[RaySandbox] = LiveSandboxes()
        self._actor_class: Any = None

    @classmethod
    def from_env(cls, address: str | None = "auto", *, images: bool = False) -> RayProvider:
        """A provider set up by environment variables (what `VF_SANDBOX_PROVIDER=ray` makes):
        `VF_SANDBOXES_PER_NODE` (default 64) and `VF_SANDBOX_NODE_RESOURCE` (only nodes with
        this custom resource; default: every node). Like the local default, it runs a spec's
        image only when `images` is asked for (tasks that name one, as mini-swe-agent-plus's
        image rows): a classic `SandboxEnv`'s `python:3.11-slim` runs on the hosts' bwrap tier
        as it does locally, and no node pulls it."""
        raw = os.environ.get(PER_NODE_VAR, "").strip() or "64"
        try:
            per_node = int(raw)
        except ValueError:
            raise ConfigError(f"{PER_NODE_VAR}={raw!r} is not a whole number") from None
        resource = os.environ.get(RESOURCE_VAR, "").strip() or None
        return cls(
            address,
            sandboxes_per_node=per_node,
            node_resource=resource,
            image_tier="image" if images else None,
        )

    @staticmethod
    def unavailable_reason() -> str | None:
        if importlib.util.find_spec("ray") is None:
            return "Ray is not installed (pip install 'verifiers[ray]')"
        return None

    # -- hosts -----------------------------------------------------------------------------
    def _eligible(self, node: Mapping[str, Any]) -> bool:
        if not node.get("Alive"):
            return False
        return self.node_resource is None or node["Resources"].get(self.node_resource, 0) > 0

    def _start_host(self, node_id: str) -> _Host:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from verifiers.ray.sandbox_host import SandboxHost

        if self._actor_class is None:
            self._actor_class = self._ray.remote(SandboxHost)
        actor = self._actor_class.options(
            num_cpus=0,  # sandboxes are limited by their cgroups, not Ray's CPU accounting
            max_restarts=0,  # a restarted host would not hold the sandboxes it had
            max_concurrency=max(64, 4 * self.config.slots),
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        ).remote(self.config)
        return _Host(node_id, actor, actor.ready.remote().future())

    def refresh(self, force: bool = False) -> None:
        """Match hosts to the cluster's nodes: start hosts on eligible nodes that have none
        (joined since, or whose host died `host_restart_delay` ago), and take hosts whose node
        left out of placement."""
        now = time.monotonic()
        if not force and now - self._refreshed < self.refresh_interval:
            return
        self._refreshed = now
        nodes = self._ray.nodes()
        alive = {n["NodeID"] for n in nodes if n.get("Alive")}
        for host in self._hosts.values():
            if host.node_id not in alive:
                host.lost("its node left the cluster")
        for node in nodes:
            if not self._eligible(node):
                continue
            known = self._hosts.get(node["NodeID"])
            if known is not None and (
                known.dead is None
                or self.host_restart_delay is None
                or now - known.died_at < self.host_restart_delay
            ):
                continue
            if known is not None:  # died on a node still alive: replaced after the delay
                _kill(self._ray, known)
            self._hosts[node["NodeID"]] = self._start_host(node["NodeID"])

    def _settle(self, host: _Host) -> None:
        """Read a finished `ready` call: a host that failed to start, or whose tier cannot run
        on its node, is out of placement."""
        if host.dead is not None or host.info or not host.ready.done():
            return
        try:
            info = host.ready.result()
        except Exception as e:
            host.lost(f"did not start: {e}")
            return
        host.info = info
        if info.get("unavailable"):
            host.dead = f"{self.config.tier} cannot run there: {info['unavailable']}"

    async def _place(self, exclude: set[_Host]) -> _Host:
        """The host with the most free slots (a ready one on a tie); one still starting (a
        node that just joined) is waited for."""
        deadline = time.monotonic() + self.start_timeout
        while True:
            self.refresh(force=not any(h.dead is None for h in self._hosts.values()))
            candidates = [h for h in self._hosts.values() if h not in exclude]
            for h in candidates:
                self._settle(h)
            usable = [h for h in candidates if h.dead is None]
            if not usable:
                raise self._no_host(candidates)
            best = max(usable, key=lambda h: (self.config.slots - h.live, bool(h.info)))
            if best.live >= self.config.slots:
                raise SandboxCreationError(
                    f"every sandbox host is full: {len(usable)} host(s) x "
                    f"{self.config.slots} sandboxes (sandboxes_per_node)"
                )
            if best.info:
                return best
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxCreationError(
                    f"the sandbox host on node {best.node_id[:12]} did not start within "
                    f"{self.start_timeout:.0f} s"
                )
            await asyncio.wait([_when_done(best.ready)], timeout=left)

    def _no_host(self, candidates: list[_Host]) -> SandboxCreationError:
        where = f"with the resource {self.node_resource!r}" if self.node_resource else "alive"
        reasons = sorted({h.dead for h in candidates if h.dead})
        if reasons and all("cannot run there" in r for r in reasons):
            return ProviderUnavailableError(f"no node can run sandboxes: {'; '.join(reasons)}")
        if not candidates:
            return SandboxCreationError(f"no sandbox host: the Ray cluster has no node {where}")
        detail = f" ({'; '.join(reasons)})" if reasons else ""
        return SandboxCreationError(
            f"no sandbox host can take a sandbox: {len(candidates)} tried{detail}"
        )

    # -- calls -------------------------------------------------------------------------------
    async def _rpc(self, host: _Host, ref: Any, deadline: float) -> Any:
        """Await one call to `host`: its own exception comes back as raised there; the host
        dying, or not answering within `deadline` seconds, is `_HostLost`."""
        from ray import exceptions as rx

        try:
            return await asyncio.wait_for(asyncio.wrap_future(ref.future()), deadline)
        except rx.RayTaskError as e:
            cause = e.cause if isinstance(e.cause, Exception) else e
            raise cause from None
        except rx.ActorDiedError as e:
            host.lost(f"died ({_first_line(e)})")
            raise _HostLost(f"its host on node {host.node_id[:12]} died") from None
        except rx.RayError as e:  # unavailable, object lost, ...: this call's sandbox is spent
            raise _HostLost(f"its host did not answer ({type(e).__name__})") from None
        except TimeoutError:
            raise _HostLost(f"its host did not answer within {deadline:.0f} s") from None
        except asyncio.CancelledError:
            self._ray.cancel(ref)  # the host's call is cancelled too (the agent interrupted)
            raise

    # -- the interface ---------------------------------------------------------------------
    async def create(self, spec: SandboxSpec | None = None) -> RaySandbox:
        spec = spec or SandboxSpec()
        # sandboxes made in an event loop that ends are closed with it (as the local tiers'
        # are), so none outlives the `asyncio.run` that made it
        await self._live.close_with_loop()
        tried: set[_Host] = set()
        while True:
            host = await self._place(tried)
            host.live += 1
            ref = host.actor.create.remote(spec)
            try:
                sid = await self._rpc(host, ref, self.start_timeout)
            except _HostLost:
                host.live -= 1
                tried.add(host)  # creation moves to the remaining hosts
                continue
            except asyncio.CancelledError:
                host.live -= 1
                ref.future().add_done_callback(lambda f, h=host: _close_orphan(h, f))
                raise
            except BaseException as e:
                host.live -= 1
                from verifiers.ray.sandbox_host import HostFullError

                if isinstance(e, HostFullError):
                    tried.add(host)
                    continue
                raise
            box = RaySandbox(self, host, sid, spec)
            self._live.add(box)
            return box

    def _released(self, box: RaySandbox) -> None:
        if box in self._live:
            self._live.discard(box)
            box.host.live -= 1

    @property
    def live(self) -> int:
        return len(self._live)

    def hosts(self) -> dict[str, dict[str, Any]]:
        """Node id -> {pid, live, dead} of each host this provider started, as it sees them."""
        return {
            n: {"pid": h.info.get("pid"), "live": h.live, "dead": h.dead}
            for n, h in self._hosts.items()
        }

    async def host_stats(self) -> dict[str, dict[str, Any]]:
        """Node id -> what each live host reports of itself: the node it runs on (from Ray's
        runtime context), its pid, live sandboxes, slots and warm sandboxes."""
        alive = [h for h in self._hosts.values() if h.dead is None and h.info]
        got = await asyncio.gather(
            *(self._rpc(h, h.actor.stats.remote(), self.call_margin) for h in alive),
            return_exceptions=True,
        )
        return {h.node_id: r for h, r in zip(alive, got, strict=True) if isinstance(r, dict)}

    async def close(self) -> None:
        """Close every sandbox of this provider and stop its hosts (each closes its pools,
        sandboxes and local providers first, then the actor is killed)."""
        boxes = self._live.take()
        for b in boxes:
            b._closed = True
        hosts, self._hosts = list(self._hosts.values()), {}
        alive = [h for h in hosts if h.dead is None]
        refs = [h.actor.shutdown.remote() for h in alive]
        done = await asyncio.gather(
            *(self._rpc(h, r, self.call_margin) for h, r in zip(alive, refs, strict=True)),
            return_exceptions=True,
        )
        for h, result in zip(alive, done, strict=True):
            if isinstance(result, BaseException):
                logger.warning("sandbox host on node %s: shutdown: %r", h.node_id[:12], result)
        for h in hosts:
            _kill(self._ray, h)


def _when_done(source: concurrent.futures.Future[Any]) -> asyncio.Future[None]:
    """A future of the running loop that completes (with None) when `source` does. Unlike
    `asyncio.wrap_future` it neither cancels `source` when it is cancelled (a host's `ready`
    is shared by every placement) nor carries `source`'s exception (read by `_settle`)."""
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not waiter.done():
            waiter.set_result(None)

    def done(_: concurrent.futures.Future[Any]) -> None:
        try:
            loop.call_soon_threadsafe(wake)
        except RuntimeError:  # that loop has closed: nobody waits any more
            pass

    source.add_done_callback(done)
    return waiter


def _close_orphan(host: _Host, fut: concurrent.futures.Future[str]) -> None:
    """A create whose caller was cancelled may still finish on the host: close that sandbox."""
    try:
        sid = fut.result()
    except BaseException:
        return
    if host.dead is None:
        host.actor.close.remote(sid)


def _kill(ray: Any, host: _Host) -> None:
    try:
        ray.kill(host.actor, no_restart=True)
    except Exception as e:  # already gone with its node
        logger.debug("killing the sandbox host on node %s: %r", host.node_id[:12], e)


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
