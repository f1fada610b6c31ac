"""Isolation, limits and cleanup of the local bwrap provider (needs root and bubblewrap; `make
test` installs bubblewrap through scripts/system-deps.sh)."""

import asyncio
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from verifiers.errors import SandboxError
from verifiers.sandbox import cgroups
from verifiers.sandbox.base import MiB, RuntimeSpec, SandboxDeadError, SandboxSpec
from verifiers.sandbox.bwrap import SANDBOX_UID, BwrapProvider
from verifiers.sandbox.runtime import ensure_runtime, installer
from verifiers.sandbox.seccomp import program as seccomp_program

REASON = BwrapProvider.unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"bwrap provider: {REASON}")

SMALL = SandboxSpec(memory=96 * MiB, pids=48, disk=16 * MiB, output_limit=64 * 1024)


def sandbox_uid_pids() -> list[int]:
    """Sandbox-uid processes in this test process's sandbox cgroups (other test runs on the
    same machine have their own)."""
    out = []
    tag = f"{cgroups.PREFIX}-{os.getpid()}-"
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if p.stat().st_uid == SANDBOX_UID and tag in (p / "cgroup").read_text():
                    out.append(int(p.name))
            except OSError:
                pass
    return out


def mounts() -> int:
    return len(Path("/proc/self/mountinfo").read_text().splitlines())


@pytest.fixture(params=[True, False], ids=["zygote", "exec"])
async def provider(request):
    """Both ways of starting a sandbox: forked from the zygote (the default) and exec'd bwrap."""
    p = BwrapProvider(zygote=request.param)
    yield p
    await p.close()


async def test_exec_files_and_results(provider):
    async with await provider.create(SMALL) as box:
        r = await box.exec("echo out; echo err >&2; exit 3")
        assert (r.exit_code, r.stdout, r.stderr, r.timed_out) == (3, "out\n", "err\n", False)
        assert r.duration > 0
        r = await box.exec(["cat"], stdin="piped")
        assert r.stdout == "piped"
        r = await box.exec("pwd; echo $FOO; id -u", cwd="/tmp", env={"FOO": "bar"})
        assert r.stdout.split() == ["/tmp", "bar", "1000"]
        await box.write_file("dir/a.txt", "hello")
        assert await box.read_file("/workspace/dir/a.txt") == b"hello"
        await box.write_dir("pkg", {"m.py": "X = 1\n", "sub/data.bin": b"\x00\x01"})
        got = await box.read_dir("pkg")
        assert got == {"m.py": b"X = 1\n", "sub/data.bin": b"\x00\x01"}
        r = await box.exec("cd pkg && python3 -c 'import m; print(m.X)'")
        assert r.stdout == "1\n"
        with pytest.raises(OSError):
            await box.read_file("nope")
        py = await box.python("x = 20")
        py = await box.python("x * 2 + 2")
        assert py["result"] == "42" and py["status"] == "ok"


PROBE = r"""
import socket, sys
res = {}
def attempt(name, fn):
    try:
        fn(); res[name] = "CONNECTED"
    except Exception as e:
        res[name] = type(e).__name__
def tcp():
    s = socket.create_connection(("127.0.0.1", TCP_PORT), timeout=1)
def tcp_ext():
    socket.create_connection(("1.1.1.1", 53), timeout=1)
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", UDP_PORT))
    s.settimeout(0.3); s.connect(("127.0.0.1", UDP_PORT)); s.send(b"y"); s.recv(1)
def unix_path():
    s = socket.socket(socket.AF_UNIX); s.connect("UNIX_PATH")
def unix_abstract():
    s = socket.socket(socket.AF_UNIX); s.connect("\0ABSTRACT")
def dns():
    socket.getaddrinfo("pypi.org", 443)
for n, f in [("tcp", tcp), ("tcp_ext", tcp_ext), ("udp", udp), ("unix_path", unix_path),
             ("unix_abstract", unix_abstract), ("dns", dns)]:
    attempt(n, f)
print(res)
"""


