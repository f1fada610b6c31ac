"""The zygote: a long-lived, already-imported agent that forks into each new sandbox.

Runs on the host under the sandbox's interpreter (`/usr/bin/python3 -I -S`), as the unprivileged
sandbox uid, started by `BwrapProvider` (stdlib only: it is copied next to `agent.py`). What a
cold sandbox used to spend on `exec bwrap` + CPython start-up + imports (~15 ms) becomes a fork
of this small process. Nothing of a sandbox is made ahead: every request gets fresh namespaces,
mounts and cgroups, exactly what bwrap set up before:

  zygote --fork--> monitor (joins the sandbox's cgroups, new session, unshare user/mount/pid/
    net/ipc/uts/cgroup namespaces, maps host uid -> 1000)
    --fork--> init, pid 1 of the new pid namespace: a tmpfs root with /usr and a minimal /etc
    read-only, /proc, a minimal /dev, size-capped tmpfs /tmp and workspace, pivot_root, root
    remounted read-only, hostname, no nested user namespaces, every capability dropped,
    no_new_privs, the seccomp filter
      --fork--> the agent (pid 2): `agent.main()`; init reaps orphans and exits with it.

The monitor waits for init (when init is gone, its whole pid namespace is gone) and exits; it also kills the agent if the host process dies (a pidfd on the host), so
sandboxes die with their host, not with the zygote. The zygote ignores SIGCHLD (monitors are
reaped by the kernel) and hands the host a pidfd of each monitor.

Protocol (SOCK_SEQPACKET, fd from argv): the zygote sends {"ready": true}; then per request a
JSON message with the fds [agent stdin, agent stdout, cgroup files to write "0" into...] as
SCM_RIGHTS, answered by {"pid": monitor pid} with the monitor's pidfd, or {"error": ...}.
"""

import array
import ctypes
import gc
import json
import os
import select
import signal
import socket
import sys

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

PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 1, 24, 38, 22
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
SECCOMP_MODE_FILTER = 2
SYS_PIVOT_ROOT, SYS_CAPSET = 155, 126  # x86_64; elsewhere the provider does not use the zygote

libc = ctypes.CDLL(None, use_errno=True)
LAST_CAP = 40  # read in main()


def _check(ret, what):
    if ret != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def _b(s):
    return None if s is None else os.fsencode(s)


def mount(src, dst, fstype, flags, data=None):
    _check(
        libc.mount(_b(src), _b(dst), _b(fstype), ctypes.c_ulong(flags), _b(data)), f"mount {dst}"
    )


def prctl(option, arg=0):
    _check(libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl {option}")


def _mount_flags(path):
    """The flags of the mount holding `path` that a remount in a user namespace must keep."""
    f = os.statvfs(path).f_flag
    out = f & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME)
    return out | (MS_RELATIME if f & ST_RELATIME else 0)


def bind(src, dst, readonly=True):
    mount(src, dst, None, MS_BIND | MS_REC)
    if readonly:
        mount(None, dst, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _mount_flags(dst))


def _touch(path):
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))


def build_root(req, root):
    """Mount the sandbox's filesystem below `root` (run inside the new namespaces)."""
    mount(None, "/", None, MS_SLAVE | MS_REC)  # nothing propagates back to the host
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    wd = req["workdir"]
    for d in ("usr", "etc", "proc", "dev", "tmp", "opt"):
        os.mkdir(f"{root}/{d}")
    os.makedirs(root + wd, exist_ok=True)
    for name, target in (("bin", "usr/bin"), ("sbin", "usr/sbin"), ("lib", "usr/lib"),
                         ("lib64", "usr/lib64")):  # fmt: skip
        os.symlink(target, f"{root}/{name}")
    bind("/usr", f"{root}/usr")
    bind(req["etc"], f"{root}/etc")
    if req.get("venv"):
        os.mkdir(f"{root}/opt/venv")
        bind(req["venv"], f"{root}/opt/venv")
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


