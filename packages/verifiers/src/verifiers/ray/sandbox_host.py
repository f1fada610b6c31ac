"""The sandbox host: one Ray actor per cluster node that holds that node's real sandboxes.

It runs the local isolated tiers there (`bwrap-zygote` by default, the image tier for specs
that name an image) with a warm pool per spec, and serves the Ray tier's proxies
(`verifiers.sandbox.ray_tier`) by sandbox id. Only what a request carries (the `SandboxSpec`,
a command's `env=`) reaches a sandbox: the local tiers start every sandbox from the isolation
contract's environment, never from this actor's own (which holds the node's environment).

This module imports no Ray: the Ray tier wraps `SandboxHost` with `ray.remote` when it
starts hosts, so the class stays importable (and testable) without a cluster."""

from __future__ import annotations

import asyncio
import collections
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from verifiers.errors import ConfigError
from verifiers.sandbox.base import (
    ExecResult,
    Provider,
    Sandbox,
    SandboxCreationError,
    SandboxDeadError,
    SandboxSpec,
)
from verifiers.sandbox.local_tiers import ISOLATING_LOCAL_TIERS, Tier
from verifiers.sandbox.pool import SandboxPool

# The tiers a host may run, by name: `verifiers.sandbox.TIERS` less the Ray tier itself.
_HOST_TIERS: dict[str, Tier] = {t.name: t for t in ISOLATING_LOCAL_TIERS}


class HostFullError(SandboxCreationError):
    """Every slot of this host holds a sandbox (the Ray tier then places on another host)."""


@dataclass(frozen=True)
class HostConfig:
    """What one host runs: `tier` for plain specs, `image_tier` for specs naming an image
    (names of isolating entries of `verifiers.sandbox.TIERS`; `image_tier=None`: a spec's
    image is ignored, as the bwrap tier ignores it), `slots` sandboxes at most handed out at
    once, and `warm` sandboxes kept started per spec (for the `warm_specs` specs used last)."""

    tier: str = "bwrap-zygote"
    image_tier: str | None = "image"
    slots: int = 64
    warm: int = 2
    warm_specs: int = 4

    def check(self) -> None:
        """Raise `ConfigError` unless the tiers are local isolating tiers and sizes are sane."""
        for what, name in (("tier", self.tier), ("image_tier", self.image_tier)):
            if name not in _HOST_TIERS and not (what == "image_tier" and name is None):
                raise ConfigError(
                    f"the Ray tier's {what}={name!r} is not a local isolating tier; "
                    f"choose one of {sorted(_HOST_TIERS)}"
                )
        if self.slots < 1:
            raise ConfigError(f"sandboxes_per_node must be at least 1, got {self.slots}")
        if self.warm < 0 or self.warm_specs < 1:
            raise ConfigError(f"warm pools: warm={self.warm}, warm_specs={self.warm_specs}")


