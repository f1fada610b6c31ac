"""The zygote: a long-lived, already-imported agent that forks into each new sandbox.

Runs on the host under the sandbox's interpreter (`/usr/bin/python3 -I -S`), as the unprivileged
sandbox uid, started by `BwrapProvider` (stdlib only: its source and the agent's arrive over
its socket, so it holds no host path). What a
cold sandbox used to spend on `exec bwrap` + CPython start-up + imports (~15 ms) becomes a
clone of this small process. Nothing of a sandbox is made ahead: every request gets fresh
namespaces, mounts and cgroups, exactly what bwrap set up before:

  zygote --clone(new user, mount, pid, net, ipc, uts namespaces)--> init, pid 1 of the new pid
    namespace: joins the sandbox's cgroups, a new cgroup namespace, uid map host uid -> 1000,
    a tmpfs root with /usr and a minimal /etc read-only, /proc, a minimal /dev, size-capped
    tmpfs /tmp and workspace, pivot_root, root remounted read-only, hostname, no nested user
    namespaces, every capability dropped, no_new_privs, the seccomp filter
      --fork--> the agent (pid 2): `agent.main()`; init reaps orphans and exits with it.

Init exits only once the agent is gone, and its exit ends the whole pid namespace, so its
pidfd (handed to the host) becomes readable when nothing of the sandbox runs any more. The
zygote ignores SIGCHLD (inits are reaped by the kernel), exits when the host closes its socket
or dies, and every init dies with the zygote (parent-death signal): sandboxes never outlive
their host.

Protocol (SOCK_SEQPACKET, the zygote's stdin): the host sends the config (`ZYGOTE_BOOT` in
zygote_host.py reads it), the zygote answers {"ready": true}; then per request a
JSON message with the fds [agent stdin, agent stdout, cgroup files to write "0" into...] as
SCM_RIGHTS, answered by {"pid": init's pid} with init's pidfd, or {"error": ...}.
"""

import array
import binascii
import ctypes
import gc
import json
import os
import select
import signal
import socket
import sys
import time

# annotations use builtins only: this module arrives over a socket and runs stdlib-only
Request = dict  # one decoded request from the host
Filter = tuple  # load_filter's (struct sock_fprog, the buffer it points into)

CLONE_PIDFD = 0x00001000
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_REC, MS_SLAVE, MS_RELATIME = 1 << 14, 1 << 19, 1 << 21
MNT_DETACH = 2
ST_RELATIME = 4096

PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 38, 22
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
SECCOMP_MODE_FILTER = 2
SYS_CLONE, SYS_PIVOT_ROOT, SYS_CAPSET = (
    56,
    155,
    126,
)  # x86_64; elsewhere the provider does not use the zygote

libc = ctypes.CDLL(None, use_errno=True)
LAST_CAP = 40  # read in main()


def _check(ret: int, what: str) -> None:
    if ret != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def _b(s: "str | None") -> "bytes | None":
    return None if s is None else os.fsencode(s)


def mount(
    src: "str | None", dst: str, fstype: "str | None", flags: int, data: "str | None" = None
) -> None:
    _check(
        libc.mount(_b(src), _b(dst), _b(fstype), ctypes.c_ulong(flags), _b(data)), f"mount {dst}"
    )


def prctl(option: int, arg: int = 0) -> None:
    _check(libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl {option}")


def _mount_flags(path: str) -> int:
    """The flags of the mount holding `path` that a remount in a user namespace must keep."""
    f = os.statvfs(path).f_flag
    out = f & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME)
    return out | (MS_RELATIME if f & ST_RELATIME else 0)


def bind(src: str, dst: str, readonly: bool = True) -> None:
    mount(src, dst, None, MS_BIND | MS_REC)
    if readonly:
        mount(None, dst, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _mount_flags(dst))


def _touch(path: str) -> None:
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))