def enter_root(root):
    os.chdir(root)
    _check(libc.syscall(SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
    _check(libc.umount2(b".", MNT_DETACH), "umount old root")  # the host's tree, detached
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_filter(program):
    """The seccomp program as a ready `struct sock_fprog` (built once, in the zygote)."""
    if not program:
        return None
    buf = ctypes.create_string_buffer(program, len(program))
    return SockFprog(len(program) // 8, ctypes.addressof(buf)), buf


def drop_privileges(seccomp, last_cap):
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


def init(req, seccomp):
    """Pid 1 of the new namespaces: finish the sandbox, fork the agent (pid 2), then reap
    orphans until the agent exits (which ends the namespace), like bwrap's init. The agent is
    not pid 1 so that code inside can kill it, as with bwrap: a sandbox whose agent is gone is
    reported dead."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the monitor went: so does the sandbox
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    host_pid = int(os.readlink("/proc/self"))  # still the host's /proc here
    root = req["root"]
    build_root(req, root)
    socket.sethostname("sandbox")
    enter_root(root)
    drop_privileges(seccomp, LAST_CAP)
    os.environ.clear()
    os.environ.update(req["env"])
    sys.executable = req["python"]
    import agent

    pid = os.fork()
    if pid == 0:
        os.setsid()
        agent.main({"init_host_pid": host_pid})
        os._exit(0)
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


def monitor(req, fds, host_pidfd, seccomp):
    """The zygote's child: join the sandbox, make its namespaces, fork the agent, wait."""
    stdin_r, stdout_w, *tasks = fds
    os.setsid()
    for fd in tasks:  # "0": this (single-threaded) process, without the global cgroup lock
        os.write(fd, b"0")
        os.close(fd)
    hp = os.dup(host_pidfd)
    os.dup2(stdin_r, 0)
    os.dup2(stdout_w, 1)
    os.dup2(hp, 3)
    os.closerange(4, 1 << 16)  # the zygote's socket and anything else it held
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    flags |= CLONE_NEWCGROUP | CLONE_NEWNET
    uid, gid, inner = os.getuid(), os.getgid(), int(req["inner_uid"])
    _check(libc.unshare(flags), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{inner} {uid} 1"),
                       ("gid_map", f"{inner} {gid} 1")):  # fmt: skip
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    pid = os.fork()
    if pid == 0:
        os.close(3)
        try:
            init(req, seccomp)
        except BaseException as e:
            try:
                os.write(1, _failure(e))
            except OSError:
                pass
        os._exit(1)
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    pidfd = os.pidfd_open(pid)
    if 3 in select.select([pidfd, 3], [], [])[0]:  # the host died: take the sandbox along
        os.kill(pid, signal.SIGKILL)
    status = os.waitpid(pid, 0)[1]  # returns once the agent's whole pid namespace is gone
    os._exit(min(max(os.waitstatus_to_exitcode(status), 0), 255))


def _failure(e):
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" (zygote.py:{tb.tb_lineno})" if tb is not None else ""
    msg = {"ready": False, "error": f"{type(e).__name__}: {e}{where}"}
    return (json.dumps(msg) + "\n").encode()


def main():
    sock = socket.socket(fileno=int(sys.argv[1]))
    host = os.getppid()
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != host:
        sys.exit(0)
    host_pidfd = os.pidfd_open(host)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # monitors are reaped by the kernel
    global LAST_CAP
    with open("/proc/sys/kernel/cap_last_cap") as f:
        LAST_CAP = int(f.read())
    seccomp = None
    if len(sys.argv) > 2 and sys.argv[2]:
        with open(sys.argv[2], "rb") as f:
            seccomp = load_filter(f.read())
    import agent  # noqa: F401  (loaded once here, inherited by every sandbox)

    # Everything alive now is shared, copy-on-write, with every sandbox: keep the collector
    # off it, or the first collection in a sandbox writes to (and so copies) all of its pages.
    gc.freeze()

    sock.send(b'{"ready": true}')
    fd_size = socket.CMSG_SPACE(32 * array.array("i").itemsize)
    while True:
        msg, anc, _flags, _addr = sock.recvmsg(1 << 20, fd_size)
        if not msg:
            return  # the host closed its end
        fds = array.array("i")
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
        try:
            req = json.loads(msg)
            pid = os.fork()
        except Exception as e:
            for fd in fds:
                os.close(fd)
            sock.send(json.dumps({"error": repr(e)}).encode())
            continue
        if pid == 0:
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                monitor(req, list(fds), host_pidfd, seccomp)
            except BaseException as e:  # tell the host why, on the agent's stdout
                for fd in (1, fds[1] if len(fds) > 1 else 1):
                    try:
                        os.write(fd, _failure(e))
                        break
                    except OSError:
                        pass
            finally:
                os._exit(127)
        pidfd = os.pidfd_open(pid)
        for fd in fds:
            os.close(fd)
        sock.sendmsg(
            [json.dumps({"pid": pid}).encode()],
            [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [pidfd]))],
        )
        os.close(pidfd)


if __name__ == "__main__":
    main()