class SandboxHost:
    """The actor's class. Every method but `ready`, `stats` and `shutdown` takes a sandbox id
    this host returned from `create`; an unknown id is a `SandboxDeadError`."""

    def __init__(self, config: HostConfig) -> None:
        config.check()
        self.config = config
        self._providers: dict[str, Provider] = {}
        # spec key -> its warm pool, least recently used first
        self._pools: collections.OrderedDict[str, SandboxPool] = collections.OrderedDict()
        self._boxes: dict[str, Sandbox] = {}
        self._creating = 0
        self._closing: set[asyncio.Task[None]] = set()  # pools evicted, closing

    # -- the host ----------------------------------------------------------------------------
    async def ready(self) -> dict[str, Any]:
        """Where this host runs, and why its default tier cannot run here (None: it can)."""
        tier = _HOST_TIERS[self.config.tier]
        return {**self._where(), "unavailable": tier.unavailable_reason()}

    def _where(self) -> dict[str, Any]:
        node_id = None
        try:
            import ray

            node_id = ray.get_runtime_context().get_node_id()
        except Exception:  # run outside Ray (a unit test of the class)
            pass
        return {"node_id": node_id, "pid": os.getpid(), "hostname": os.uname().nodename}

    async def stats(self) -> dict[str, Any]:
        return {
            **self._where(),
            "live": self._live(),
            "slots": self.config.slots,
            "warm": sum(p.warm for p in self._pools.values()),
        }

    def _live(self) -> int:
        return sum(1 for b in self._boxes.values() if b.alive)

    def _provider(self, spec: SandboxSpec) -> Provider:
        name = self.config.image_tier if spec.image else None
        name = name or self.config.tier
        if name not in self._providers:
            self._providers[name] = _HOST_TIERS[name].make()
        return self._providers[name]

    def _pool(self, spec: SandboxSpec) -> SandboxPool | None:
        if self.config.warm == 0:
            return None
        key = spec.key()
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = SandboxPool(self._provider(spec), spec, self.config.warm)
            while len(self._pools) > self.config.warm_specs:  # the least recently used spec
                _, old = self._pools.popitem(last=False)
                task = asyncio.get_running_loop().create_task(old.close())
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)
        self._pools.move_to_end(key)
        return pool

    async def create(self, spec: SandboxSpec) -> str:
        """Start (or take a warm) sandbox of `spec`; returns its id on this host."""
        if self._live() + self._creating >= self.config.slots:
            raise HostFullError(
                f"this node's sandbox host is full ({self.config.slots} sandboxes; "
                "the setting is sandboxes_per_node)"
            )
        self._creating += 1
        try:
            pool = self._pool(spec)
            box = await (pool.acquire() if pool is not None else self._provider(spec).create(spec))
        finally:
            self._creating -= 1
        self._boxes[box.id] = box
        return box.id

    async def shutdown(self) -> None:
        """Close every pool, sandbox and provider of this host (before the actor is killed)."""
        pools, self._pools = list(self._pools.values()), collections.OrderedDict()
        await asyncio.gather(*(p.close() for p in pools), return_exceptions=True)
        await asyncio.gather(*list(self._closing), return_exceptions=True)
        boxes, self._boxes = list(self._boxes.values()), {}
        await asyncio.gather(*(b.close() for b in boxes), return_exceptions=True)
        providers, self._providers = list(self._providers.values()), {}
        await asyncio.gather(*(p.close() for p in providers), return_exceptions=True)

    # -- one sandbox ---------------------------------------------------------------------------
    def _box(self, sid: str) -> Sandbox:
        box = self._boxes.get(sid)
        if box is None:
            raise SandboxDeadError(f"sandbox {sid} is closed (or was never on this host)")
        return box

    async def exec(
        self,
        sid: str,
        cmd: str | list[str],
        timeout: float,  # noqa: ASYNC109
        stdin: str | bytes | None,
        cwd: str | None,
        env: Mapping[str, str] | None,
    ) -> ExecResult:
        return await self._box(sid).exec(cmd, timeout=timeout, stdin=stdin, cwd=cwd, env=env)

    async def python(self, sid: str, code: str, timeout: float) -> dict[str, Any]:  # noqa: ASYNC109
        return await self._box(sid).python(code, timeout=timeout)

    async def write_file(self, sid: str, path: str, data: str | bytes, mode: int) -> None:
        await self._box(sid).write_file(path, data, mode)

    async def read_file(self, sid: str, path: str) -> bytes:
        return await self._box(sid).read_file(path)

    async def write_dir(self, sid: str, path: str, files: Mapping[str, str | bytes]) -> None:
        await self._box(sid).write_dir(path, files)

    async def read_dir(self, sid: str, path: str) -> dict[str, bytes]:
        return await self._box(sid).read_dir(path)

    async def alive(self, sid: str) -> bool:
        box = self._boxes.get(sid)
        return box is not None and box.alive

    async def close(self, sid: str) -> None:
        box = self._boxes.pop(sid, None)
        if box is not None:
            await box.close()
