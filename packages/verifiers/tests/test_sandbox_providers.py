"""The provider seam: the same interface checks against every provider of `TIERS`, each made
as its first entry there makes it (the Ray tier: on this process's cluster, else a local one)."""

import os
import re
import socket
from pathlib import Path

import pytest

from verifiers.sandbox import TIERS, cgroups
from verifiers.sandbox.base import MiB, SandboxDeadError, SandboxSpec
from verifiers.sandbox.bwrap import BwrapProvider
from verifiers.sandbox.image import ImageProvider
from verifiers.sandbox.process import ProcessProvider
from verifiers.sandbox.ray_tier import RayProvider
from verifiers.sandbox.runsc import RunscProvider

# every registered tier's provider (verifiers.sandbox.TIERS; test_sandbox_isolation.py checks
# that no Provider of the package is missing there)
PROVIDERS = list(dict.fromkeys(t.provider for t in TIERS))
assert set(PROVIDERS) == {BwrapProvider, ImageProvider, ProcessProvider, RunscProvider, RayProvider}


def make(cls):
    return next(t for t in TIERS if t.provider is cls).make()


SPEC = SandboxSpec(memory=128 * MiB, pids=64, disk=16 * MiB, output_limit=4096)


@pytest.fixture(params=PROVIDERS, ids=lambda cls: cls.__name__)
async def provider(request):
    reason = request.param.unavailable_reason()
    if reason:
        pytest.skip(f"{request.param.__name__}: {reason}")
    p = make(request.param)
    yield p
    await p.close()


async def test_interface(provider):
    boxes = await provider.create_many(2, SPEC)
    a, b = boxes
    assert a.id != b.id and a.alive
    r = await a.exec(["sh", "-c", "read x; echo got $x; echo e >&2; exit 4"], stdin="1\n")
    assert (r.exit_code, r.stdout, r.stderr) == (4, "got 1\n", "e\n")
    r = await a.exec("echo $V", env={"V": "set"})
    assert r.stdout == "set\n"
    await a.write_file("f.txt", b"\x00bytes")
    assert await a.read_file("f.txt") == b"\x00bytes"
    r = await b.exec("cat f.txt")  # sandboxes do not share a workspace
    assert r.exit_code != 0
    await a.write_dir("d", {"x": "1", "s/y": "2"})
    assert await a.read_dir("d") == {"x": b"1", "s/y": b"2"}
    r = await a.exec("sleep 30", timeout=0.5)
    assert r.timed_out
    r = await a.exec("head -c 100000 /dev/zero")
    assert r.truncated and len(r.stdout) == 4096
    await a.python("import math\nv = math.pi")
    assert (await a.python("round(v, 2)"))["result"] == "3.14"
    await a.close()
    await a.close()
    assert not a.alive
    with pytest.raises(SandboxDeadError):
        await a.exec("true")
    await b.close()


async def test_command_that_closes_its_output_before_exiting_keeps_its_exit_code(provider):
    box = await provider.create(SPEC)
    try:
        # stdout and stderr reach EOF well before the process exits: it must not be killed
        r = await box.exec("exec >&- 2>&-; sleep 0.3; exit 3", timeout=10)
        assert (r.exit_code, r.timed_out) == (3, False)
        r = await box.exec("exec >&- 2>&-; sleep 0.3", timeout=10)
        assert (r.exit_code, r.timed_out) == (0, False)
        # ... but the timeout still applies to it
        r = await box.exec("exec >&- 2>&-; sleep 30", timeout=0.5)
        assert r.timed_out
        assert (await box.exec("echo ok")).stdout == "ok\n"
    finally:
        await box.close()


PROJECT = str(Path(__file__).resolve().parents[3])
ISOLATING = list(dict.fromkeys(t.provider for t in TIERS if t.promises.isolating))
assert ISOLATING == [BwrapProvider, ImageProvider, RunscProvider, RayProvider]  # not process


