"""The in-sandbox agent (stdlib only; runs under the sandbox's own Python).

Reads one JSON request per line on stdin and answers one JSON line on stdout. Ops:
  exec   {cmd, stdin(b64), cwd, env, timeout, cap} -> {exit_code, stdout, stderr, timed_out,
         truncated, duration}
  write  {path, data(b64), mode}  /  read {path} -> {data}
  put    {path, tar(b64)}         /  get  {path} -> {tar}
  py     {code, timeout, cap} -> {status, stdout, stderr, result, timed_out}  (persistent REPL)
  ping
Every command runs in its own session; on timeout or when output passes the cap the whole
group is killed, and after every request everything but the agent, the namespace init and the
REPL is killed, so background jobs never outlive the command that started them.

Start-up cost matters (it is most of a cold sandbox), so this imports only C modules up front:
no `json` package (it pulls in `re` and `enum`), no `subprocess`, no threads, and `_signal`
rather than `signal` (whose enums bring in `enum`, `functools` and `collections`: ~4 ms of the
agent's ~7 ms of imports, measured with `-X importtime`). For the same reason the annotations
use builtins only (no `typing`, no `__future__`): `Request` and `Reply` are plain `dict`.
"""

import binascii
import os
import select
import sys
import time

TYPE_CHECKING = False  # (mypy reads any name so spelled as true; `typing` is not imported)
if TYPE_CHECKING:
    import signal
else:
    import _signal as signal  # the C module: the same functions, plain ints for signal numbers

Request = dict  # one decoded request line (str keys, JSON values)
Reply = dict  # one reply line before encoding

try:  # the C halves of json, without the Python package around them
    import _json

    class _Ctx:
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = {"NaN": float("nan"), "Infinity": float("inf")}.__getitem__
        memo: dict = {}

    _scan = _json.make_scanner(_Ctx())  # type: ignore[arg-type]
    _enc = _json.make_encoder(
        None, repr, _json.encode_basestring_ascii, None, ":", ",", False, False, True
    )

    def loads(s: str) -> Reply:
        obj, _ = _scan(s.strip(), 0)
        return obj  # type: ignore[no-any-return]

    def dumps(obj: object) -> str:
        return "".join(_enc(obj, 0))

except (ImportError, AttributeError, TypeError):  # another interpreter: the plain package
    import json

    loads, dumps = json.loads, json.dumps  # type: ignore[assignment]

REPL_SRC = r"""
import ast, io, json, sys, traceback
ns = {"__name__": "__main__"}
out = sys.stdout
count = 0
class Cap(io.StringIO):
    def __init__(self, cap):
        super().__init__(); self.cap = cap; self.n = 0; self.truncated = False
    def write(self, s):
        if self.n < self.cap:
            super().write(s[: self.cap - self.n])
        if self.n + len(s) > self.cap:
            self.truncated = True
        self.n += len(s)
        return len(s)
for line in sys.stdin:
    req = json.loads(line)
    count += 1
    so, se = Cap(req["cap"]), Cap(req["cap"])
    sys.stdout, sys.stderr = so, se
    status, result = "ok", None
    try:
        tree = ast.parse(req["code"], "<cell>", "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<cell>", "exec"), ns)
        if last is not None:
            value = eval(compile(last, "<cell>", "eval"), ns)
            if value is not None:
                result = repr(value)[: req["cap"]]
    except SystemExit:
        status = "error"; se.write("SystemExit is ignored in the REPL\n")
    except BaseException:
        status = "error"; se.write(traceback.format_exc())
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    out.write(json.dumps({"status": status, "stdout": so.getvalue(), "stderr": se.getvalue(),
                          "result": result, "execution_count": count,
                          "truncated": so.truncated or se.truncated}) + "\n")
    out.flush()
"""

# SIGUSR1 from the host means "abandon the current request" (the caller was cancelled): the
# handler only sets a flag; the wakeup pipe makes the select loops notice at once.
# (made in `main`, not at import: the zygote imports this module once and forks it into
# every sandbox, and each agent needs its own pipe)
WAKE_R = WAKE_W = -1
interrupted = False


def _on_interrupt(signum: int, frame: object) -> None:
    global interrupted
    interrupted = True


def _take_interrupt() -> bool:
    """True if SIGUSR1 arrived; drains the wakeup pipe."""
    try:
        while os.read(WAKE_R, 512):
            pass
    except BlockingIOError:
        pass
    return interrupted


WORKDIR = "/workspace"
SWEEP = False
REPL_PYTHON = ""  # the REPL's interpreter when not the agent's own (an image's `python3`)


