"""Rollout throughput: our `verifiers` vs `verifiers==0.3.1`, side by side, one script.

    python bench/rollouts/run.py            # full: both variants, N=2000, c=256 x3 interleaved,
                                            #   plus c=1024 x1 for the single-turn variant
    python bench/rollouts/run.py --quick    # smoke test: N=300, 1 rep, c=256 (+ c=1024 single)
    python bench/rollouts/run.py --profile  # cProfile of OUR side once (N, c=256), no table
    python bench/rollouts/run.py --variants tool   # only the ToolEnv case

Variants (bench_env.load_environment(variant=...)): `single` (vf.SingleTurnEnv, 1 model turn)
and `tool` (vf.ToolEnv(tools=[add], max_turns=3): 2 model turns and 1 tool call per rollout).

Each measured run starts a fresh scripted server (`python -m verifiers.testing serve`, from
our workspace venv, 0 ms latency) and then one worker process (bench/rollouts/worker.py)
under the side's own interpreter: our workspace venv (`.venv/bin/python`) or the 0.3.1 venv
(`bench/.venvs/verifiers-0.3.1`, created with uv when missing). Both load the same
bench/rollouts/bench_env.py. Runs are interleaved (ours, 0.3.1, ours, 0.3.1, ...), one variant
after the other.

`PYTHONDONTWRITEBYTECODE` is removed from the workers' environment (these machines export
it), so both sides run with bytecode caching; the caches go to bench/.venvs/pycache
(`PYTHONPYCACHEPREFIX`), and one unmeasured warm-up run per side and variant fills them first.

Results: a table on stdout and bench/rollouts/results.json (results-quick.json with --quick).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.append(str(HERE.parent))  # results_file

from results_file import add_options, results_path  # noqa: E402

VENV_031 = ROOT / "bench" / ".venvs" / "verifiers-0.3.1"
PYCACHE = ROOT / "bench" / ".venvs" / "pycache"
OURS = "ours"
OLD = "0.3.1"
FLOOR = "floor"  # bare aiohttp POST + orjson decode (worker.py --floor), our venv, single only
BASE = "base"  # ours from another source tree (--base-src), for before/after in one run
VARIANTS = {"single": "single", "tool": "ToolEnv"}  # variant -> config label prefix


# -- set-up -------------------------------------------------------------------------------
def uv_cmd() -> list[str]:
    exe = shutil.which("uv")
    return [exe] if exe else [sys.executable, "-m", "uv"]


# What the 0.3.1 venv needs: the library, `datasets` (bench_env builds its dataset with it) and
# `openai-agents` (import `agents`), with which 0.3.1's ToolEnv builds tool schemas
# (`verifiers.legacy.utils.tool_utils.convert_func_to_tool_def` -> `agents.function_schema`).
# openai-agents is a declared dependency of verifiers 0.3.1 (`openai-agents>=0.8.2`); it is
# named here so that the ToolEnv case cannot silently lose it.
VENV_031_PACKAGES = ("verifiers==0.3.1", "datasets", "openai-agents")
VENV_031_CHECK = (
    "import importlib.metadata as m, agents, datasets; "
    "from agents import function_schema; print(m.version('verifiers'))"
)


def ensure_venv_031(python_version: str) -> Path:
    py = VENV_031 / "bin" / "python"
    if py.exists():
        check = subprocess.run(
            [str(py), "-c", VENV_031_CHECK], capture_output=True, text=True, cwd="/"
        )
        if check.returncode == 0 and check.stdout.strip() == "0.3.1":
            return py
    print(f"creating {VENV_031} (verifiers==0.3.1) ...", flush=True)
    uv = uv_cmd()
    if not py.exists():
        subprocess.run([*uv, "venv", "-q", "--python", python_version, str(VENV_031)], check=True)
    subprocess.run(
        [*uv, "pip", "install", "-q", "--python", str(py), *VENV_031_PACKAGES], check=True
    )
    return py


def our_python() -> Path:
    py = ROOT / ".venv" / "bin" / "python"
    if not py.exists():
        sys.exit(f"{py} not found: run `make sync` (uv sync --all-packages) first")
    return py


def worker_env(side: str = OURS, base_src: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # both sides get bytecode caching
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    env["PYTHONUNBUFFERED"] = "1"
    if side == BASE and base_src:
        env["PYTHONPATH"] = base_src  # ahead of the venv's editable install
    return env


# -- one measured run ---------------------------------------------------------------------
def proc_cpu_s(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def system_busy_s() -> float:
    """CPU seconds spent busy by the whole machine (all cores) since boot, from /proc/stat."""
    with open("/proc/stat") as f:
        vals = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq (steal and guest are not work done here)
    return (sum(vals[:7]) - vals[3] - vals[4]) / os.sysconf("SC_CLK_TCK")


def loadavg() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def start_server(py: Path, latency_ms: float, wrong_rate: float) -> tuple[subprocess.Popen, str]:
    cmd = [
        str(py), "-m", "verifiers.testing", "serve", "--host", "127.0.0.1", "--port", "0",
        "--latency-ms", str(latency_ms), "--wrong-rate", str(wrong_rate),
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=worker_env(),
        cwd=ROOT,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("READY "):
            return proc, line.split()[1]
    proc.kill()
    err = proc.stderr.read() if proc.stderr else ""
    raise RuntimeError(f"scripted server did not start: {err[-2000:]}")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_one(
    side: str,
    py: Path,
    server_py: Path,
    n: int,
    c: int,
    args: argparse.Namespace,
    profile: str | None = None,
    variant: str = "single",
) -> dict:
    server, base_url = start_server(server_py, args.latency_ms, args.wrong_rate)
    try:
        time.sleep(0.2)
        srv_cpu0 = proc_cpu_s(server.pid) or 0.0
        load0, busy0 = loadavg(), system_busy_s()
        cmd = [
            str(py), str(HERE / "worker.py"), "--base-url", base_url, "-n", str(n),
            "-c", str(c), "--timeout", str(args.timeout), "--label", side, "--variant", variant,
        ]  # fmt: skip
        if profile:
            cmd += ["--profile", profile]
        if side == FLOOR:
            cmd.append("--floor")
        t0 = time.perf_counter()
        try:
            cp = subprocess.run(
                cmd, capture_output=True, text=True, env=worker_env(side, args.base_src), cwd=ROOT,
                timeout=args.timeout + 180,
            )  # fmt: skip
            rc, out, err = cp.returncode, cp.stdout, cp.stderr
        except subprocess.TimeoutExpired as e:
            rc = "killed (driver timeout)"
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        process_wall = time.perf_counter() - t0
        busy = system_busy_s() - busy0
        srv_cpu = (proc_cpu_s(server.pid) or 0.0) - srv_cpu0
    finally:
        stop_server(server)
    result = None
    for line in out.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT ") :])
    if result is None:
        result = {"label": side, "n": n, "c": c, "stalled": True, "finished": 0, "ok": 0,
                  "failed": n, "errors": {f"worker rc={rc}": 1}, "variant": variant}  # fmt: skip
    # Noise indicator: CPU the rest of the machine used while this worker ran (whole-machine
    # busy time minus worker and server). This machine is shared; a large value marks a run
    # whose wall time was disturbed (its CPU figures are per-process and stay valid).
    other = busy - srv_cpu - (result.get("cpu_total_s") or 0.0)
    result.update(
        side=side,
        variant=variant,
        loadavg_1m_before=load0,
        other_cpu_s=max(0.0, other),
        returncode=rc,
        process_wall_s=process_wall,
        server_cpu_s=srv_cpu,
        stderr_tail=err[-1500:],
    )
    return result


def describe(r: dict) -> str:
    if r.get("wall_s") is None:
        return (
            f"{r.get('variant', 'single'):>6} {r['side']:>5} c={r['c']}: FAILED ({r.get('errors')})"
        )
    shape = (
        f"; shape ok {r['shape_ok']}/{r['finished']}"
        f" (turns {r['shape_hist'].get('num_turns')}, tool calls {r['shape_hist'].get('tool_calls')})"
        if "shape_ok" in r
        else ""
    )
    return (
        f"{r.get('variant', 'single'):>6} {r['side']:>5} c={r['c']:<5} n={r['n']}: "
        f"{r['finished']} done, {r['failed']} failed"
        f"{', STALLED' if r['stalled'] else ''}; {r['wall_s']:.2f}s, "
        f"{r['rollouts_per_s']:.0f} rollouts/s, {r['cpu_ms_per_rollout']:.2f} CPU-ms/rollout, "
        f"peak RSS {r['peak_rss_mb']:.0f} MB, reward {r['mean_reward']}; "
        f"GC {r.get('gc_s', 0):.2f}s {r.get('gc_collections')}{shape}"
        + (
            f"; other processes used {r['other_cpu_s']:.1f} CPU-s meanwhile"
            if "other_cpu_s" in r
            else ""
        )
    )


# -- summary ------------------------------------------------------------------------------
METRICS = (
    "wall_s", "rollouts_per_s", "cpu_ms_per_rollout", "cpu_total_s", "startup_wall_s",
    "process_wall_s", "peak_rss_mb", "rss_before_mb", "server_cpu_s", "other_cpu_s", "gc_s",
    "mean_reward",
)  # fmt: skip


def summarize(runs: list[dict]) -> dict:
    out: dict = {"runs": len(runs)}
    for m in METRICS:
        vals = [r[m] for r in runs if isinstance(r.get(m), (int, float))]
        if vals:
            out[m] = statistics.median(vals)
            out[m + "_min"] = min(vals)
            out[m + "_max"] = max(vals)
    out["cpu_total_ms_per_rollout"] = (
        1000 * out["cpu_total_s"] / runs[0]["n"] if "cpu_total_s" in out else None
    )
    out["rollouts_per_s_incl_startup"] = (
        runs[0]["n"] / out["process_wall_s"] if out.get("process_wall_s") else None
    )
    out["finished"] = sum(r.get("finished", 0) for r in runs)
    out["failed"] = sum(r.get("failed", 0) for r in runs)
    out["stalled"] = sum(1 for r in runs if r.get("stalled"))
    out["n_total"] = sum(r["n"] for r in runs)
    cols = [r["gc_collections"] for r in runs if r.get("gc_collections")]
    out["gc_collections"] = (
        [statistics.median(g) for g in zip(*cols, strict=True)] if cols else None
    )
    out["variant"] = runs[0].get("variant", "single")
    # Output shape checks (worker.py): outputs with the expected turns / tool calls, and the
    # histograms of each figure summed over the runs.
    out["shape_ok"] = sum(r.get("shape_ok", 0) for r in runs)
    out["shape_expected"] = runs[0].get("shape_expected")
    hist: dict[str, dict[str, int]] = {}
    for r in runs:
        for key, h in (r.get("shape_hist") or {}).items():
            for v, k in h.items():
                hist.setdefault(key, {})[v] = hist.setdefault(key, {}).get(v, 0) + k
    out["shape_hist"] = hist
    return out


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt(v: float | None, spec: str = ".2f") -> str:
    return "–" if v is None else format(v, spec)


def measured_sides(summary: dict) -> Iterator[tuple[str, str, dict]]:
    """(config, side, figures) for each side measured in each config, in the tables' order."""
    for cfg, sides in summary.items():
        for side in (OURS, BASE, OLD, FLOOR):
            if sides.get(side):
                yield cfg, side, sides[side]


