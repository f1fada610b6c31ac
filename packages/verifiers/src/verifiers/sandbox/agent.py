"""The in-sandbox agent (stdlib only; runs under the sandbox's own Python).

Reads one JSON request per line on stdin and answers one JSON line on stdout. Ops:
  exec   {cmd, stdin, cwd, env, timeout, cap} -> {exit_code, stdout, stderr, timed_out,
         truncated, duration}
  write  {path, data(b64), mode}  /  read {path} -> {data}
  put    {path, tar(b64)}         /  get  {path} -> {tar}
  py     {code, timeout, cap} -> {status, stdout, stderr, result, timed_out}  (persistent REPL)
  ping
Every command runs in its own session; on timeout or when output passes the cap the whole
group is killed, and after every request everything but the agent, the namespace init and the
REPL is killed, so background jobs never outlive the command that started them.
"""

import base64
import io
import json
import os
import select
import signal
import subprocess
import sys
import tarfile
import threading
import time

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

WORKDIR = os.environ.pop("VF_WORKDIR", "/workspace")
SWEEP = os.environ.pop("VF_SWEEP", "") == "1"
repl = None  # the persistent REPL process


def _child_setup():
    # Make the command, not the agent, the OOM killer's choice (raising is unprivileged).
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass


def _path(p):
    return p if os.path.isabs(p) else os.path.join(WORKDIR, p)


def sweep():
    """Kill everything in the pid namespace except pid 1 (init), the agent and the REPL.
    Only inside a private pid namespace (VF_SWEEP=1): elsewhere /proc is the host's."""
    if not SWEEP:
        return
    keep = {1, os.getpid()}
    if repl is not None and repl.poll() is None:
        keep.add(repl.pid)
    for _ in range(3):
        victims = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in keep]
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        # reap our own children so they do not linger as zombies
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass


def run(req):
    cmd = req["cmd"]
    argv = ["/bin/bash", "-c", cmd] if isinstance(cmd, str) else list(cmd)
    cap = int(req.get("cap", 1 << 20))
    timeout = float(req.get("timeout", 30))
    env = dict(os.environ)
    env.update(req.get("env") or {})
    stdin = req.get("stdin")
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=_path(req.get("cwd") or WORKDIR),
            env=env,
            start_new_session=True,
            preexec_fn=_child_setup,
        )
    except OSError as e:
        return {
            "exit_code": 127,
            "stdout": "",
            "stderr": f"{e}\n",
            "timed_out": False,
            "truncated": False,
            "duration": time.monotonic() - t0,
        }
    if stdin is not None:
        data = base64.b64decode(stdin)

        def feed():
            try:
                p.stdin.write(data)
                p.stdin.close()
            except OSError:
                pass

        threading.Thread(target=feed, daemon=True).start()
    bufs = {p.stdout.fileno(): bytearray(), p.stderr.fileno(): bytearray()}
    open_fds = set(bufs)
    pidfd = os.pidfd_open(p.pid)
    deadline = t0 + timeout
    drain_until = None
    timed_out = truncated = False
    while open_fds:
        now = time.monotonic()
        limit = deadline if drain_until is None else min(deadline, drain_until)
        if now >= limit:
            timed_out = drain_until is None or now >= deadline
            break
        fds = list(open_fds) + ([pidfd] if drain_until is None else [])
        ready, _, _ = select.select(fds, [], [], limit - now)
        for fd in ready:
            if fd == pidfd:
                # the command exited; give stragglers holding its pipes a moment, no more
                drain_until = time.monotonic() + 0.05
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.discard(fd)
                continue
            buf = bufs[fd]
            room = cap - len(buf)
            buf += chunk[: max(room, 0)]
            if len(chunk) > room:
                truncated = True
        if truncated:
            break
    if drain_until is not None and p.poll() is not None and open_fds:
        timed_out = False  # background job kept a pipe open; the command itself finished
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except OSError:
        pass
    code = p.wait()
    os.close(pidfd)
    out, err = bufs[p.stdout.fileno()], bufs[p.stderr.fileno()]
    p.stdout.close()
    p.stderr.close()
    if timed_out:
        code = 124 if code >= 0 else code
    return {
        "exit_code": code if code >= 0 else 128 - code,
        "stdout": out.decode("utf-8", "replace"),
        "stderr": err.decode("utf-8", "replace"),
        "timed_out": timed_out,
        "truncated": truncated,
        "duration": time.monotonic() - t0,
    }


def python(req):
    global repl
    cap = int(req.get("cap", 1 << 20))
    timeout = float(req.get("timeout", 30))
    if repl is None or repl.poll() is not None:
        repl = subprocess.Popen(
            [sys.executable, "-u", "-c", REPL_SRC],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=WORKDIR,
            start_new_session=True,
            preexec_fn=_child_setup,
        )
    repl.stdin.write((json.dumps({"code": req["code"], "cap": cap}) + "\n").encode())
    repl.stdin.flush()
    fd = repl.stdout.fileno()
    ready, _, _ = select.select([fd], [], [], timeout)
    line = repl.stdout.readline() if ready else b""
    if line:
        return json.loads(line)
    timed_out = not ready
    try:
        os.killpg(repl.pid, signal.SIGKILL)
    except OSError:
        pass
    repl.wait()
    repl = None
    why = f"timed out after {timeout:g}s" if timed_out else "the interpreter died"
    return {
        "status": "error",
        "stdout": "",
        "stderr": f"{why}; REPL state was reset\n",
        "result": None,
        "timed_out": timed_out,
        "execution_count": 0,
        "truncated": False,
    }


def put(req):
    root = _path(req["path"])
    os.makedirs(root, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(req["tar"]))) as tf:
        for m in tf.getmembers():  # plain files and dirs inside root only (3.11.2: no filter=)
            name = os.path.normpath(m.name)
            if name.startswith(("/", "..")) or not (m.isfile() or m.isdir()):
                raise ValueError(f"refusing tar member {m.name!r}")
            m.mode = m.mode & 0o777
        tf.extractall(root)
    return {}


def get(req):
    root = _path(req["path"])
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        tf.add(root, arcname=".")
    return {"tar": base64.b64encode(buf.getvalue()).decode()}


def handle(req):
    op = req.get("op")
    if op == "exec":
        return run(req)
    if op == "py":
        return python(req)
    if op == "write":
        path = _path(req["path"])
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(req["data"]))
        os.chmod(path, int(req.get("mode", 0o644)))
        return {}
    if op == "read":
        with open(_path(req["path"]), "rb") as f:
            return {"data": base64.b64encode(f.read()).decode()}
    if op == "put":
        return put(req)
    if op == "get":
        return get(req)
    if op == "ping":
        return {"pid": os.getpid()}
    return {"error": f"unknown op {op!r}"}


def reply(obj):
    data = (json.dumps(obj) + "\n").encode()
    while data:  # loop: pipe writes can come back short
        n = os.write(1, data)
        data = data[n:]


def main():
    os.chdir(WORKDIR)
    reply({"ready": True, "pid": os.getpid()})
    for line in sys.stdin.buffer:
        try:
            req = json.loads(line)
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