async def test_no_network_out(provider, tmp_path):
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(0.2)
    unix_path = str(tmp_path / "host.sock")
    ux = socket.socket(socket.AF_UNIX)
    ux.bind(unix_path)
    ux.listen()
    abstract = f"vf-sbx-test-{os.getpid()}"
    ab = socket.socket(socket.AF_UNIX)
    ab.bind("\0" + abstract)
    ab.listen()
    code = (
        PROBE.replace("TCP_PORT", str(tcp.getsockname()[1]))
        .replace("UDP_PORT", str(udp.getsockname()[1]))
        .replace("UNIX_PATH", unix_path)
        .replace("ABSTRACT", abstract)
    )
    try:
        async with await provider.create(SMALL) as box:
            await box.write_file("probe.py", code)
            r = await box.exec("python3 probe.py", timeout=20)
            res = eval(r.stdout)
            assert "CONNECTED" not in res.values(), res
            assert set(res) == {"tcp", "tcp_ext", "udp", "unix_path", "unix_abstract", "dns"}
            with pytest.raises(OSError):  # nothing arrived on the host
                udp.recvfrom(10)
            r = await box.exec("cat /proc/net/dev | tail -n +3 | cut -d: -f1")
            assert r.stdout.split() == ["lo"]
    finally:
        for s in (tcp, udp, ux, ab):
            s.close()


PROJECT = Path(__file__).resolve().parents[3]
HOME = os.path.expanduser("~")


CLONE_NEWUSER = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)  # clone(CLONE_NEWUSER | SIGCHLD)
if r == 0:
    os._exit(0)