def table(summary: dict) -> str:
    rows = [
        "| config | side | runs | done / failed / stalled | wall s | rollouts/s | rollouts/s incl."
        " start-up | CPU ms/rollout"
        " (evaluate) | CPU ms/rollout (whole process) | peak RSS MB | RSS before evaluate MB |"
        " GC s (in evaluate) | GC collections gen0/1/2 | server CPU s | other procs' CPU s |"
        " mean reward |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for cfg, side, s in measured_sides(summary):
        gcc = "/".join(f"{x:g}" for x in s["gc_collections"]) if s.get("gc_collections") else "–"
        rows.append(
            f"| {cfg} | {side} | {s['runs']} | {s['finished']} / {s['failed']} / "
            f"{s['stalled']} | {fmt(s.get('wall_s'))} | {fmt(s.get('rollouts_per_s'), '.0f')} | "
            f"{fmt(s.get('rollouts_per_s_incl_startup'), '.0f')}"
            f" | {fmt(s.get('cpu_ms_per_rollout'), '.3f')} | "
            f"{fmt(s.get('cpu_total_ms_per_rollout'), '.3f')} | "
            f"{fmt(s.get('peak_rss_mb'), '.0f')} | {fmt(s.get('rss_before_mb'), '.0f')} | "
            f"{fmt(s.get('gc_s'))} | {gcc} | {fmt(s.get('server_cpu_s'))} | {fmt(s.get('other_cpu_s'), '.1f')} | "
            f"{fmt(s.get('mean_reward'), '.4f')} |"
        )
    rows += [
        "",
        "| config | **CPU per rollout ours / floor** (target ≤ 1.5) | throughput ours / 0.3.1"
        " (target ≥ 3) | CPU per rollout ours / 0.3.1 (target ≤ 0.333)"
        " | whole-process CPU ours / 0.3.1 | peak RSS ours / 0.3.1 (target ≤ 1) |",
        "|---|---|---|---|---|---|",
    ]
    for cfg, sides in summary.items():
        a, b = sides.get(OURS) or {}, sides.get(OLD) or {}
        f, z = sides.get(FLOOR) or {}, sides.get(BASE) or {}
        base = ratio(z.get("cpu_ms_per_rollout"), f.get("cpu_ms_per_rollout"))
        rows.append(
            f"| {cfg} | {fmt(ratio(a.get('cpu_ms_per_rollout'), f.get('cpu_ms_per_rollout')))}"
            + (f" (base {fmt(base)})" if base is not None else "")
            + " | "
            + f"{fmt(ratio(a.get('rollouts_per_s'), b.get('rollouts_per_s')))}x | "
            f"{fmt(ratio(a.get('cpu_ms_per_rollout'), b.get('cpu_ms_per_rollout')), '.3f')} | "
            f"{fmt(ratio(a.get('cpu_total_ms_per_rollout'), b.get('cpu_total_ms_per_rollout')), '.3f')}"
            f" | {fmt(ratio(a.get('peak_rss_mb'), b.get('peak_rss_mb')), '.3f')} |"
        )
    rows += [
        "",
        "| config | side | outputs with the expected shape | model turns (`num_turns` metric)"
        " | tool calls (completion) | tool calls (`total_tool_calls` / `add_calls` metrics)"
        " | assistant / tool messages (completion) | mean reward |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cfg, side, s in measured_sides(summary):
        h = s.get("shape_hist") or {}
        rows.append(
            f"| {cfg} | {side} | {s.get('shape_ok', 0)} / {s['finished']} | "
            f"{hist_text(h.get('num_turns'))} | {hist_text(h.get('tool_calls'))} | "
            f"{hist_text(h.get('total_tool_calls'))} / {hist_text(h.get('add_calls'))} | "
            f"{hist_text(h.get('assistant_msgs'))} / {hist_text(h.get('tool_msgs'))} | "
            f"{fmt(s.get('mean_reward'), '.4f')} |"
        )
    return "\n".join(rows)


def hist_text(h: dict[str, int] | None) -> str:
    """`{"2": 6000}` -> `2 (×6000)`; several values, most frequent first; `–` when absent."""
    if not h:
        return "–"
    items = sorted(h.items(), key=lambda kv: -kv[1])
    if items == [("None", items[0][1])]:
        return "–"
    return ", ".join(f"{v if v != 'None' else 'n/a'} (×{k})" for v, k in items)


def machine_info() -> dict:
    info: dict = {"platform": platform.platform(), "nproc": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            info["mem_total_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except OSError:
        pass
    return info


def versions(py: Path) -> dict:
    code = (
        "import importlib.metadata as m, json, sys\n"
        "out = {'python': sys.version.split()[0]}\n"
        "for p in ('verifiers', 'openai', 'httpx', 'httpx2', 'aiohttp', 'datasets', 'pydantic', 'orjson', 'uvloop'):\n"
        "    try: out[p] = m.version(p)\n"
        "    except Exception: pass\n"
        "print(json.dumps(out))"
    )
    cp = subprocess.run([str(py), "-c", code], capture_output=True, text=True, cwd="/")
    return json.loads(cp.stdout) if cp.returncode == 0 else {"error": cp.stderr[-300:]}


def git_state() -> dict:
    def git(*a: str) -> str:
        cp = subprocess.run(["git", *a], capture_output=True, text=True, cwd=ROOT)
        return cp.stdout.strip()

    import hashlib

    h = hashlib.sha256()
    src = ROOT / "packages" / "verifiers" / "src"
    for path in sorted(src.rglob("*.py")):
        h.update(str(path.relative_to(src)).encode() + b"\0" + path.read_bytes() + b"\0")
    return {
        "commit": git("rev-parse", "HEAD"),
        # Other engineers edit this tree concurrently: the measured code is HEAD plus these
        # paths, identified by the hash of every .py file under packages/verifiers/src.
        "dirty_paths_under_packages": git("status", "--porcelain", "--", "packages").splitlines(),
        "verifiers_src_sha256": h.hexdigest(),
    }


# -- profile ------------------------------------------------------------------------------
def find_pyspy() -> str | None:
    exe = shutil.which("py-spy")
    if exe:
        return exe
    tools = ROOT / "bench" / ".venvs" / "tools"
    exe = tools / "bin" / "py-spy"
    if not exe.exists():
        uv = uv_cmd()
        try:
            subprocess.run([*uv, "venv", "-q", str(tools)], check=True)
            subprocess.run(
                [*uv, "pip", "install", "-q", "--python", str(tools / "bin" / "python"), "py-spy"],
                check=True,
            )
        except (subprocess.CalledProcessError, OSError) as e:
            print(f"py-spy not available ({e}); cProfile only", flush=True)
            return None
    return str(exe) if exe.exists() else None


def profile_ours(ours_py: Path, args: argparse.Namespace, variant: str = "single") -> int:
    """cProfile (deterministic, inflates call-heavy code) and py-spy (sampling) of our side.

    Profiles the first of --variants; files are profile-ours-*.txt for `single`,
    profile-ours-<variant>-*.txt otherwise.
    """
    import pstats

    raw_dir = ROOT / "bench" / ".venvs" / "profile"
    raw_dir.mkdir(parents=True, exist_ok=True)
    n, c = args.num_examples, args.concurrency
    stem = "profile-ours" if variant == "single" else f"profile-ours-{variant}"
    prof = raw_dir / f"{stem}.prof"
    r = run_one(OURS, ours_py, ours_py, n, c, args, profile=str(prof), variant=variant)
    print("cProfile run: " + describe(r), flush=True)
    report = io.StringIO()
    for key in ("tottime", "cumulative"):
        pstats.Stats(str(prof), stream=report).sort_stats(key).print_stats(40)
    with open(HERE / f"{stem}-cprofile.txt", "w") as f:
        f.write(f"# cProfile of our side ({variant}), evaluate only: N={n}, c={c}\n")
        f.write(f"# {describe(r)}\n# (cProfile roughly doubles CPU; use it for call counts)\n")
        # paths relative to the repository: kept output names no checkout
        f.write(report.getvalue().replace(f"{ROOT}/", ""))

    pyspy = find_pyspy()
    if pyspy:
        raw = raw_dir / ("ours-pyspy.txt" if variant == "single" else f"ours-{variant}-pyspy.txt")
        server, base_url = start_server(ours_py, args.latency_ms, args.wrong_rate)
        try:
            cmd = [
                pyspy, "record", "-r", "1000", "-f", "raw", "-o", str(raw), "--",
                str(ours_py), str(HERE / "worker.py"), "--base-url", base_url,
                "-n", str(n), "-c", str(c), "--timeout", str(args.timeout), "--variant", variant,
            ]  # fmt: skip
            cp = subprocess.run(cmd, capture_output=True, text=True, env=worker_env(), cwd=ROOT)
        finally:
            stop_server(server)
        line = next((x for x in cp.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None or not raw.exists():
            print(f"py-spy run failed: {cp.stderr[-1500:]}", flush=True)
        else:
            rr = json.loads(line[7:])
            rr.update(side=OURS)
            summary = subprocess.run(
                [sys.executable, str(HERE / "profile_summary.py"), str(raw), "--rollouts", str(n)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            with open(HERE / f"{stem}-pyspy.txt", "w") as f:
                f.write(
                    f"# py-spy record -r 1000 of our side (worker.py, {variant}), N={n}, c={c}\n"
                )
                f.write(f"# {describe(rr)}\n")
                f.write(
                    "# summarized to the evaluate window by bench/rollouts/profile_summary.py\n"
                )
                f.write(summary)
            print(summary)
    print(f"wrote {HERE.relative_to(ROOT)}/{stem}-*.txt")
    return 0


# -- main ---------------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-n", "--num-examples", type=int, default=2000)
    ap.add_argument("-c", "--concurrency", type=int, default=256)
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions at -c")
    ap.add_argument("--high-c", type=int, default=1024, help="0 to skip the high-concurrency run")
    ap.add_argument("--high-reps", type=int, default=1)
    ap.add_argument("--latency-ms", type=float, default=0.0)
    ap.add_argument("--wrong-rate", type=float, default=0.25,
                    help="server's deterministic share of wrong answers (checks scoring)")  # fmt: skip
    ap.add_argument("--timeout", type=float, default=600.0, help="stall guard per evaluate (s)")
    ap.add_argument("--sides", default=f"{OURS},{OLD},{FLOOR}",
                    help=f"{FLOOR} runs for the single variant only")  # fmt: skip
    ap.add_argument("--top-c", type=int, default=4096,
                    help="single variant: ours and floor once at this concurrency (0 to skip)")  # fmt: skip
    ap.add_argument("--top-n", type=int, default=20000, help="N for the --top-c pair")
    ap.add_argument("--base-src", default=None,
                    help=f"side {BASE!r}: our worker with this directory first on PYTHONPATH "
                    "(e.g. `git archive <commit> packages/verifiers/src` extracted), for a "
                    "before/after comparison inside one run")  # fmt: skip
    ap.add_argument("--variants", default="single,tool",
                    help="bench_env variants to run, in order: single (SingleTurnEnv), "
                    "tool (ToolEnv, one add tool, 2 turns)")  # fmt: skip
    ap.add_argument("--high-c-variants", default="single",
                    help="variants that also get the --high-c pair")  # fmt: skip
    add_options(ap, quick="N=300, 1 rep (a smoke test)")
    ap.add_argument("--no-warmup", action="store_true")
    ap.add_argument("--profile", action="store_true",
                    help="profile our side once at -c (cProfile + py-spy), no comparison")  # fmt: skip
    args = ap.parse_args()
    if args.quick:
        args.num_examples, args.reps, args.top_n = 300, 1, 2000
    out_path = results_path(args, HERE)

    ours_py = our_python()
    sides = [s.strip() for s in args.sides.split(",") if s.strip()]
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    high_c_variants = {v.strip() for v in args.high_c_variants.split(",") if v.strip()}
    for v in variants:
        if v not in VARIANTS:
            sys.exit(f"unknown variant {v!r}: choose from {', '.join(VARIANTS)}")
    pys = {OURS: ours_py, FLOOR: ours_py, BASE: ours_py}
    if BASE in sides and not args.base_src:
        sys.exit(f"side {BASE!r} needs --base-src")
    if OLD in sides and not args.profile:
        pys[OLD] = ensure_venv_031(platform.python_version())
    PYCACHE.mkdir(parents=True, exist_ok=True)

    if not args.no_warmup:
        for variant in variants if not args.profile else variants[:1]:
            for side in sides if not args.profile else [OURS]:
                if side == FLOOR and variant != "single":
                    continue
                r = run_one(side, pys[side], ours_py, 64, 16, args, variant=variant)
                print("warm-up " + describe(r), flush=True)

    if args.profile:
        return profile_ours(ours_py, args, variants[0])

    plan: list[tuple[str, str, int, int]] = []
    for variant in variants:
        vsides = [s for s in sides if s != FLOOR or variant == "single"]
        for _ in range(args.reps):
            plan += [(variant, side, args.num_examples, args.concurrency) for side in vsides]
        if args.high_c and variant in high_c_variants:
            for _ in range(args.high_reps):
                plan += [(variant, side, args.num_examples, args.high_c) for side in vsides]
        if args.top_c and variant == "single":
            # the flatness check: ours against the floor only (0.3.1 would take minutes here)
            plan += [
                (variant, s, args.top_n, args.top_c) for s in (OURS, BASE, FLOOR) if s in sides
            ]

    runs: list[dict] = []
    started = time.time()
    for i, (variant, side, n, c) in enumerate(plan, 1):
        r = run_one(side, pys[side], ours_py, n, c, args, variant=variant)
        runs.append(r)
        print(f"[{i}/{len(plan)}] " + describe(r), flush=True)

    summary: dict = {}
    for variant, side, n, c in dict.fromkeys(plan):
        cfg = f"{VARIANTS[variant]} N={n} c={c}"
        sel = [
            r
            for r in runs
            if r["variant"] == variant and r["side"] == side and r["n"] == n and r["c"] == c
        ]
        summary.setdefault(cfg, {})[side] = summarize(sel)
    text = table(summary)
    print()
    print(text)

    doc = {
        "benchmark": "bench/rollouts",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "args": vars(args),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "duration_s": time.time() - started,
        "machine": machine_info(),
        "versions": {side: versions(py) for side, py in pys.items()},
        "git": git_state(),
        "notes": [
            "PYTHONDONTWRITEBYTECODE removed for the workers; bytecode caches under "
            "bench/.venvs/pycache (PYTHONPYCACHEPREFIX); one unmeasured warm-up per side.",
            "server and client share the machine's cores; one fresh server per measured run.",
            "variants: single = vf.SingleTurnEnv (1 model turn); tool = vf.ToolEnv(tools=[add],"
            " max_turns=3), 2 model turns and 1 tool call per rollout (checked per output: "
            "summary.*.shape_ok / shape_hist).",
        ],
        "summary": summary,
        "table_markdown": text,
        "runs": runs,
    }
    out_path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {out_path.relative_to(ROOT) if out_path.is_relative_to(ROOT) else out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
