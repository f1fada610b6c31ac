"""Rollout throughput: our `verifiers` vs `verifiers==0.3.1`, side by side, one script.

    python bench/rollouts/run.py            # full: N=2000, c=256 x3 interleaved, c=1024 x1
    python bench/rollouts/run.py --quick    # smoke test: N=300, 1 rep, c=256 and c=1024
    python bench/rollouts/run.py --profile  # cProfile of OUR side once (N, c=256), no table

Each measured run starts a fresh scripted server (`python -m verifiers.testing serve`, from
our workspace venv, 0 ms latency) and then one worker process (bench/rollouts/worker.py)
under the side's own interpreter: our workspace venv (`.venv/bin/python`) or the 0.3.1 venv
(`bench/.venvs/verifiers-0.3.1`, created with uv when missing). Both load the same
bench/rollouts/bench_env.py. Runs are interleaved (ours, 0.3.1, ours, 0.3.1, ...).

`PYTHONDONTWRITEBYTECODE` is removed from the workers' environment (these machines export
it), so both sides run with bytecode caching; the caches go to bench/.venvs/pycache
(`PYTHONPYCACHEPREFIX`), and one unmeasured warm-up run per side fills them first.

Results: a table on stdout and bench/rollouts/results.json (results-quick.json with --quick).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
VENV_031 = ROOT / "bench" / ".venvs" / "verifiers-0.3.1"
PYCACHE = ROOT / "bench" / ".venvs" / "pycache"
OURS = "ours"
OLD = "0.3.1"


# -- set-up -------------------------------------------------------------------------------
def uv_cmd() -> list[str]:
    exe = shutil.which("uv")
    return [exe] if exe else [sys.executable, "-m", "uv"]


def ensure_venv_031(python_version: str) -> Path:
    py = VENV_031 / "bin" / "python"
    if py.exists():
        check = subprocess.run(
            [str(py), "-c", "import importlib.metadata as m; print(m.version('verifiers'))"],
            capture_output=True,
            text=True,
            cwd="/",
        )
        if check.returncode == 0 and check.stdout.strip() == "0.3.1":
            return py
    print(f"creating {VENV_031} (verifiers==0.3.1) ...", flush=True)
    uv = uv_cmd()
    subprocess.run([*uv, "venv", "-q", "--python", python_version, str(VENV_031)], check=True)
    subprocess.run(
        [*uv, "pip", "install", "-q", "--python", str(py), "verifiers==0.3.1", "datasets"],
        check=True,
    )
    return py


def our_python() -> Path:
    py = ROOT / ".venv" / "bin" / "python"
    if not py.exists():
        sys.exit(f"{py} not found: run `make sync` (uv sync --all-packages) first")
    return py


def worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # both sides get bytecode caching
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    env["PYTHONUNBUFFERED"] = "1"
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
) -> dict:
    server, base_url = start_server(server_py, args.latency_ms, args.wrong_rate)
    try:
        time.sleep(0.2)
        srv_cpu0 = proc_cpu_s(server.pid) or 0.0
        load0, busy0 = loadavg(), system_busy_s()
        cmd = [
            str(py), str(HERE / "worker.py"), "--base-url", base_url, "-n", str(n),
            "-c", str(c), "--timeout", str(args.timeout), "--label", side,
        ]  # fmt: skip
        if profile:
            cmd += ["--profile", profile]
        t0 = time.perf_counter()
        try:
            cp = subprocess.run(
                cmd, capture_output=True, text=True, env=worker_env(), cwd=ROOT,
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
                  "failed": n, "errors": {f"worker rc={rc}": 1}}  # fmt: skip
    # Noise indicator: CPU the rest of the machine used while this worker ran (whole-machine
    # busy time minus worker and server). This machine is shared; a large value marks a run
    # whose wall time was disturbed (its CPU figures are per-process and stay valid).
    other = busy - srv_cpu - (result.get("cpu_total_s") or 0.0)
    result.update(
        side=side,
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
        return f"{r['side']:>5} c={r['c']}: FAILED ({r.get('errors')})"
    return (
        f"{r['side']:>5} c={r['c']:<5} n={r['n']}: {r['finished']} done, {r['failed']} failed"
        f"{', STALLED' if r['stalled'] else ''}; {r['wall_s']:.2f}s, "
        f"{r['rollouts_per_s']:.0f} rollouts/s, {r['cpu_ms_per_rollout']:.2f} CPU-ms/rollout, "
        f"peak RSS {r['peak_rss_mb']:.0f} MB, reward {r['mean_reward']}; "
        f"GC {r.get('gc_s', 0):.2f}s"
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
    return out


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt(v: float | None, spec: str = ".2f") -> str:
    return "–" if v is None else format(v, spec)


def table(summary: dict) -> str:
    rows = [
        "| config | side | runs | done / failed / stalled | wall s | rollouts/s | rollouts/s incl."
        " start-up | CPU ms/rollout"
        " (evaluate) | CPU ms/rollout (whole process) | peak RSS MB | RSS before evaluate MB |"
        " GC s (in evaluate) | server CPU s | other procs' CPU s | mean reward |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for cfg, sides in summary.items():
        for side in (OURS, OLD):
            s = sides.get(side)
            if not s:
                continue
            rows.append(
                f"| {cfg} | {side} | {s['runs']} | {s['finished']} / {s['failed']} / "
                f"{s['stalled']} | {fmt(s.get('wall_s'))} | {fmt(s.get('rollouts_per_s'), '.0f')} | "
                f"{fmt(s.get('rollouts_per_s_incl_startup'), '.0f')}"
                f" | {fmt(s.get('cpu_ms_per_rollout'), '.3f')} | "
                f"{fmt(s.get('cpu_total_ms_per_rollout'), '.3f')} | "
                f"{fmt(s.get('peak_rss_mb'), '.0f')} | {fmt(s.get('rss_before_mb'), '.0f')} | "
                f"{fmt(s.get('gc_s'))} | {fmt(s.get('server_cpu_s'))} | {fmt(s.get('other_cpu_s'), '.1f')} | "
                f"{fmt(s.get('mean_reward'), '.4f')} |"
            )
    rows += [
        "",
        "| config | throughput ours / 0.3.1 (target ≥ 3) | CPU per rollout ours / 0.3.1 (target ≤ 0.333)"
        " | whole-process CPU ours / 0.3.1 | peak RSS ours / 0.3.1 (target ≤ 1) |",
        "|---|---|---|---|---|",
    ]
    for cfg, sides in summary.items():
        a, b = sides.get(OURS) or {}, sides.get(OLD) or {}
        rows.append(
            f"| {cfg} | {fmt(ratio(a.get('rollouts_per_s'), b.get('rollouts_per_s')))}x | "
            f"{fmt(ratio(a.get('cpu_ms_per_rollout'), b.get('cpu_ms_per_rollout')), '.3f')} | "
            f"{fmt(ratio(a.get('cpu_total_ms_per_rollout'), b.get('cpu_total_ms_per_rollout')), '.3f')}"
            f" | {fmt(ratio(a.get('peak_rss_mb'), b.get('peak_rss_mb')), '.3f')} |"
        )
    return "\n".join(rows)


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


def profile_ours(ours_py: Path, args: argparse.Namespace) -> int:
    """cProfile (deterministic, inflates call-heavy code) and py-spy (sampling) of our side."""
    import pstats

    raw_dir = ROOT / "bench" / ".venvs" / "profile"
    raw_dir.mkdir(parents=True, exist_ok=True)
    n, c = args.num_examples, args.concurrency
    prof = raw_dir / "ours.prof"
    r = run_one(OURS, ours_py, ours_py, n, c, args, profile=str(prof))
    print("cProfile run: " + describe(r), flush=True)
    with open(HERE / "profile-ours-cprofile.txt", "w") as f:
        f.write(f"# cProfile of our side, evaluate only: N={n}, c={c}\n")
        f.write(f"# {describe(r)}\n# (cProfile roughly doubles CPU; use it for call counts)\n")
        for key in ("tottime", "cumulative"):
            st = pstats.Stats(str(prof), stream=f)
            st.sort_stats(key).print_stats(40)

    pyspy = find_pyspy()
    if pyspy:
        raw = raw_dir / "ours-pyspy.txt"
        server, base_url = start_server(ours_py, args.latency_ms, args.wrong_rate)
        try:
            cmd = [
                pyspy, "record", "-r", "1000", "-f", "raw", "-o", str(raw), "--",
                str(ours_py), str(HERE / "worker.py"), "--base-url", base_url,
                "-n", str(n), "-c", str(c), "--timeout", str(args.timeout),
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
            with open(HERE / "profile-ours-pyspy.txt", "w") as f:
                f.write(f"# py-spy record -r 1000 of our side (worker.py), N={n}, c={c}\n")
                f.write(f"# {describe(rr)}\n")
                f.write(
                    "# summarized to the evaluate window by bench/rollouts/profile_summary.py\n"
                )
                f.write(summary)
            print(summary)
    print(f"wrote {HERE.relative_to(ROOT)}/profile-ours-*.txt")
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
    ap.add_argument("--sides", default=f"{OURS},{OLD}")
    ap.add_argument("--quick", action="store_true", help="N=300, 1 rep (a smoke test)")
    ap.add_argument("--no-warmup", action="store_true")
    ap.add_argument("--profile", action="store_true",
                    help="profile our side once at -c (cProfile + py-spy), no comparison")  # fmt: skip
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.quick:
        args.num_examples, args.reps = 300, 1
    out_path = (
        Path(args.out)
        if args.out
        else HERE / ("results-quick.json" if args.quick else "results.json")
    )

    ours_py = our_python()
    sides = [s.strip() for s in args.sides.split(",") if s.strip()]
    pys = {OURS: ours_py}
    if OLD in sides and not args.profile:
        pys[OLD] = ensure_venv_031(platform.python_version())
    PYCACHE.mkdir(parents=True, exist_ok=True)

    if not args.no_warmup:
        for side in sides if not args.profile else [OURS]:
            r = run_one(side, pys[side], ours_py, 64, 16, args)
            print("warm-up " + describe(r), flush=True)

    if args.profile:
        return profile_ours(ours_py, args)

    plan: list[tuple[str, int, int]] = []
    for _ in range(args.reps):
        plan += [(side, args.num_examples, args.concurrency) for side in sides]
    if args.high_c:
        for _ in range(args.high_reps):
            plan += [(side, args.num_examples, args.high_c) for side in sides]

    runs: list[dict] = []
    started = time.time()
    for i, (side, n, c) in enumerate(plan, 1):
        r = run_one(side, pys[side], ours_py, n, c, args)
        runs.append(r)
        print(f"[{i}/{len(plan)}] " + describe(r), flush=True)

    summary: dict = {}
    for side, n, c in dict.fromkeys(plan):
        cfg = f"N={n} c={c}"
        sel = [r for r in runs if r["side"] == side and r["n"] == n and r["c"] == c]
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