def build_root(req: Request, root: str) -> None:
    """Mount the sandbox's filesystem below `root` (run inside the new namespaces)."""
    mount(None, "/", None, MS_SLAVE | MS_REC)  # nothing propagates back to the host
    venv = os.open(req["venv"], os.O_PATH | os.O_DIRECTORY) if req.get("venv") else None
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    wd = req["workdir"]
    for d in ("usr", "etc", "proc", "dev", "tmp", "opt"):
        os.mkdir(f"{root}/{d}")
    os.makedirs(root + wd, exist_ok=True)
    for name, target in (("bin", "usr/bin"), ("sbin", "usr/sbin"), ("lib", "usr/lib"),
                         ("lib64", "usr/lib64")):  # fmt: skip
        os.symlink(target, f"{root}/{name}")
    bind("/usr", f"{root}/usr")
    # /etc: generated in the root tmpfs (a bind of a host directory would show its host path
    # in /proc/self/mountinfo); only system data is bound in, at its own path
    for name, data in ETC["files"].items():
        fd = os.open(f"{root}/etc/{name}", os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, data)
        os.close(fd)
    for name, target in ETC["links"].items():
        os.symlink(target, f"{root}/etc/{name}")
    for path in ETC["system"]:
        if os.path.isdir(path):
            os.mkdir(root + path)
        else:
            _touch(root + path)
        bind(path, root + path)
    if venv is not None:
        os.mkdir(f"{root}/opt/venv")
        bind(f"/proc/self/fd/{venv}", f"{root}/opt/venv")
        os.close(venv)
    size = f"size={int(req['disk'])},mode=0755"
    mount("tmpfs", f"{root}/tmp", "tmpfs", MS_NOSUID | MS_NODEV, size)
    mount("tmpfs", root + wd, "tmpfs", MS_NOSUID | MS_NODEV, size)
    # /dev: a tmpfs with the harmless devices bound in (what `bwrap --dev` makes)
    dev = f"{root}/dev"
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for node in ("null", "zero", "full", "random", "urandom", "tty"):
        _touch(f"{dev}/{node}")
        mount(f"/dev/{node}", f"{dev}/{node}", None, MS_BIND)
    for i, name in enumerate(("stdin", "stdout", "stderr")):
        os.symlink(f"/proc/self/fd/{i}", f"{dev}/{name}")
    os.symlink("/proc/self/fd", f"{dev}/fd")
    os.symlink("pts/ptmx", f"{dev}/ptmx")
    os.mkdir(f"{dev}/shm")
    os.mkdir(f"{dev}/pts")
    mount("devpts", f"{dev}/pts", "devpts", MS_NOSUID | MS_NOEXEC,
          "newinstance,ptmxmode=0666,mode=620")  # fmt: skip
    # /proc of the new pid namespace; no nested user namespaces (what `bwrap --disable-userns`
    # achieves); then the kernel knobs read-only, as `bwrap --proc` does
    proc = f"{root}/proc"
    mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    with open(f"{proc}/sys/user/max_user_namespaces", "w") as f:
        f.write("0")
    for sub in ("sys", "sysrq-trigger", "irq", "bus"):
        if os.path.exists(f"{proc}/{sub}"):
            bind(f"{proc}/{sub}", f"{proc}/{sub}")


def enter_root(root: str) -> None:
    os.chdir(root)
    _check(libc.syscall(SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
    _check(libc.umount2(b".", MNT_DETACH), "umount old root")  # the host's tree, detached
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_filter(program: bytes) -> "Filter | None":
    """The seccomp program as a ready `struct sock_fprog` (built once, in the zygote)."""
    if not program:
        return None
    buf = ctypes.create_string_buffer(program, len(program))
    return SockFprog(len(program) // 8, ctypes.addressof(buf)), buf


def drop_privileges(seccomp: "Filter | None", last_cap: int) -> None:
    for cap in range(last_cap + 1):
        prctl(PR_CAPBSET_DROP, cap)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: all empty
    _check(libc.syscall(SYS_CAPSET, header, data), "capset")
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    if seccomp is not None:
        prog = ctypes.byref(seccomp[0])
        _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0), "seccomp")


def init(req: Request, seccomp: "Filter | None") -> None:
    """Pid 1 of the new namespaces: finish the sandbox, fork the agent (pid 2), then reap
    orphans until the agent exits (which ends the namespace), like bwrap's init. The agent is
    not pid 1 so that code inside can kill it, as with bwrap: a sandbox whose agent is gone is
    reported dead."""
    root = ROOT
    build_root(req, root)
    mark(req, "mounts")
    socket.sethostname("sandbox")
    enter_root(root)
    null = os.open("/dev/null", os.O_RDWR)  # the sandbox's own, no longer the host's
    os.dup2(null, 2)
    os.close(null)
    mark(req, "pivot_root")
    drop_privileges(seccomp, LAST_CAP)
    mark(req, "privileges_dropped")
    os.environ.clear()
    os.environ.update(req["env"])
    sys.executable = req["python"]
    # the agent's module: its code came over the socket with this one's (ZYGOTE_BOOT)
    import agent  # type: ignore[import-not-found]

    pid = os.fork()
    if pid == 0:
        os.setsid()
        mark(req, "agent_forked")
        agent.main({"trace": TRACE} if req.get("trace") else None)
        os._exit(0)
    prctl(PR_SET_DUMPABLE, 0)  # nothing inside may reach init's memory or descriptors
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(0)
        if done == pid:
            os._exit(min(max(os.waitstatus_to_exitcode(status), 0), 255))


def clone_init(
    req: Request, fds: list[int], seccomp: "Filter | None", uid: int, gid: int
) -> "tuple[int, int]":
    """clone(2) init straight into new user, mount, pid, network, ipc and uts namespaces (no
    intermediate process; `os.fork` cannot pass namespace flags). Returns (pid, pidfd) in the
    zygote; the child never returns."""
    pidfd = ctypes.c_int(-1)
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    flags |= CLONE_NEWNET | CLONE_PIDFD | signal.SIGCHLD
    # a fork-like clone (no new stack: the child continues on a copy of this one); the
    # zygote is single-threaded, so the interpreter's state is consistent in the copy. (glibc
    # did not make this child, so its cached thread id is the zygote's: init must not use
    # raise(3) or pthread_kill; it does not, and the agent it forks with fork(3) is clean.)
    pid = libc.syscall(SYS_CLONE, ctypes.c_ulong(flags), None, ctypes.byref(pidfd), None, None)
    if pid < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"clone: {os.strerror(e)}")
    if pid > 0:
        return pid, pidfd.value
    stdin_r, stdout_w, *tasks = fds
    try:
        mark(req, "cloned")
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the zygote (it dies with the host) went
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in tasks:  # "0": this (single-threaded) process, without the global lock
            os.write(fd, b"0")
            os.close(fd)
        _check(libc.unshare(CLONE_NEWCGROUP), "unshare cgroup")  # rooted at its own group
        for name, text in (("setgroups", "deny"), ("uid_map", f"{req['inner_uid']} {uid} 1"),
                           ("gid_map", f"{req['inner_uid']} {gid} 1")):  # fmt: skip
            with open(f"/proc/self/{name}", "w") as f:  # still the host's /proc
                f.write(text)
        os.dup2(stdin_r, 0)
        os.dup2(stdout_w, 1)
        null = os.open("/dev/null", os.O_RDWR)
        os.dup2(null, 2)  # not the zygote's: nothing of the host stays open in the sandbox
        os.closerange(3, 1 << 30)  # (close_range(2)) the zygote's socket and anything else it held
        os.setsid()
        mark(req, "cgroups_joined_uid_mapped")
        init(req, seccomp)
    except BaseException as e:  # tell the host why, on the agent's stdout
        for fd in (1, stdout_w):
            try:
                os.write(fd, _failure(e))
                break
            except OSError:
                pass
    os._exit(127)


