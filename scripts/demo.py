"""`make demo`: the whole loop on the embedded default, with real processes only.

1. start a hub (`prime-hub serve`: SQLite + a local folder) and create a user and a token;
2. publish our verifiers SDK to it (so installs never take PyPI's unrelated `verifiers`);
3. `prime env init` an arithmetic environment and `prime env push` it, plus every package
   under environments/ that builds;
4. `prime env install` it by name into a fresh virtualenv;
5. `prime eval ... --push`: vf-eval against a model (OPENAI_BASE_URL if set, else the scripted
   stand-in server) and the summary attached to the version on the hub;
6. `prime env info` shows it; then the reference environments that run offline are installed
   by name and evaluated the same way, their results pushed;
7. the hub keeps running in the background, so its web pages show all of it (`--stop` to end
   it with the demo; the next `make demo` replaces it).

Everything lives in `.demo/` at the repository root (or DEMO_DIR); with `--stop` in a temporary
folder (kept with --keep). The demo's own tools (the hub, the CLI, the SDK) run from a virtualenv
of its own, `.venvs/demo` (or DEMO_VENV), synced from the lockfile: the project's `.venv`, where
`prime eval` and `prime env install` put what a reader asks for, is never synced or pruned.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from verifiers.testing import free_port, wait_listening

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DEMO_VENV = Path(os.environ.get("DEMO_VENV") or ROOT / ".venvs" / "demo").absolute()
USER = "demo"
ENV_NAME = "demo-arithmetic"
DEMO_HOME = ROOT / ".demo"
# Reference environments that evaluate offline against the scripted stand-in (no judge API,
# no network); the others are pushed and browsable but not evaluated here.
EVALUATED = ("i3-math", "i3-science", "i3-logic", "aime", "gpqa", "mmlu-pro", "i3-code")


def step(text: str) -> None:
    print(f"\n\033[1m==> {text}\033[0m", flush=True)


class Demo:
    def __init__(self, work: Path) -> None:
        self.work = work
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("VIRTUAL_ENV", "PRIME_", "PIP_INDEX", "UV_INDEX"))
        }
        self.env["PATH"] = f"{BIN}{os.pathsep}{self.env.get('PATH', '')}"
        self.env.update(
            PRIME_HUB_DATA_DIR=str(work / "hub"),
            PRIME_CONFIG_DIR=str(work / "prime-config"),
            PRIME_CACHE_DIR=str(work / "prime-cache"),
            UV_PYTHON_DOWNLOADS="never",
            HF_HUB_OFFLINE=os.environ.get("HF_HUB_OFFLINE", "1"),  # bundled samples, no downloads
            # The demo's hub is private to this machine and works offline: its names (aime, ...)
            # are not checked against PyPI (docs/operations/hub.md, "Names the upstream already
            # serves"); a hub people install from keeps the check.
            PRIME_HUB_ALLOWED_UPSTREAM_NAMES='["*"]',
        )
        self.procs: list[subprocess.Popen] = []
        self.token = ""

    def run(self, *cmd: str | Path, check: bool = True, quiet: bool = False) -> str:
        printable = " ".join(str(c) for c in cmd).replace(str(BIN) + "/", "")
        if self.token:
            printable = printable.replace(self.token, self.token[:10] + "…")
        print(f"$ {printable}", flush=True)
        r = subprocess.run(
            [str(c) for c in cmd], env=self.env, cwd=self.work, text=True, capture_output=True
        )
        if not quiet or r.returncode != 0:
            sys.stdout.write(r.stdout)
            sys.stderr.write(r.stderr)
        if check and r.returncode != 0:
            raise SystemExit(f"demo: step failed with exit status {r.returncode}")
        return r.stdout

    def start(self, *cmd: str | Path) -> subprocess.Popen:
        proc = subprocess.Popen(
            [str(c) for c in cmd],
            env=self.env,
            cwd=self.work,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.procs.append(proc)
        return proc

    def start_detached(self, log: Path, *cmd: str | Path) -> subprocess.Popen:
        """A server that outlives the demo: its own session, output to a log file."""
        with open(log, "ab") as out:
            return subprocess.Popen(
                [str(c) for c in cmd],
                env=self.env,
                cwd=self.work,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def run_in_own_venv(argv: list[str]) -> None:
    """Unless this already runs in DEMO_VENV: sync the workspace into it (exactly the
    lockfile's packages, so a rerun repairs it) and run this script again with its python."""
    if Path(sys.prefix).resolve() == DEMO_VENV.resolve():
        return
    uv = shutil.which("uv")
    cmd = [uv] if uv else [sys.executable, "-m", "uv"]  # `make bootstrap` installs either
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    step(f"the demo's own virtualenv, {DEMO_VENV} (the project's .venv is left as it is)")
    sync = [*cmd, "sync", "--all-packages", "--locked", "--no-default-groups", "--quiet"]
    # UV_PROJECT_ENVIRONMENT: uv syncs this venv instead of the project's .venv
    if subprocess.run(
        sync, cwd=ROOT, env={**env, "UV_PROJECT_ENVIRONMENT": str(DEMO_VENV)}
    ).returncode:
        raise SystemExit(f"demo: could not sync {DEMO_VENV} (see uv's message above)")
    python = DEMO_VENV / "bin" / "python"
    sys.stdout.flush()
    os.execve(python, [str(python), str(Path(__file__).resolve()), *argv], env)


def main() -> int:
    run_in_own_venv(sys.argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", action="store_true", help="with --stop: keep the demo folder")
    ap.add_argument(
        "--stop", action="store_true", help="stop the hub at the end (default: leave it running)"
    )
    ap.add_argument("-n", "--num-examples", type=int, default=20)
    ap.add_argument("-r", "--rollouts", type=int, default=3)
    ap.add_argument(
        "--no-reference", action="store_true", help="do not push the packages in environments/"
    )
    args = ap.parse_args()
    started = time.monotonic()
    if args.stop:
        work = Path(os.environ.get("DEMO_DIR") or tempfile.mkdtemp(prefix="prime-demo-"))
    else:
        work = Path(os.environ.get("DEMO_DIR") or DEMO_HOME)
        stop_previous(work)
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    uv = shutil.which("uv", path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}") or "uv"
    d = Demo(work)
    try:
        step("a hub on the embedded default (SQLite + a local folder), a user and a token")
        d.run(BIN / "prime-hub", "admin", "create-user", USER)
        token = d.token = d.run(
            BIN / "prime-hub", "admin", "create-token", USER, quiet=True
        ).strip()
        print(f"{token[:10]}… (printed once; the hub stores only its hash)")
        port = free_port()
        serve = (BIN / "prime-hub", "serve", "--port", str(port), "--log-level", "warning")
        if args.stop:
            hub = d.start(*serve)
        else:
            hub = d.start_detached(work / "hub.log", *serve)
            (work / "hub.pid").write_text(str(hub.pid))
        try:
            wait_listening(port, hub, timeout=60)
        except (RuntimeError, TimeoutError) as e:
            raise SystemExit(f"demo: the hub did not start: {e}") from None
        d.env["PRIME_HUB_URL"] = f"http://127.0.0.1:{port}"
        d.run(BIN / "prime", "login", "--token", token)

        step("the verifiers SDK and the prime CLI on the hub (PyPI's are other projects)")
        wheels = work / "sdk"
        d.run(uv, "build", "--wheel", "-q", "-o", wheels, ROOT / "packages" / "verifiers")
        d.run(uv, "build", "--wheel", "-q", "-o", wheels, ROOT / "packages" / "cli")
        url = f"http://127.0.0.1:{port}/legacy/"
        d.run(uv, "publish", "--publish-url", url, "--token", token, *sorted(wheels.glob("*.whl")))

        step("a new environment with `prime env init`, pushed with `prime env push`")
        d.run(BIN / "prime", "env", "init", ENV_NAME, "--path", work)
        d.run(BIN / "prime", "env", "push", work / ENV_NAME)

        pushed_reference: list[str] = []
        reference = sorted(p for p in (ROOT / "environments").glob("*/pyproject.toml"))
        if reference and not args.no_reference:
            step(f"the reference environments ({len(reference)} under environments/)")
            for pyproject in reference:
                # a copy, so that a bump or build output never touches the checkout
                src = work / "reference" / pyproject.parent.name
                shutil.copytree(
                    pyproject.parent,
                    src,
                    ignore=shutil.ignore_patterns("dist", "__pycache__", ".venv", "outputs"),
                )
                out = d.run(BIN / "prime", "env", "push", src, check=False)
                if "published" in out:
                    pushed_reference.append(src.name)
        d.run(BIN / "prime", "env", "list")

        step("install it by name into a fresh virtualenv")
        venv = work / "venv"
        d.run(uv, "venv", "-q", venv)
        d.run(BIN / "prime", "env", "install", f"{USER}/{ENV_NAME}", "--python", venv)

        step("evaluate it with vf-eval and attach the summary on the hub")
        base_url = os.environ.get("OPENAI_BASE_URL")
        model = os.environ.get("VF_MODEL", "gpt-4.1-mini")
        if not base_url:
            server = d.start(
                BIN / "python", "-m", "verifiers.testing", "serve", "--wrong-rate", "0.25"
            )
            assert server.stdout is not None
            line = server.stdout.readline().strip()
            if not line.startswith("READY "):
                raise SystemExit(f"demo: the scripted server did not start ({line!r})")
            base_url, model = line.split(" ", 1)[1], "scripted-model"
            print(
                "no OPENAI_BASE_URL: the replies come from a SCRIPTED stand-in server, not a "
                "model (right about 75% of the time)"
            )
        d.run(
            BIN / "prime", "eval", f"{USER}/{ENV_NAME}@0.1.0", "--push", "--python", venv,
            "-m", model, "-b", base_url, "-n", str(args.num_examples),
            "-r", str(args.rollouts), "--no-progress",
        )  # fmt: skip
        d.run(BIN / "prime", "env", "info", f"{USER}/{ENV_NAME}")

        evaluated = [name for name in EVALUATED if name in pushed_reference]
        if evaluated:
            step(f"reference environments installed by name and evaluated: {', '.join(evaluated)}")
            if model == "scripted-model":
                print("(the scripted stand-in only does arithmetic: expect rewards near 0 here)")
            for name in evaluated:
                d.run(BIN / "prime", "env", "install", f"{USER}/{name}", "--python", venv)
                d.run(
                    BIN / "prime", "eval", f"{USER}/{name}", "--push", "--python", venv,
                    "-m", model, "-b", base_url, "-n", "5", "-r", "2", "--no-progress",
                    "--env-args", '{"source": "sample"}', check=False,
                )  # fmt: skip
        hub_url = d.env["PRIME_HUB_URL"]
        print(f"\ndemo: done in {time.monotonic() - started:.0f}s")
        runs = sorted(work.glob("**/outputs/evals/*/*/metadata.json"), key=os.path.getmtime)
        if runs:  # the rollouts are on the hub's environment pages, and here without a hub
            viewer = BIN / "vf-view" if (BIN / "vf-view").exists() else "vf-view"
            print(f"demo: read the last run's rollouts locally with: {viewer} {runs[-1].parent}")
        if not args.stop:
            print(
                f"demo: the hub keeps running at {hub_url} — browse {hub_url}/ and "
                f"{hub_url}/{USER}/i3-math (sign in with the token in {work / 'token'});\n"
                f"      stop it with: kill $(cat {work / 'hub.pid'})\n"
                f"      use it from any shell with uv (prime from the hub, not installed):\n"
                f"      export PRIME_HUB_URL={hub_url}\n"
                f'      uvx --index-url "$PRIME_HUB_URL/simple/" prime env list'
            )
            (work / "token").write_text(token + "\n")
            (work / "token").chmod(0o600)
    finally:
        d.stop()
        if args.stop and not (args.keep or os.environ.get("DEMO_DIR")):
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"demo: files in {work}")
    return 0


def stop_previous(work: Path) -> None:
    """End the hub an earlier `make demo` left running in the same folder."""
    pid_file = work / "hub.pid"
    try:
        pid = int(pid_file.read_text())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, 15)
    except ProcessLookupError:
        return
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


if __name__ == "__main__":
    raise SystemExit(main())