print(r, ctypes.get_errno())
"""


async def test_host_files_invisible_and_system_read_only(provider):
    project, home = PROJECT, HOME
    async with await provider.create(SMALL) as box:
        for path in ["/etc/shadow", str(project), str(Path(__file__)), home, "/root", "/home"]:
            r = await box.exec(["ls", "-d", path])
            assert r.exit_code != 0, f"{path} is visible: {r.stdout}"
        for path in ["/usr/evil", "/usr/bin/python3", "/etc/passwd", "/evil", "/opt/evil"]:
            r = await box.exec(f"echo x >> {path}")
            assert r.exit_code != 0 and ("Read-only" in r.stderr or "denied" in r.stderr), path
        # the agent's code: mounted read-only (bwrap), or not in the sandbox at all (zygote)
        r = await box.exec("echo x >> /opt/agent/agent.py")
        assert r.exit_code != 0, r
        assert any(s in r.stderr for s in ("Read-only", "denied", "No such file")), r.stderr
        r = await box.exec("unshare -U true")  # no nested user namespaces
        assert r.exit_code != 0
        r = await box.exec(["python3", "-c", CLONE_NEWUSER])  # not by clone(2) either
        assert r.exit_code == 0 and r.stdout.startswith("-1 "), r


async def test_sandbox_processes_hold_no_host_files(provider):
    """Everything open in the sandbox's own processes (init, the agent) is a pipe to the host,
    /dev/null or an anonymous inode: no host file, socket or directory leaks in."""
    async with await provider.create(SMALL) as box:
        r = await box.exec('for f in /proc/[12]/fd/*; do echo "$f $(readlink $f)"; done')
        fds = dict(line.split(" ", 1) for line in r.stdout.splitlines())
        assert fds["/proc/2/fd/2"] == "/dev/null", fds  # the agent's stderr
        for target in fds.values():
            if target == "":  # gone by now (the agent's own short-lived fds), or init's,
                continue  # which cannot be read at all (not dumpable)
            assert target.startswith(("pipe:", "anon_inode:")) or target == "/dev/null", fds
        # nor host paths through the command lines and environments they started with (both
        # ways: bwrap's options travel through a descriptor, not its command line)
        r = await box.exec("cat /proc/[12]/cmdline /proc/2/environ | tr '\\0' ' '")
        assert r.exit_code == 0 and "vf-sbx" not in r.stdout and "/tmp/" not in r.stdout, r
        assert "--bind" not in r.stdout and "--ro-bind" not in r.stdout, r
        if provider.use_zygote:  # (an exec'd agent's environment has TMPDIR=/tmp)
            assert "/tmp" not in r.stdout, r


async def test_memory_bomb_is_killed_agent_survives(provider):
    async with await provider.create(SMALL) as box:
        r = await box.exec("python3 -c 'x = bytearray(400 * 2**20); print(len(x))'", timeout=20)
        assert r.exit_code != 0 and r.stdout == ""
        assert (await box.exec("echo alive")).stdout == "alive\n"


async def test_fork_bomb_is_contained_host_responsive(provider):
    async with await provider.create(SMALL) as box:
        # the shell outlives the timeout (a `sleep` equal to it raced it and could end first)
        r = await box.exec("bomb() { bomb | bomb & }; bomb; sleep 30", timeout=2)
        assert r.exit_code != 0 or r.timed_out
        # the pids limit held: fork failed inside the sandbox (the kernel counts refusals)
        assert _pids_limit_hits(box.cgroup) > 0
        # the timeout sweeps the bomb away; killed processes take a moment to be reaped
        for _ in range(500):
            pids = box.cgroup.pids()
            if len(pids) <= 3:  # bwrap's init and the agent only
                break
            await asyncio.sleep(0.02)
        assert len(pids) <= 3, pids
        assert (await box.exec("echo alive")).stdout == "alive\n"


def _pids_limit_hits(cg) -> int:
    """How often the pids controller refused a fork (`pids.events`: ``max N``)."""
    d = cg.dirs.get("pids") or cg.dirs.get("")
    for line in (d / "pids.events").read_text().splitlines():
        key, _, value = line.partition(" ")
        if key == "max":
            return int(value)
    return 0


async def test_infinite_loop_and_background_tree_killed_at_timeout(provider):
    async with await provider.create(SMALL) as box:
        t = time.monotonic()
        r = await box.exec("(setsid sleep 300 &); while :; do :; done", timeout=1)
        assert r.timed_out and time.monotonic() - t > 0.9
        r = await box.exec("ps -e -o pid=,comm=")
        comms = [line.split()[1] for line in r.stdout.strip().splitlines()]
        assert set(comms) <= {"bwrap", "python3", "bash", "ps"}, comms  # init, agent, this ps


async def test_disk_fill_hits_workspace_cap(provider):
    async with await provider.create(SMALL) as box:
        r = await box.exec("dd if=/dev/zero of=big bs=1M count=64", timeout=20)
        assert r.exit_code != 0 and "No space left" in r.stderr
        r = await box.exec("du -sm big | cut -f1")
        assert int(r.stdout) <= 16


async def test_output_flood_is_capped(provider):
    async with await provider.create(SMALL) as box:
        r = await box.exec("yes; yes >&2", timeout=20)
        assert r.truncated and len(r.stdout) == 64 * 1024
        py = await box.python("for i in range(10**6): print('y' * 100)", timeout=20)
        assert py["truncated"] and len(py["stdout"]) == 64 * 1024


def test_deferred_cgroups_are_reclaimed():
    """A group whose removal could not finish (processes still exiting) is retried later:
    `reclaim_deferred` (called by providers on close and at exit) kills and removes it."""
    cg = cgroups.Cgroup.create(cgroups.group_name("deferred-test"), 64 * 2**20, 16, 0.5)
    child = subprocess.Popen(["sleep", "60"], preexec_fn=lambda: cgroups.join(cg.join_files()))
    try:
        assert not cg.remove()  # busy: a live process holds it
        cgroups.defer(cg)
        assert cgroups.reclaim_deferred() == 0
        assert not any(d.exists() for d in cg.dirs.values())
        assert child.wait(5) == -signal.SIGKILL
    finally:
        child.kill()
        child.wait()


async def test_nothing_remains_after_close(provider):
    before_mounts = mounts()
    boxes = await provider.create_many(4, SMALL)
    for b in boxes:
        await b.exec("sleep 100 &")
    assert sandbox_uid_pids()
    assert cgroups.existing()
    await asyncio.gather(*(b.close() for b in boxes))
    await asyncio.gather(*(b.close() for b in boxes))  # idempotent
    assert all(not b.alive for b in boxes)
    await provider.reclaimed()  # forked sandboxes: close kills, reclaim runs in the background
    assert provider.reclaiming == 0
    for _ in range(100):  # killed processes may take a moment to be reaped by init
        if not sandbox_uid_pids():
            break
        await asyncio.sleep(0.02)
    assert sandbox_uid_pids() == []
    assert [p for p in cgroups.existing() if f"-{os.getpid()}-" in p.name] == []
    assert mounts() == before_mounts
    with pytest.raises(SandboxDeadError):
        await boxes[0].exec("true")


async def test_dead_agent_and_lifetime_raise_sandbox_error(provider):
    box = await provider.create(SMALL)
    with pytest.raises(SandboxError):  # the command kills the agent serving it
        await box.exec("kill -9 $PPID; sleep 1", timeout=5)
    with pytest.raises(SandboxError):
        await box.exec("true")
    assert not box.alive
    short = await provider.create(SandboxSpec(lifetime=0.3))
    await asyncio.sleep(0.6)
    with pytest.raises(SandboxError):
        await short.exec("true")
    assert provider.live == 0


def make_wheel(directory: Path) -> Path:
    """A one-module wheel built by hand (no network, no build backend)."""
    import base64
    import hashlib
    import zipfile

    files = {
        "vfdemo.py": "ANSWER = 42\n",
        "vfdemo-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: vfdemo\nVersion: 1.0\n",
        "vfdemo-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text)}")
    record.append("vfdemo-1.0.dist-info/RECORD,,")
    path = directory / "vfdemo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        z.writestr("vfdemo-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


@pytest.mark.skipif(installer() is None, reason="no uv to build runtimes with")
async def test_runtime_packages_built_once_and_mounted_read_only(provider, tmp_path):
    wheel = make_wheel(tmp_path)
    os.chmod(tmp_path, 0o755)
    spec = SandboxSpec(runtime=RuntimeSpec(packages=(str(wheel),)), memory=128 * MiB)
    venv = ensure_runtime(spec.runtime)
    assert venv is not None and (venv / ".ready").exists()
    built = (venv / ".ready").stat().st_mtime
    async with await provider.create(spec) as box:
        r = await box.exec("python -c 'import vfdemo; print(vfdemo.ANSWER)'")
        assert r.stdout == "42\n", r.stderr
        assert (await box.python("import vfdemo; vfdemo.ANSWER"))["result"] == "42"
        r = await box.exec("touch /opt/venv/x")
        assert r.exit_code != 0
    assert ensure_runtime(spec.runtime) == venv
    assert (venv / ".ready").stat().st_mtime == built  # cached, not rebuilt


@pytest.mark.skipif(seccomp_program() is None, reason="the seccomp filter is x86_64 only")
async def test_seccomp_filter_blocks_inet_sockets_and_dangerous_syscalls(provider):
    probe = (
        "import ctypes, errno, socket\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "out = []\n"
        "for fam in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK):\n"
        "    try:\n"
        "        socket.socket(fam, socket.SOCK_DGRAM); out.append('open')\n"
        "    except OSError as e: out.append(errno.errorcode[e.errno])\n"
        "socket.socket(socket.AF_UNIX).close()\n"
        "for name, nr in [('ptrace', 101), ('keyctl', 250), ('unshare', 272)]:\n"
        "    rc = libc.syscall(nr, 0, 0, 0, 0)\n"
        "    out.append(f'{name}={rc},{errno.errorcode.get(ctypes.get_errno())}')\n"
        "print(' '.join(out))\n"
    )
    async with await provider.create(SMALL) as box:
        r = await box.exec(["python3", "-c", probe])
        assert r.stdout.split() == ["EAFNOSUPPORT"] * 3 + [
            "ptrace=-1,EPERM",
            "keyctl=-1,EPERM",
            "unshare=-1,EPERM",
        ], r


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


async def test_zygote_that_dies_takes_its_sandboxes_and_is_restarted():
    p = BwrapProvider()
    try:
        first = await p.create(SMALL)
        zygote = p.zygote()
        old = zygote.proc.pid
        os.kill(old, signal.SIGKILL)  # its sandboxes die with it (parent-death signal) ...
        with pytest.raises(SandboxDeadError):  # ... and say so, rather than hang
            await first.exec("sleep 5", timeout=10)
        assert not first.alive
        second = await p.create(SMALL)  # dead zygote noticed (at once or mid-request)
        assert (await second.exec(["echo", "ok"])).stdout == "ok\n"
        assert zygote.starts == 2 and zygote.proc.pid != old and not alive(old)
        zygote.proc.kill()  # dying unnoticed: the request finds out, and create retries
        zygote.proc.wait()
        zygote.proc = _Unnoticed(zygote.proc)  # type: ignore[assignment]
        third = await p.create(SMALL)
        assert (await third.exec("true")).exit_code == 0 and zygote.starts == 3
        for box in (first, second, third):
            await box.close()
        await p.reclaimed()
        assert p.live == 0
        assert [g for g in cgroups.existing() if f"-{os.getpid()}-" in g.name] == []
        zpid = zygote.proc.pid
    finally:
        await p.close()
    assert not alive(zpid) and sandbox_uid_pids() == []


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[1])


class _Unnoticed:
    """A dead zygote's Popen that still claims to run, as if it died after the last check."""

    def __init__(self, proc):
        self._proc, self.pid = proc, proc.pid

    def poll(self):
        return None

    def kill(self):
        pass

    def wait(self):
        return self._proc.wait()