# Where init mounts the sandbox's root tmpfs before pivoting into it: a directory every host
# has, shadowed only inside the new mount namespace (so no host path is held in memory that
# the agent, a fork of this process, inherits).
ROOT = "/tmp"
# The generated /etc ({"files": name -> bytes, "links": name -> target, "system": [paths]}),
# sent once in the configuration: the same for every sandbox.
ETC: dict = {"files": {}, "links": {}, "system": []}

TRACE: list = []  # (step, CLOCK_MONOTONIC) of this sandbox's start, when the request asks


def mark(req: Request, step: str) -> None:
    if req.get("trace"):
        TRACE.append((step, time.monotonic()))


def _failure(e: BaseException) -> bytes:
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" (zygote.py:{tb.tb_lineno})" if tb is not None else ""
    msg = {"ready": False, "error": f"{type(e).__name__}: {e}{where}"}
    return (json.dumps(msg) + "\n").encode()


def main(sock: socket.socket, config: Request) -> None:
    """Serve the host on `sock`; `config` (sent over it first): seccomp (the BPF program,
    base64, or None) and the generated /etc. Nothing host-specific is on the command line or
    in the environment (both empty of host data), which every sandbox's init and agent
    inherit (readable as /proc/<pid>/cmdline and /environ), nor any host path in memory: the
    code itself came over the socket too.

    The zygote exits when the host closes its end of the socket or the host process is gone
    (not by a parent-death signal: that fires when the host *thread* that started it ends,
    e.g. the worker thread of an `asyncio.run` in a thread, killing every sandbox with it)."""
    host = os.getppid()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # inits are reaped by the kernel
    uid, gid = os.getuid(), os.getgid()
    global LAST_CAP
    with open("/proc/sys/kernel/cap_last_cap") as f:
        LAST_CAP = int(f.read())
    seccomp = None
    if config.get("seccomp"):
        seccomp = load_filter(binascii.a2b_base64(config["seccomp"]))
    etc = config.get("etc") or {}
    ETC["files"] = {k: binascii.a2b_base64(v) for k, v in etc.get("files", {}).items()}
    ETC["links"] = dict(etc.get("links", {}))
    ETC["system"] = list(etc.get("system", []))
    import agent  # type: ignore[import-not-found]  # noqa: F401  (loaded once here, inherited by every sandbox)

    # Everything alive now is shared, copy-on-write, with every sandbox: keep the collector
    # off it, or the first collection in a sandbox writes to (and so copies) all of its pages.
    gc.collect()  # (the boot's garbage first: it is not worth sharing)
    gc.freeze()

    sock.send(b'{"ready": true}')
    fd_size = socket.CMSG_SPACE(32 * array.array("i").itemsize)
    while True:
        if not select.select([sock], [], [], 1.0)[0]:
            if os.getppid() != host:  # reparented: the host died (a fork of it holds the socket)
                return
            continue
        msg, anc, _flags, _addr = sock.recvmsg(1 << 20, fd_size)
        if not msg:
            return  # the host closed its end
        fds = array.array("i")
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
        try:
            req = json.loads(msg)
            pid, pidfd = clone_init(req, list(fds), seccomp, uid, gid)
        except Exception as e:
            for fd in fds:
                os.close(fd)
            sock.send(json.dumps({"error": repr(e)}).encode())
            continue
        for fd in fds:
            os.close(fd)
        sock.sendmsg(
            [json.dumps({"pid": pid}).encode()],
            [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [pidfd]))],
        )
        os.close(pidfd)
