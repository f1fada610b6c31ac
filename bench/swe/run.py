"""SWE episode overhead: the sandbox's share of one mini-swe-agent-plus episode.

One episode = the real `mini-swe-agent-plus` environment (local bwrap provider, warm pool,
pytest runtime) driven by a scripted agent through the scripted OpenAI-compatible server: a
30-turn trajectory on the bundled `tally` task (explore, reproduce, edit, run the tests, submit)
followed by scoring (the hidden tests). Overhead is the episode's wall time minus the time spent
waiting for the model (every model call is timed), split into tool turns, scoring and the rest
(setup, sandbox release, bookkeeping).

Baseline, same script: the same 29 commands and 2 edits run as plain local subprocesses
(`bash -c` in a temporary copy of the repository, with the sandbox's own cached runtime venv
first on PATH, so the same Python and pytest; no isolation, no agent protocol), and the same
grading (grading tree written to a fresh folder, same pytest command). The difference is what
isolation and the environment machinery cost.

CPU: ours = this process (environment, client and the scripted model server together) plus the
sandbox's cgroup (every command, the agent, the grading run); baseline = this process plus its
child processes.

Run as root from the repository root:
    uv run --no-sync python bench/swe/run.py            # 7 episodes per side, interleaved
    uv run --no-sync python bench/swe/run.py --quick    # 2 episodes per side
Writes bench/swe/results.json (results-quick.json for --quick) and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mini_swe_agent_plus import REPO_DIR, SENTINEL, grading_tree, load_environment
from mini_swe_agent_plus.env import MiniSweAgentPlusEnv

import verifiers as vf
from verifiers.sandbox.bwrap import BwrapProvider
from verifiers.sandbox.runtime import ensure_runtime
from verifiers.testing import Reply, ScriptedServer

TASK = "tally__median-unsorted"
HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE.parent))  # results_file

from results_file import add_options, results_path  # noqa: E402

# The scripted agent's 29 actions (explore, reproduce, edit, test; bench/swe/actions.json: a
# data file, [tool, arguments] each) and the submission: 30 model turns
ACTIONS: list[tuple[str, dict]] = [
    (kind, args) for kind, args in json.loads((HERE / "actions.json").read_text())
] + [("bash", {"command": f"echo {SENTINEL}"})]
assert len(ACTIONS) == 30


def replies() -> list[Reply]:
    out = []
    for kind, args in ACTIONS:
        name = "execute_bash" if kind == "bash" else "edit_via_str_replace"
        out.append(Reply(tool_calls=[{"name": name, "arguments": args}]))
    return out


REPLIES = replies()


def agent(body: dict) -> Reply:
    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return REPLIES[min(turn, len(REPLIES) - 1)]


def cpu_of(who: int) -> float:
    """User + system CPU seconds of `who`: resource.RUSAGE_SELF or RUSAGE_CHILDREN."""
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def cpu_self() -> float:
    return cpu_of(resource.RUSAGE_SELF)


def cpu_with_children() -> float:
    return cpu_of(resource.RUSAGE_SELF) + cpu_of(resource.RUSAGE_CHILDREN)


def instrument(env: MiniSweAgentPlusEnv, sandbox_cpu: list[float]) -> None:
    """Time every model call and every environment response, per rollout (in state)."""
    model_call, env_response = env.get_model_response, env.env_response

    async def timed_model(state, prompt, *a, **k):
        t0 = time.perf_counter()
        try:
            return await model_call(state, prompt, *a, **k)
        finally:
            state.setdefault("bench_model", []).append(time.perf_counter() - t0)

    async def timed_env(messages, state, **k):
        t0 = time.perf_counter()
        try:
            return await env_response(messages, state, **k)
        finally:
            state.setdefault("bench_env", []).append(time.perf_counter() - t0)

    leases = env.sandbox_leases  # where a rollout's sandbox is released (SandboxLeases)
    release = leases._release

    async def release_with_cpu(lease):
        if lease.box is not None and hasattr(lease.box, "cpu_usage_ns"):
            sandbox_cpu.append((lease.box.cpu_usage_ns() or 0) / 1e9)
        await release(lease)

    env.get_model_response = timed_model  # type: ignore[method-assign]
    env.env_response = timed_env  # type: ignore[method-assign]
    leases._release = release_with_cpu  # type: ignore[method-assign]


async def ours_episode(srv: ScriptedServer) -> dict:
    env = load_environment(instance_ids=[TASK], max_turns=30, command_timeout=60, pool_size=1)
    sandbox_cpu: list[float] = []
    instrument(env, sandbox_cpu)
    client = vf.OpenAIClient(srv.base_url, api_key="x")
    try:
        c0 = cpu_self()
        t0 = time.perf_counter()
        out = await env.evaluate(
            client, "m", num_examples=1, state_columns=["bench_model", "bench_env", "grading"]
        )
        outer = time.perf_counter() - t0
        host_cpu = cpu_self() - c0
    finally:
        await client.close()
        await env.teardown()
    rec = out["outputs"][0]
    assert rec["error"] is None, rec["error"]
    assert rec["reward"] == 1.0 and rec["metrics"]["num_turns"] == 30, (
        rec["reward"],
        rec["metrics"],
    )
    total = rec["timing"]["total"]
    model = sum(rec["bench_model"])
    tools = rec["bench_env"]
    scoring = rec["timing"]["scoring"]
    return {
        "episode_wall": total,
        "evaluate_wall": outer,
        "model_wait": model,
        "overhead": total - model,
        "tool_turns": tools,
        "tools_total": sum(tools),
        "scoring": scoring,
        "grading_pytest": rec["grading"]["duration"],
        "other": total - model - sum(tools) - scoring,
        "sandbox_ready_wait": rec["metrics"]["sandbox_ready_wait_time"],
        "cpu_host": host_cpu,
        "cpu_sandbox": sum(sandbox_cpu),
        "cpu": host_cpu + sum(sandbox_cpu),
    }


def baseline_episode(task, runtime: Path) -> dict:
    """The same work as plain subprocesses in a temporary folder (no sandbox), with the
    sandbox's runtime venv first on PATH and an environment as small as the sandbox's."""
    root = Path(tempfile.mkdtemp(prefix="swe-baseline-"))
    env = {
        "PATH": f"{runtime / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(root),
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp",
        "PAGER": "cat",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    python = str(runtime / "bin" / "python")
    try:
        c0 = cpu_with_children()
        t_start = time.perf_counter()
        repo = root / "repo"
        for path, content in task.repo_files.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(content)
        setup = time.perf_counter() - t_start
        turns = []
        for kind, args in ACTIONS:
            t0 = time.perf_counter()
            if kind == "bash":
                r = subprocess.run(
                    ["bash", "-c", "exec 2>&1\n" + args["command"]],
                    cwd=repo, env=env, capture_output=True, text=True, timeout=60,
                )  # fmt: skip
                assert r.returncode == 0, (args, r.stdout, r.stderr)
            else:
                f = repo / args["path"]
                text = f.read_text()
                assert text.count(args["old_str"]) == 1
                f.write_text(text.replace(args["old_str"], args["new_str"], 1))
            turns.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        agent_files = {
            p.relative_to(repo).as_posix(): p.read_bytes() for p in repo.rglob("*") if p.is_file()
        }
        tree = grading_tree(task.repo_files, agent_files, task.hidden_tests)
        grade = root / "grade"
        for path, content in tree.files.items():
            (grade / path).parent.mkdir(parents=True, exist_ok=True)
            (grade / path).write_bytes(content)
        runner = "import sys, pytest; sys.path.insert(0, sys.argv[1]); sys.exit(pytest.main(sys.argv[2:]))"
        r = subprocess.run(
            [python, "-I", "-B", "-c", runner, str(grade), "-rA", "-p", "no:cacheprovider",
             "--color=no", "--rootdir", str(grade), *task.test_files],
            cwd=grade, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, r.stdout[-2000:]
        scoring = time.perf_counter() - t0
        total = time.perf_counter() - t_start
        cpu = cpu_with_children() - c0
        return {
            "cpu": cpu,
            "episode_wall": total,
            "overhead": total,
            "tool_turns": turns,
            "tools_total": sum(turns),
            "scoring": scoring,
            "other": setup,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def loadavg() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def ms(x: float) -> float:
    return round(1000 * x, 1)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    add_options(ap, quick="2 episodes per side")
    args = ap.parse_args()
    reps = 2 if args.quick else args.reps
    reason = BwrapProvider.unavailable_reason()
    if reason is not None:
        sys.exit(f"bwrap provider unavailable: {reason}")
    probe = load_environment(instance_ids=[TASK])
    task = probe.tasks[TASK]
    runtime = ensure_runtime(probe.spec.runtime)
    assert runtime is not None
    ours: list[dict] = []
    base: list[dict] = []
    load_before = loadavg()
    async with ScriptedServer(agent) as srv:
        await ours_episode(srv)  # warm-up: runtime venv, imports
        baseline_episode(task, runtime)
        for _ in range(reps):
            ours.append(await ours_episode(srv))
            base.append(baseline_episode(task, runtime))  # the loop is idle meanwhile
    load_after = loadavg()

    def summary(runs: list[dict]) -> dict:
        keys = ["episode_wall", "overhead", "tools_total", "scoring", "other", "cpu"]
        out = {k: ms(med([r[k] for r in runs])) for k in keys}
        per_turn = [t for r in runs for t in r["tool_turns"]]
        out["per_turn_mean"] = ms(statistics.fmean(per_turn))
        out["per_turn_p50"] = ms(med(per_turn))
        out["per_turn_p90"] = ms(sorted(per_turn)[int(0.9 * (len(per_turn) - 1))])
        out["overhead_per_turn"] = round(out["overhead"] / len(ACTIONS), 1)
        for k in (
            "model_wait",
            "grading_pytest",
            "sandbox_ready_wait",
            "evaluate_wall",
            "cpu_host",
            "cpu_sandbox",
        ):
            if k in runs[0]:
                out[k] = ms(med([r[k] for r in runs]))
        return out

    so, sb = summary(ours), summary(base)
    # paired per turn: the same action in the same repetition, by kind of action
    kinds = {}
    for i, (kind, action) in enumerate(ACTIONS):
        cmd = action.get("command", "")
        k = "edit" if kind == "edit" else "python/pytest" if cmd.startswith("python") else "shell"
        kinds.setdefault(k, []).append(i)
    by_kind = {}
    for k, idx in kinds.items():
        a = [r["tool_turns"][i] for r in ours for i in idx]
        b = [r["tool_turns"][i] for r in base for i in idx]
        d = [
            ra["tool_turns"][i] - rb["tool_turns"][i]
            for ra, rb in zip(ours, base, strict=True)
            for i in idx
        ]
        by_kind[k] = {
            "turns": len(idx),
            "ours_p50": ms(med(a)),
            "baseline_p50": ms(med(b)),
            "paired_diff_p50": ms(med(d)),
        }
    result = {
        "task": TASK,
        "turns": len(ACTIONS),
        "reps": reps,
        "repo_dir": REPO_DIR,
        "load_before": load_before,
        "load_after": load_after,
        "ours": so,
        "baseline_subprocess": sb,
        "extra_per_turn_ms": round(so["per_turn_mean"] - sb["per_turn_mean"], 1),
        "per_turn_by_kind": by_kind,
        "extra_per_episode_ms": round(so["overhead"] - sb["overhead"], 1),
        "raw": {"ours": ours, "baseline_subprocess": base},
    }
    out = results_path(args, HERE)
    out.write_text(json.dumps(result, indent=1))
    rows = [
        ("episode wall (ms)", so["episode_wall"], sb["episode_wall"]),
        ("  waiting for the model", so["model_wait"], 0.0),
        ("overhead = wall - model (ms)", so["overhead"], sb["overhead"]),
        ("  30 tool turns", so["tools_total"], sb["tools_total"]),
        ("  scoring (hidden tests)", so["scoring"], sb["scoring"]),
        ("  other (setup, release, bookkeeping)", so["other"], sb["other"]),
        ("per turn: mean", so["per_turn_mean"], sb["per_turn_mean"]),
        ("per turn: p50", so["per_turn_p50"], sb["per_turn_p50"]),
        ("per turn: p90", so["per_turn_p90"], sb["per_turn_p90"]),
        ("overhead per turn (overhead / 30)", so["overhead_per_turn"], sb["overhead_per_turn"]),
        ("CPU per episode (ms)", so["cpu"], sb["cpu"]),
        ("  this process", so["cpu_host"], 0.0),
        ("  sandbox cgroup", so["cpu_sandbox"], 0.0),
    ]
    print(
        f"SWE episode, {len(ACTIONS)} turns, medians of {reps}; load {load_before} -> {load_after}"
    )
    print("| ms | sandbox env (bwrap) | plain subprocesses | difference |")
    print("|---|---|---|---|")
    for name, a, b in rows:
        print(f"| {name} | {a:.1f} | {b:.1f} | {a - b:+.1f} |")
    print("| per turn by kind (ms, p50) | turns | sandbox env | subprocess | paired difference |")
    print("|---|---|---|---|---|")
    for k, v in by_kind.items():
        print(
            f"| {k} | {v['turns']} | {v['ours_p50']:.1f} | {v['baseline_p50']:.1f} "
            f"| {v['paired_diff_p50']:+.1f} |"
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    asyncio.run(main())