class Repl:
    """The persistent interpreter: its pid and the pipe ends the agent holds."""

    def __init__(self) -> None:
        # an image sandbox's REPL is the image's Python (what its packages are installed
        # into), else, or where the image has none, the agent's own
        for python in [REPL_PYTHON, sys.executable] if REPL_PYTHON else [sys.executable]:
            try:
                self.pid, stdin, self.stdout, _ = spawn(
                    [python, "-u", "-c", REPL_SRC], WORKDIR, dict(os.environ), True, False
                )
                assert stdin is not None  # (spawned with a stdin pipe)
                self.stdin = stdin
                break
            except OSError:
                if python == sys.executable:
                    raise
        self.buf = b""

    def alive(self) -> bool:
        try:
            return os.waitpid(self.pid, os.WNOHANG)[0] == 0
        except ChildProcessError:
            return False

    def kill(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        os.close(self.stdin)
        os.close(self.stdout)


repl: "Repl | None" = None


def spawn(
    argv: list[str], cwd: str, env: dict[str, str], want_stdin: bool, want_stderr: bool = True
) -> "tuple[int, int | None, int, int | None]":
    """Start `argv` in a new session. Returns (pid, stdin_w, stdout_r, stderr_r).

    posix_spawn (a vfork-style clone in glibc) is much cheaper than fork; the agent is
    single-threaded, so changing its own cwd around the call is safe. Pipes are created
    non-inheritable, and the dup2 file actions give the child exactly fds 0-2."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe() if want_stderr else (None, None)
    in_r, in_w = os.pipe() if want_stdin else (None, None)
    actions = [
        (os.POSIX_SPAWN_DUP2, in_r, 0) if in_r is not None else (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2) if err_w is not None else (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0),
    ]  # fmt: skip
    here = os.getcwd()
    try:
        os.chdir(cwd)
        pid = os.posix_spawnp(argv[0], argv, env, file_actions=actions, setsid=True)
    except OSError as e:
        for fd in (out_r, out_w, err_r, err_w, in_r, in_w):
            if fd is not None:
                os.close(fd)
        raise OSError(f"{argv[0]}: {e.strerror or e}") from None
    finally:
        os.chdir(here)
    for fd in (out_w, err_w, in_r):
        if fd is not None:
            os.close(fd)
    try:  # make the command, not the agent, the OOM killer's choice
        fd = os.open(f"/proc/{pid}/oom_score_adj", os.O_WRONLY)
        os.write(fd, b"1000")
        os.close(fd)
    except OSError:
        pass
    return pid, in_w, out_r, err_r


def _path(p: str) -> str:
    return p if os.path.isabs(p) else os.path.join(WORKDIR, p)


def _reap() -> None:
    """Reap our exited children (as pid 1 of the namespace that includes every orphan)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def sweep() -> None:
    """Kill everything in the pid namespace except pid 1 (init), the agent and the REPL, and
    wait (up to a second) until they are gone, reaping those that are ours: where the agent is
    itself pid 1 (forked by the zygote), every orphan is. Only inside a private pid namespace
    (VF_SWEEP=1): elsewhere /proc is the host's."""
    if not SWEEP:
        return
    keep = {1, os.getpid()}
    if repl is not None:
        keep.add(repl.pid)
    deadline = None
    while True:
        victims = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in keep]
        if not victims:
            break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap()
        now = time.monotonic()
        deadline = deadline or now + 1.0
        if now > deadline:
            break
        time.sleep(0.0002)
    _reap()