@pytest.mark.parametrize("cls", ISOLATING, ids=lambda cls: cls.__name__)
async def test_isolating_providers_cut_network_hide_host_and_leave_nothing(cls):
    if cls.unavailable_reason():
        pytest.skip(f"{cls.__name__}: {cls.unavailable_reason()}")
    provider = make(cls)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    project = PROJECT
    try:
        box = await provider.create(SPEC)
        probe = (
            "import socket\n"
            "for target in [('127.0.0.1', PORT), ('1.1.1.1', 53)]:\n"
            "    try:\n"
            "        socket.create_connection(target, timeout=1); print('CONNECTED')\n"
            "    except OSError as e: print('blocked')\n"
            "try:\n"
            "    socket.getaddrinfo('pypi.org', 443); print('RESOLVED')\n"
            "except OSError: print('blocked')\n"
        ).replace("PORT", str(port))
        r = await box.exec(["python3", "-c", probe], timeout=20)
        assert r.stdout.split() == ["blocked"] * 3, r
        for path in ["/etc/shadow", project, "/root"]:
            assert (await box.exec(["test", "-e", path])).exit_code != 0, path
        assert (await box.exec("echo x > /usr/x")).exit_code != 0
        try:
            r = await box.exec("python3 -c 'x = bytearray(400 * 2**20)'", timeout=20)
            assert r.exit_code != 0
        except SandboxDeadError:
            # gVisor: the host memcg OOM-kills the sentry, i.e. the whole sandbox (contained)
            assert cls is RunscProvider
        await box.close()
        if cls is RunscProvider:  # no runsc state left behind
            assert list((provider._base() / "state").iterdir()) == []
    finally:
        listener.close()
        await provider.close()
    assert [p for p in cgroups.existing() if f"-{os.getpid()}-" in p.name] == []


async def test_cancelled_command_is_abandoned_and_the_sandbox_stays_usable(provider):
    import asyncio

    box = await provider.create(SPEC)
    try:
        task = asyncio.create_task(box.exec("sleep 30", timeout=60))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        r = await box.exec("echo still here")
        assert r.stdout == "still here\n"
        await box.python("kept = 1")
        task = asyncio.create_task(box.python("import time; time.sleep(30)", timeout=60))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await box.exec("echo ok")).stdout == "ok\n" and box.alive
    finally:
        await box.close()


def test_a_ray_host_runs_exactly_the_isolating_tiers_but_ray():
    """The Ray tier's per-node host (`verifiers.ray.sandbox_host`) runs one of `TIERS`'
    isolating tiers other than the Ray tier itself; any other name is a `ConfigError` that
    lists the choices (the host keeps its own list, so this pins it to `TIERS`)."""
    from verifiers.errors import ConfigError
    from verifiers.ray.sandbox_host import HostConfig

    local = sorted(t.name for t in TIERS if t.promises.isolating and t.name != "ray")
    for name in local:
        HostConfig(tier=name, image_tier=name).check()
    HostConfig(image_tier=None).check()
    for name in ("ray", "process", "no-such-tier"):
        with pytest.raises(
            ConfigError,
            match=re.escape(f"tier={name!r}") + ".*" + re.escape(f"choose one of {local}"),
        ):
            HostConfig(tier=name).check()


def test_the_local_tiers_share_one_host_check():
    """issue 29 item 5: bwrap, gVisor and the process tier repeated their root and cgroup
    checks; `cgroups.host_problem` is the one check. A missing program is named with its
    package, and on a host that runs the tiers (root, cgroups mounted) there is no problem."""
    missing = cgroups.host_problem("x", "no-such-program-vf", "no-such-package")
    assert missing == "no-such-program-vf is not installed (apt-get install no-such-package)"
    if os.geteuid() == 0 and cgroups.detect() is not None:
        assert cgroups.host_problem("process") is None
        assert ProcessProvider.unavailable_reason() is None
    else:
        assert cgroups.host_problem("process") is not None
