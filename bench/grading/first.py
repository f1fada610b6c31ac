"""Time to a run's first score against the steady per-answer cost (issue 30 item 2).

Each run is a fresh interpreter (nothing warm: no forkserver, no worker, no math-verify
import) that loads the environment, waits ``--delay`` seconds (0: the first rollout is
scored right after loading, the worst case; a model call in a real run takes longer), then
times its first ``score_rollout`` and then ``--steady`` more, one at a time, over `run.py`'s
answer mix (median: the steady per-answer cost). Several runs, alternating between the trees
when ``--before`` names an older one (an export of the SDK and the environments, put first
on PYTHONPATH, as `cpu.py` describes), so that both see the same machine load.

    uv run --no-sync python bench/grading/first.py [--env i3-math] [--runs 5] [--delay 0]
    uv run --no-sync python bench/grading/first.py --before /tmp/before   # side by side

``--after`` names an export to measure instead of the working tree (one that others are
editing, say). ``--as-vf-eval`` runs each child as a script that first imports what the
`vf-eval` command imports (`verifiers.cli.eval`): multiprocessing's forkserver imports a
process's main script too, so this is what a `vf-eval` run's grading start pays.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent

VF_EVAL_MAIN = "import verifiers.cli.eval  # what the vf-eval command's script imports\n"

CHILD = r"""
import asyncio, importlib, json, sys, time

# CPU seconds used so far by the process the grading workers fork from (our fork server,
# or multiprocessing's): its start is what a first score waits for, and on a loaded machine
# its CPU time says more than the wall time.
def grading_server_cpu():
    import os
    from multiprocessing import forkserver
    from verifiers.rubrics.math_rubric import shared_pools
    (pool, _holders), = shared_pools._pools.values()
    launcher = getattr(pool, "_launcher", None)  # trees before it: multiprocessing's
    server = getattr(launcher, "server", None)
    pid = server.pid if server is not None else forkserver._forkserver._forkserver_pid
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

async def main(env_id, workers, delay, steady):
    from run import MIXES, state
    module = importlib.import_module(env_id.replace("-", "_"))
    env = module.load_environment(source="sample", math_verify_workers=workers)
    if delay:
        await asyncio.sleep(delay)
    mix = MIXES[env_id]
    first = state(env_id, *mix[0])
    t = time.perf_counter()
    await env.rubric.score_rollout(first)
    first_s = time.perf_counter() - t
    server_cpu = grading_server_cpu()
    times, rewards = [], []
    for i in range(steady):
        s = state(env_id, *mix[i % len(mix)])
        t = time.perf_counter()
        await env.rubric.score_rollout(s)
        times.append(time.perf_counter() - t)
        rewards.append(s["reward"])
    await env.rubric.teardown()
    print(json.dumps({"first_s": first_s, "first_reward": first["reward"],
                      "server_cpu_s": server_cpu,
                      "steady_s": sorted(times)[len(times) // 2],
                      "steady_mean_reward": sum(rewards) / len(rewards)}))

if __name__ == "__main__":  # a forkserver imports this script too (as __mp_main__)
    sys.path.insert(0, sys.argv[1])
    asyncio.run(main(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])))
"""


def one_run(tree: str | None, a: argparse.Namespace, script: Path | None) -> dict:
    env = dict(os.environ)
    if tree:
        t = Path(tree)
        paths = [
            t / "packages/verifiers/src",
            t / "environments/i3-math",
            t / "environments/i3-science",
        ]
        env["PYTHONPATH"] = os.pathsep.join(map(str, paths))
    out = subprocess.run(
        [
            sys.executable,
            *(["-c", CHILD] if script is None else [str(script)]),
            str(HERE),
            a.env,
            str(a.workers),
            str(a.delay),
            str(a.steady),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if out.returncode != 0:
        raise SystemExit(f"run failed ({tree or 'this tree'}):\n{out.stderr[-3000:]}")
    got = json.loads(out.stdout.strip().splitlines()[-1])
    if got["first_reward"] != 1.0 or abs(got["steady_mean_reward"] - 0.75) > 1e-9:
        raise SystemExit(f"grading changed ({tree or 'this tree'}): {got}")
    return got


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="i3-math", choices=["i3-math", "i3-science"])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--delay", type=float, default=0.0, help="seconds between load and first score")
    p.add_argument("--steady", type=int, default=48, help="answers timed after the first")
    p.add_argument("--before", help="an export of an older tree, run alternately with this one")
    p.add_argument("--after", help="an export to measure instead of the working tree")
    p.add_argument("--as-vf-eval", action="store_true", help="run as a script importing vf-eval's")
    a = p.parse_args()
    trees = {"this tree": a.after} if not a.before else {"before": a.before, "this tree": a.after}
    script = None
    if a.as_vf_eval:
        script = Path(tempfile.mkdtemp(prefix="first-score-")) / "vf_eval_like.py"
        script.write_text(VF_EVAL_MAIN + CHILD)
    results: dict[str, list[dict]] = {name: [] for name in trees}
    load = [os.getloadavg()[0]]
    for _ in range(a.runs):
        for name, tree in trees.items():
            results[name].append(one_run(tree, a, script))
    load.append(os.getloadavg()[0])
    print(
        f"{a.env}, {a.workers} workers, first score {a.delay:g} s after loading"
        f"{' (as vf-eval)' if a.as_vf_eval else ''}; "
        f"{a.runs} fresh processes per tree (load average {load[0]:.1f} -> {load[1]:.1f})"
    )
    for name, runs in results.items():
        first = [r["first_s"] for r in runs]
        steady = [r["steady_s"] for r in runs]
        cpu = [r["server_cpu_s"] for r in runs]
        print(
            f"  {name:<10} first score: median {statistics.median(first):.3f} s "
            f"(min {min(first):.3f}, max {max(first):.3f}); steady per answer: median "
            f"{statistics.median(steady) * 1000:.2f} ms; first - steady: "
            f"{statistics.median(first) - statistics.median(steady):.3f} s; grading server "
            f"CPU at the first score: median {statistics.median(cpu):.2f} s "
            f"(min {min(cpu):.2f}, max {max(cpu):.2f})"
        )


if __name__ == "__main__":
    main()