def wait_until(pid: int, pidfd: "int | None", deadline: float) -> "tuple[int | None, bool]":
    """(wait status or None, timed out) for `pid`, waiting at most until `deadline`."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status, False
        left = deadline - time.monotonic()
        if left <= 0:
            return None, True
        if pidfd is None:
            time.sleep(min(left, 0.005))
        elif WAKE_R in select.select([pidfd, WAKE_R], [], [], left)[0] and _take_interrupt():
            return None, True


def run(req: Request) -> Reply:
    """The `exec` op: run a command to its end, its timeout, its output cap or an interrupt."""
    cmd = req["cmd"]
    cap = int(req.get("cap", 1 << 20))
    timeout = float(req.get("timeout", 30))
    env = dict(os.environ)
    env.update(req.get("env") or {})
    argv = ["/bin/bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
    stdin = req.get("stdin")
    t0 = time.monotonic()
    try:
        pid, in_w, out_r, err_r = spawn(
            argv, _path(req.get("cwd") or WORKDIR), env, stdin is not None
        )
    except OSError as e:
        return {"exit_code": 127, "stdout": "", "stderr": f"{e}\n", "timed_out": False,
                "truncated": False, "duration": time.monotonic() - t0}  # fmt: skip
    assert err_r is not None  # (spawned with its stderr piped)
    command = Command(pid, in_w, out_r, err_r, binascii.a2b_base64(stdin) if stdin else b"", cap)
    deadline = t0 + timeout
    command.serve(deadline)
    return command.finish(deadline, t0)


class Command:
    """One spawned command of the `exec` op: its stdin fed, its stdout and stderr read up to
    the cap, its exit noticed (by pidfd, or by polling where there is none)."""

    def __init__(
        self, pid: int, in_w: "int | None", out_r: int, err_r: int, pending: bytes, cap: int
    ) -> None:
        self.pid, self.out_r, self.err_r, self.cap = pid, out_r, err_r, cap
        self.in_w = in_w
        self.pending = pending  # stdin not written yet
        if in_w is not None:
            os.set_blocking(in_w, False)
            if not pending:
                self._close_stdin()
        self.bufs = {out_r: bytearray(), err_r: bytearray()}
        self.open_fds = [out_r, err_r]
        self.pidfd: int | None
        try:
            self.pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):  # old kernels, gVisor: poll instead
            self.pidfd = None
        self.drain_until: float | None = None  # set once the command has exited
        self.status: int | None = None
        self.timed_out = self.truncated = False

    def _close_stdin(self) -> None:
        if self.in_w is not None:
            os.close(self.in_w)
            self.in_w = None

    def serve(self, deadline: float) -> None:
        """Until both output pipes close, the deadline, the cap, an interrupt, or 50 ms after
        the command exited (stragglers holding its pipes get a moment, no more)."""
        while self.open_fds:
            now = time.monotonic()
            limit = deadline if self.drain_until is None else min(deadline, self.drain_until)
            if now >= limit:
                self.timed_out = self.drain_until is None
                return
            ready_r, ready_w = self._wait(limit - now)
            if ready_w:
                self._feed()
            if WAKE_R in ready_r and _take_interrupt():
                self.timed_out = True
                return
            for fd in ready_r:
                if fd != WAKE_R:
                    self._on_readable(fd)
            if self.truncated:
                return
            if self.pidfd is None and self.drain_until is None and self.status is None:
                self._poll_exit()

    def _wait(self, left: float) -> "tuple[list[int], list[int]]":
        """The fds ready within `left` seconds (without a pidfd, 10 ms at most: then poll)."""
        rlist = [*self.open_fds, WAKE_R]
        if self.pidfd is not None and self.drain_until is None:
            rlist.append(self.pidfd)
        wait = left if self.pidfd is not None else min(left, 0.01)
        wlist = [self.in_w] if self.in_w is not None else []
        ready_r, ready_w, _ = select.select(rlist, wlist, [], wait)
        return ready_r, ready_w

    def _poll_exit(self) -> None:
        done, st = os.waitpid(self.pid, os.WNOHANG)
        if done:
            self.status = st
            self.drain_until = time.monotonic() + 0.05

    def _feed(self) -> None:
        assert self.in_w is not None
        try:
            n = os.write(self.in_w, self.pending[:65536])
            self.pending = self.pending[n:]
        except OSError:  # the command closed its stdin
            self.pending = b""
        if not self.pending:
            self._close_stdin()

    def _on_readable(self, fd: int) -> None:
        if fd == self.pidfd:
            self.drain_until = time.monotonic() + 0.05  # the command exited
            return
        chunk = os.read(fd, 65536)
        if not chunk:
            self.open_fds.remove(fd)
            return
        buf = self.bufs[fd]
        room = self.cap - len(buf)
        buf += chunk[: max(room, 0)]
        if len(chunk) > room:
            self.truncated = True

    def finish(self, deadline: float, t0: float) -> Reply:
        """Kill what is left of the command's group, reap it and close its pipes: the reply."""
        if self.status is None and not (self.timed_out or self.truncated):
            # Both pipes closed but the command was not reaped yet: it is exiting (or closed
            # its output and runs on). Wait for it until the deadline; a SIGKILL in the middle
            # of its exit would turn exit code 0 into 137.
            self.status, self.timed_out = wait_until(self.pid, self.pidfd, deadline)
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        status = self.status if self.status is not None else os.waitpid(self.pid, 0)[1]
        for fd in (self.out_r, self.err_r, self.in_w, self.pidfd):
            if fd is not None:
                os.close(fd)
        code = os.waitstatus_to_exitcode(status)
        return {
            "exit_code": code if code >= 0 else 128 - code,
            "stdout": self.bufs[self.out_r].decode("utf-8", "replace"),
            "stderr": self.bufs[self.err_r].decode("utf-8", "replace"),
            "timed_out": self.timed_out,
            "truncated": self.truncated,
            "duration": time.monotonic() - t0,
        }


