"""Runs documentation pages' Python blocks in forks of one warm interpreter.

Started once per test session with the reader's virtualenv's Python; it imports the slow
modules (the SDK, datasets, openai) once, then for each page it is sent (one JSON line on
stdin: cwd, environment, blocks, output files) it forks a child that runs the page's blocks
in order in one namespace, as a reader's fresh interpreter would, and answers the child's pid,
then its exit status. Each child is its own process group, so a timeout kills all it started.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

sys.path[0] = ""  # as `python` started in the page's folder: its cwd, not this file's folder

import datasets  # noqa: E402, F401 - the slow imports, done once for every page
import openai  # noqa: E402, F401

import verifiers  # noqa: E402, F401


def run_page(req: dict) -> int:
    os.setsid()
    for fd, name in ((1, "stdout"), (2, "stderr")):
        os.dup2(os.open(req[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    namespace = {
        "__name__": "__docs__"
    }  # an included script's `if __name__ == "__main__"` stays off
    for where, path in req["blocks"]:
        try:
            with open(path) as f:
                exec(compile(f.read(), where, "exec"), namespace)
        except BaseException:
            traceback.print_exc()
            print(f"docs: Python block at {where} failed", file=sys.stderr)
            return 1
    return 0


def main() -> None:
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = run_page(req)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"rc": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    main()