def test_sandboxes_and_zygote_die_with_their_host():
    import subprocess
    import sys

    host = subprocess.Popen(
        [sys.executable, "-c", HOST_SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        line = host.stdout.readline()
        assert line, host.stderr.read()
        pids = [int(x) for x in line.split()]  # inits, monitors, agents, the zygote
    finally:
        host.kill()  # no atexit, no cleanup: the host is gone in one go
        host.wait()
    deadline = time.monotonic() + 10
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [p for p in pids if alive(p)] == []
    # its cgroups are swept by the next provider of this machine
    cgroups.sweep_stale()
    assert [g for g in cgroups.existing() if f"-{host.pid}-" in g.name] == []


HOST_SCRIPT = """
import asyncio
from verifiers.sandbox.base import MiB, SandboxSpec
from verifiers.sandbox.bwrap import BwrapProvider

async def main():
    p = BwrapProvider()
    spec = SandboxSpec(memory=96 * MiB, pids=48, disk=16 * MiB)
    boxes = [await p.create(spec) for _ in range(3)]
    pids = [b.proc.pid for b in boxes] + [b.proc.monitor_pid for b in boxes]  # inits, monitors
    pids += [b._agent_host_pid() for b in boxes]
    print(*pids, p.zygote().proc.pid, flush=True)
    await asyncio.sleep(300)

asyncio.run(main())
"""


def test_background_reclaim_finishes_even_if_the_loop_ends_first():
    """close() returns once a forked sandbox is killed; its reclaim (waiting for the namespace
    to empty, removing the cgroup) runs in the background. A loop that ends right after the
    close cancels the reclaim, which then finishes synchronously: nothing is left."""
    p = BwrapProvider()

    async def use_and_leave():
        boxes = await p.create_many(3, SMALL)
        for b in boxes:
            await b.exec("sleep 100 &")
        await asyncio.gather(*(b.close() for b in boxes))
        return p.reclaiming, p.zygote().proc.pid

    pending, zygote = asyncio.run(use_and_leave())  # no reclaimed(), no provider close
    assert pending > 0  # it really was in the background
    assert p.reclaiming == 0
    assert [g for g in cgroups.existing() if f"-{os.getpid()}-" in g.name] == []
    for _ in range(100):
        if not sandbox_uid_pids():
            break
        time.sleep(0.02)
    assert sandbox_uid_pids() == []
    # the zygote was stopped and reaped when its loop ended: not even a zombie is left
    assert not Path(f"/proc/{zygote}").exists() or _ppid(zygote) != os.getpid()
    asyncio.run(p.close())
    assert not alive(zygote)


async def test_no_working_zygote_falls_back_to_bwrap(monkeypatch):
    from verifiers.sandbox.bwrap import Zygote, ZygoteError

    def broken(self):
        raise ZygoteError("the sandbox zygote exited at start-up (simulated)")

    monkeypatch.setattr(Zygote, "_start", broken)
    p = BwrapProvider()
    try:
        box = await p.create(SMALL)  # warns, then the same sandbox through bwrap
        assert not p.use_zygote and not hasattr(box.proc, "monitor_pid")
        assert (await box.exec(["echo", "ok"])).stdout == "ok\n"
        await box.close()
    finally:
        await p.close()
    assert [g for g in cgroups.existing() if f"-{os.getpid()}-" in g.name] == []


async def test_zygote_outlives_the_thread_that_started_it():
    """A zygote started from a worker thread's event loop (evaluate_sync inside a notebook,
    say) keeps serving the sandboxes of other loops after that thread ends: it is not bound to
    the thread by a parent-death signal."""
    import threading

    p = BwrapProvider()
    started, done = threading.Event(), threading.Event()

    async def in_thread():
        box = await p.create(SMALL)  # the first create: the zygote is started from here
        started.set()
        while not done.is_set():
            await asyncio.sleep(0.01)
        await box.close()

    worker = threading.Thread(target=asyncio.run, args=(in_thread(),))
    worker.start()
    try:
        assert await asyncio.to_thread(started.wait, 30)
        zygote = p.zygote().proc.pid
        box = await p.create(SMALL)  # this loop's sandbox, forked by the same zygote
        done.set()
        await asyncio.to_thread(worker.join)  # its loop ended, the thread is gone
        assert (await box.exec(["echo", "ok"])).stdout == "ok\n" and box.alive
        assert p.zygote().proc.pid == zygote and alive(zygote)
        await box.close()
    finally:
        done.set()
        worker.join()
        await p.close()
    assert not alive(zygote)


def test_agent_imports_only_what_its_start_up_budget_allows():
    """agent.py's docstring: a cold sandbox's start is mostly the agent's imports, so it loads
    C modules only; its annotations must not bring `typing`, `__future__`, `json`, `re` or
    `enum` in (mypy reads them; the interpreter does not import for them)."""
    import sys

    from verifiers.sandbox.support import AGENT_SRC

    probe = (
        f"import sys; sys.path.insert(0, {str(AGENT_SRC.parent)!r}); import agent; "
        "print(sorted({'typing', '__future__', 'json', 're', 'enum'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