def python(req: Request) -> Reply:
    global repl
    cap = int(req.get("cap", 1 << 20))
    timeout = float(req.get("timeout", 30))
    if repl is not None and not repl.alive():
        repl.kill()
        repl = None
    if repl is None:
        repl = Repl()
    data = (dumps({"code": req["code"], "cap": cap}) + "\n").encode()
    while data:
        data = data[os.write(repl.stdin, data) :]
    deadline = time.monotonic() + timeout
    timed_out = False
    while b"\n" not in repl.buf:
        left = deadline - time.monotonic()
        ready = select.select([repl.stdout, WAKE_R], [], [], max(left, 0))[0] if left > 0 else []
        if not ready or (WAKE_R in ready and _take_interrupt()):
            timed_out = True
            break
        if repl.stdout not in ready:
            continue
        chunk = os.read(repl.stdout, 1 << 20)
        if not chunk:
            break
        repl.buf += chunk
    if b"\n" in repl.buf:
        line, repl.buf = repl.buf.split(b"\n", 1)
        return loads(line.decode())
    repl.kill()
    repl = None
    why = f"timed out after {timeout:g}s" if timed_out else "the interpreter died"
    return {"status": "error", "stdout": "", "stderr": f"{why}; REPL state was reset\n",
            "result": None, "timed_out": timed_out, "execution_count": 0, "truncated": False}  # fmt: skip


def put(req: Request) -> Reply:
    import io
    import tarfile

    root = _path(req["path"])
    os.makedirs(root, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(binascii.a2b_base64(req["tar"]))) as tf:
        for m in tf.getmembers():  # plain files and dirs inside root only (3.11.2: no filter=)
            name = os.path.normpath(m.name)
            if name.startswith(("/", "..")) or not (m.isfile() or m.isdir()):
                raise ValueError(f"refusing tar member {m.name!r}")
            m.mode = m.mode & 0o777
        tf.extractall(root)
    return {}


def get(req: Request) -> Reply:
    import io
    import tarfile

    root = _path(req["path"])
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        tf.add(root, arcname=".")
    return {"tar": b64(buf.getvalue())}


def b64(raw: bytes) -> str:
    return binascii.b2a_base64(raw, newline=False).decode()


def handle(req: Request) -> Reply:
    op = req.get("op")
    if op == "exec":
        return run(req)
    if op == "py":
        return python(req)
    if op == "write":
        path = _path(req["path"])
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "wb") as f:
            f.write(binascii.a2b_base64(req["data"]))
        os.chmod(path, int(req.get("mode", 0o644)))
        return {}
    if op == "read":
        with open(_path(req["path"]), "rb") as f:
            return {"data": b64(f.read())}
    if op == "put":
        return put(req)
    if op == "get":
        return get(req)
    if op == "ping":
        return {"pid": os.getpid()}
    return {"error": f"unknown op {op!r}"}


def reply(obj: Reply) -> None:
    data = (dumps(obj) + "\n").encode()
    while data:  # loop: pipe writes can come back short
        data = data[os.write(1, data) :]


def main(hello: "Reply | None" = None) -> None:
    """Serve requests from stdin until it closes. `hello`: extra fields for the ready line."""
    global interrupted, WAKE_R, WAKE_W, WORKDIR, SWEEP, REPL_PYTHON
    WORKDIR = os.environ.pop("VF_WORKDIR", "/workspace")
    SWEEP = os.environ.pop("VF_SWEEP", "") == "1"
    REPL_PYTHON = os.environ.pop("VF_REPL_PYTHON", "")
    os.environ.pop("PWD", None)  # bwrap's --chdir sets it; a command's cwd is its own
    WAKE_R, WAKE_W = os.pipe()
    os.set_blocking(WAKE_R, False)
    os.set_blocking(WAKE_W, False)
    signal.set_wakeup_fd(WAKE_W)
    signal.signal(signal.SIGUSR1, _on_interrupt)
    os.chdir(WORKDIR)
    reply({"ready": True, "pid": os.getpid(), **(hello or {})})
    for line in os.fdopen(0, "rb", closefd=False):
        req = None
        _take_interrupt()  # a late signal for the previous request must not hit this one
        interrupted = False
        try:
            req = loads(line.decode())
            res = handle(req)
        except Exception as e:  # report, keep serving
            res = {"error": f"{type(e).__name__}: {e}"}
        try:
            sweep()
        except Exception:
            pass
        res["id"] = req.get("id") if isinstance(req, dict) else None
        reply(res)


if __name__ == "__main__":
    main()
