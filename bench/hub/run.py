"""prime-hub vs pypiserver, side by side, on loopback only.

1. builds three small wheels (bench-env -> bench-lib -> bench-core) with hatchling;
2. serves them from pypiserver (PyPI, in its own venv under bench/.venvs, default setup:
   ``pypi-server run -a . -P .``) and from prime-hub (``prime-hub serve``, SQLite + local dir);
3. GET /simple/bench-env/: 200 requests at concurrency 1 (keep-alive) and 200 at
   concurrency 200 (each client its own connection); req/s, p50, p99, errors (timeout 20 s);
   median of 3 runs;
4. cold ``pip install`` and ``uv pip install`` of bench-env with its dependencies into a fresh
   venv each run (venv creation untimed, no caches), median of N runs.

Usage: uv run --no-sync python bench/hub/run.py [--runs 3] [--install-runs 5] [--workers 1]
Every request goes to 127.0.0.1; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import httpx
from loadgen import run_load

from verifiers.testing import free_port

ROOT = Path(__file__).resolve().parents[2]
# pip and uv without the machine's config, caches or network indexes: the hub tests' kit
sys.path.insert(0, str(ROOT / "packages/hub-server/tests"))
from prime_hub_testkit import clean_env  # noqa: E402

VENVS = ROOT / "bench" / ".venvs"
PKGS = [("bench-core", []), ("bench-lib", ["bench-core>=1.0"]), ("bench-env", ["bench-lib>=1.0"])]


def wait_http(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise TimeoutError(url)


def build_wheels(out: Path) -> list[Path]:
    src = out / "src"
    for name, deps in PKGS:
        mod = name.replace("-", "_")
        d = src / name
        (d / mod).mkdir(parents=True)
        (d / mod / "__init__.py").write_text("def load_environment(**kw):\n    return kw\n")
        (d / "pyproject.toml").write_text(
            textwrap.dedent(f"""
            [project]
            name = "{name}"
            version = "1.0.0"
            requires-python = ">=3.8"
            dependencies = {json.dumps(deps)}
            [build-system]
            requires = ["hatchling"]
            build-backend = "hatchling.build"
            [tool.hatch.build.targets.wheel]
            packages = ["{mod}"]
            """)
        )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "build",
                "--no-isolation",
                "--wheel",
                "--outdir",
                str(out / "wheels"),
                str(d),
            ],
            check=True,
            capture_output=True,
        )
    return sorted((out / "wheels").glob("*.whl"))


def pypiserver_venv() -> Path:
    venv = VENVS / "pypiserver"
    exe = venv / "bin" / "pypi-server"
    if not exe.exists():
        subprocess.run(["uv", "venv", "-q", str(venv)], check=True, env=clean_env())
        subprocess.run(
            ["uv", "pip", "install", "-q", "--python", str(venv / "bin" / "python"), "pypiserver"],
            check=True,
            env={**clean_env(), "UV_NO_CONFIG": "1"},
        )
    return exe


def pypiserver_version(exe: Path) -> str:
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    return (out.stdout or out.stderr).strip()


# ------------------------------------------------------------------ GET load
def median_run(url: str, n: int, conc: int, runs: int) -> dict[str, float]:
    samples = [asyncio.run(run_load(url, n, conc)) for _ in range(runs)]
    return {k: statistics.median(s[k] for s in samples) for k in samples[0]}


# ------------------------------------------------------------------ installs
def _install_once(index: str, tool: str, venv: Path) -> float:
    if tool == "pip":
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        cmd = [
            str(venv / "bin" / "pip"),
            "install",
            "-q",
            "--no-cache-dir",
            "--disable-pip-version-check",
            "--index-url",
            index,
            "bench-env",
        ]
    else:
        subprocess.run(["uv", "venv", "-q", str(venv)], check=True, env=clean_env())
        cmd = [
            "uv",
            "pip",
            "install",
            "-q",
            "--no-config",
            "--no-cache",
            "--python",
            str(venv / "bin" / "python"),
            "--index-url",
            index,
            "bench-env",
        ]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=clean_env(), timeout=120)
    elapsed = (time.perf_counter() - t0) * 1000
    shutil.rmtree(venv)
    return elapsed


def time_installs(indexes: dict[str, str], tool: str, runs: int, work: Path) -> dict[str, dict]:
    """Runs alternate between the servers (A B A B ...) so both see the same machine noise."""
    times: dict[str, list[float]] = {name: [] for name in indexes}
    for i in range(runs):
        order = list(indexes.items()) if i % 2 == 0 else list(reversed(indexes.items()))
        for name, index in order:
            times[name].append(_install_once(index, tool, work / f"{tool}-{name}-{i}"))
    return {
        name: {
            "median_ms": statistics.median(t),
            "min_ms": min(t),
            "max_ms": max(t),
            "runs": len(t),
        }
        for name, t in times.items()
    }


# ------------------------------------------------------------------ servers
def start(cmd: list[str], env: dict[str, str], url: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    wait_http(url)
    return proc


def stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--install-runs", type=int, default=5)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "hub" / "results.json")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hub-bench-"))
    results: dict[str, object] = {"machine": {"cpus": os.cpu_count()}}
    procs: list[subprocess.Popen] = []
    try:
        wheels = build_wheels(work)
        pkgdir = work / "pypiserver-packages"
        pkgdir.mkdir()
        for w in wheels:
            shutil.copy(w, pkgdir)
        exe = pypiserver_venv()
        results["pypiserver_version"] = pypiserver_version(exe)
        pport, hport = free_port(), free_port()
        procs.append(
            start(
                [
                    str(exe),
                    "run",
                    "-i",
                    "127.0.0.1",
                    "-p",
                    str(pport),
                    "-a",
                    ".",
                    "-P",
                    ".",
                    str(pkgdir),
                ],
                clean_env(),
                f"http://127.0.0.1:{pport}/simple/",
            )
        )
        henv = {**clean_env(), "PRIME_HUB_DATA_DIR": str(work / "hub")}
        hub_cli = [sys.executable, "-m", "prime_hub.cli"]
        subprocess.run(
            [*hub_cli, "admin", "create-user", "bench"], env=henv, check=True, capture_output=True
        )
        token = subprocess.run(
            [*hub_cli, "admin", "create-token", "bench"],
            env=henv,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        procs.append(
            start(
                [*hub_cli, "serve", "--port", str(hport), "--workers", str(args.workers)],
                henv,
                f"http://127.0.0.1:{hport}/health",
            )
        )
        for w in wheels:
            r = httpx.post(
                f"http://127.0.0.1:{hport}/legacy/",
                auth=("__token__", token),
                data={":action": "file_upload"},
                files={"content": (w.name, w.read_bytes())},
            )
            r.raise_for_status()
        servers = {
            "pypiserver": f"http://127.0.0.1:{pport}",
            "prime-hub": f"http://127.0.0.1:{hport}",
        }
        results["loadavg_before"] = os.getloadavg()
        for name, base in servers.items():
            url = f"{base}/simple/bench-env/"
            results[name] = {
                "get_c1": median_run(url, args.requests, 1, args.runs),
                "get_c200": median_run(url, args.requests, 200, args.runs),
            }
        indexes = {name: f"{base}/simple/" for name, base in servers.items()}
        for tool in ("pip", "uv"):
            for name, figures in time_installs(indexes, tool, args.install_runs, work).items():
                results[name][f"{tool}_install"] = figures
        results["loadavg_after"] = os.getloadavg()
        for name in servers:
            print(name, json.dumps(results[name], indent=1), flush=True)
        hub, pps = results["prime-hub"], results["pypiserver"]
        results["ratios_hub_over_pypiserver"] = {
            "req_s_c1": hub["get_c1"]["req_s"] / pps["get_c1"]["req_s"],
            "req_s_c200": hub["get_c200"]["req_s"] / max(pps["get_c200"]["req_s"], 1e-9),
            "pip_install_time": hub["pip_install"]["median_ms"] / pps["pip_install"]["median_ms"],
            "uv_install_time": hub["uv_install"]["median_ms"] / pps["uv_install"]["median_ms"],
        }
        results["settings"] = vars(args) | {"out": os.path.relpath(args.out, ROOT)}
        args.out.write_text(json.dumps(results, indent=2) + "\n")
        print(json.dumps(results["ratios_hub_over_pypiserver"], indent=1))
    finally:
        for p in procs:
            stop(p)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
