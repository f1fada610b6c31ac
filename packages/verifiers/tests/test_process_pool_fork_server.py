"""`ProcessPool` on its own fork server (``start_method="minimal-forkserver"``,
`verifiers.utils.fork_server`), the start method of `MathRubric`'s grading pool (issue 30
item 2: workers import the preload, not the parent's main script).

The same guarantees as on multiprocessing's forkserver (tests/test_math_rubric.py): a
timeout kills only its worker, which is replaced by a fork; a crash is a clear error with
how the worker died; closing leaves no process behind, the server included; and a parent
that dies without closing leaves none either.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import math
import os
import subprocess
import sys
import time

import pytest

from verifiers.testing.processes import wait_gone
from verifiers.utils.process_pool import (
    MINIMAL_FORKSERVER,
    PoolClosedError,
    PoolError,
    ProcessPool,
    WorkerCrashedError,
    WorkerStartError,
    WorkerTimeoutError,
)


@pytest.fixture(scope="module")
def pool():
    p = ProcessPool(size=2, start_method=MINIMAL_FORKSERVER, name="vf-test-minimal")
    yield p
    p.close()


async def test_calls_timeouts_and_replacement(pool):
    assert pool.start_method == MINIMAL_FORKSERVER
    await pool.start()
    results = await asyncio.gather(
        pool.run(time.sleep, 30, timeout=0.3),
        *(pool.run(math.factorial, n, timeout=5) for n in range(8)),
        return_exceptions=True,
    )
    assert isinstance(results[0], WorkerTimeoutError)
    assert results[1:] == [math.factorial(n) for n in range(8)]
    assert await pool.run(pow, 2, 10, timeout=5) == 1024  # replaced by a fork


@pytest.mark.parametrize(
    ("fn", "arg", "how"),
    [(os._exit, 3, "exit code 3"), (ctypes.string_at, 0, "killed by SIGSEGV")],
)
async def test_a_crash_says_how_the_worker_died(pool, fn, arg, how):
    """The exit code comes from the server, which reaps its children."""
    with pytest.raises(WorkerCrashedError, match=how):
        await pool.run(fn, arg, timeout=10)
    assert await pool.run(pow, 3, 2, timeout=10) == 9


def test_workers_do_not_import_the_parents_main_script(tmp_path):
    """A script's pool: its workers run neither the script (multiprocessing would run it
    again as their ``__main__``) nor what the script imported (here `verifiers.cli.eval`,
    as the `vf-eval` command's script does)."""
    script = tmp_path / "main_script.py"
    script.write_text(
        "import asyncio, json, sys\n"
        "import verifiers.cli.eval\n"
        "from verifiers.utils.process_pool import MINIMAL_FORKSERVER, ProcessPool\n"
        "ASK = \"[sorted(__import__('sys').modules), getattr(__import__('__main__'), '__file__', None)]\"\n"
        "async def main():\n"
        "    pool = ProcessPool(1, start_method=MINIMAL_FORKSERVER)\n"
        "    modules, main_file = await pool.run(eval, ASK, timeout=60)\n"
        "    pool.close()\n"
        "    print(json.dumps({'modules': modules, 'main_file': main_file}))\n"
        "if __name__ == '__main__':\n"
        "    asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["main_file"] is None
    assert "verifiers.cli.eval" not in got["modules"] and "openai" not in got["modules"]
    assert "verifiers.utils.process_pool" in got["modules"]


async def test_a_preload_that_fails_is_a_start_error_with_its_traceback():
    p = ProcessPool(1, preload=("no_such_module_for_this_test",), start_method=MINIMAL_FORKSERVER)
    try:
        with pytest.raises(WorkerStartError, match="no_such_module_for_this_test"):
            await p.run(abs, -1, timeout=30)
    finally:
        p.close()


async def test_close_stops_the_workers_and_the_server():
    p = ProcessPool(2, start_method=MINIMAL_FORKSERVER)
    busy = asyncio.ensure_future(p.run(time.sleep, 30))
    await p.start(1)
    await asyncio.sleep(0.2)
    pids = [*p.pids, p._launcher.server.pid]
    assert len(pids) == 3
    p.close()
    with pytest.raises(PoolClosedError):
        await busy
    assert wait_gone(pids, limit=10.0)


def test_a_parent_that_dies_without_closing_leaves_no_process():
    """The server exits when its socket closes; the workers when their pipes do."""
    code = (
        "import asyncio, os, time\n"
        "from verifiers.utils.process_pool import MINIMAL_FORKSERVER, ProcessPool\n"
        "pool = ProcessPool(2, start_method=MINIMAL_FORKSERVER)\n"
        "asyncio.run(pool.start())\n"
        "print(*pool.pids, pool._launcher.server.pid, flush=True)\n"
        "os._exit(0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 3
    assert wait_gone(pids, limit=10.0)


async def test_a_function_the_worker_cannot_import_is_an_error_not_a_crash(tmp_path, pool):
    """A worker imports a call's function by module path; one it cannot find (here a module
    the server's ``sys.path`` lacks) fails that call with a clear error, and the worker
    serves the next."""
    (tmp_path / "only_in_the_parent.py").write_text("def double(x):\n    return 2 * x\n")
    await pool.start()
    sys.path.insert(0, str(tmp_path))
    try:
        import only_in_the_parent

        with pytest.raises(PoolError, match="could not be unpickled.*only_in_the_parent"):
            await pool.run(only_in_the_parent.double, 2, timeout=30)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("only_in_the_parent", None)
    assert await pool.run(abs, -5, timeout=30) == 5
