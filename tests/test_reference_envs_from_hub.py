"""Issues 7 and 8: every reference environment under environments/ installs with `prime env
install` from a hub and runs with vf-eval.

One hub (the session's), every package pushed from a copy with `prime env push`, all of them
installed by name into one fresh virtualenv with ONE `prime env install` command, then:
installed versions and file bytes equal the hub's wheels, `vf.load_environment(name,
source="sample")` works for each, and `prime eval --push` (vf-eval) runs the offline ones against
the scripted model; i3-code and deepdive also against an "oracle" that answers correctly (so the
sandbox really grades a program and the research tools really run), and the judge-based ones
(hle, deepdive) with an unreachable judge (infra errors, not 0 rewards) and a scripted judge.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import shutil
import subprocess
import tomllib
import zipfile
from pathlib import Path

import httpx
import pytest
from e2e_kit import BIN, ROOT, Prime, base_env, free_port, install_sdk, run_py, uv

OWNER = "refs"
ENVS_DIR = ROOT / "environments"
NAMES = sorted(p.parent.name for p in ENVS_DIR.glob("*/pyproject.toml"))
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}  # the bundled samples only


def pyproject_version(name: str) -> str:
    return tomllib.loads((ENVS_DIR / name / "pyproject.toml").read_text())["project"]["version"]


def test_every_reference_environment_is_here():
    # the list the issues name; a new package under environments/ is covered automatically
    assert set(NAMES) >= {
        "aime", "deepdive", "gpqa", "hle", "i3-code", "i3-logic", "i3-math", "i3-science",
        "livecodebench", "mini-swe-agent-plus", "mmlu-pro",
    }  # fmt: skip


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def author(prime_as) -> Prime:  # type: ignore[no-untyped-def]
    return prime_as(OWNER)


@pytest.fixture(scope="module")
def pushed(author: Prime, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Every package under environments/ pushed from a copy (the checkout is never touched);
    returns name → the hub's `prime env info --json` for it."""
    work = tmp_path_factory.mktemp("reference-src")  # not a git work tree: no dirty check
    procs = {}
    for name in NAMES:
        src = work / name
        shutil.copytree(
            ENVS_DIR / name,
            src,
            ignore=shutil.ignore_patterns("dist", "__pycache__", ".venv", "outputs", "*.egg-info"),
        )
        procs[name] = subprocess.Popen(
            [str(BIN / "prime"), "env", "push", str(src)],
            cwd=work,
            env=author.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    failed = []
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        version = pyproject_version(name)
        if proc.returncode != 0 or f"published {OWNER}/{name} {version}" not in out:
            failed.append(f"{name}: exit {proc.returncode}\n{out}{err}")
    assert not failed, "\n".join(failed)
    anon = author  # info is public; any user may read it
    return {
        name: json.loads(anon("env", "info", f"{OWNER}/{name}", "--json").ok().out)
        for name in NAMES
    }


def hub_wheel(info: dict) -> dict:
    (latest,) = [v for v in info["versions"] if v["version"] == info["environment"]["latest_version"]]
    (wheel,) = [f for f in latest["files"] if f["kind"] == "wheel"]
    return wheel


@pytest.fixture(scope="module")
def installed(
    pushed: dict[str, dict], author: Prime, verifiers_wheel: Path, tmp_path_factory
) -> tuple[Path, str]:
    """One fresh virtualenv with our SDK, then ALL reference environments by name in one
    `prime env install`. Returns (python, the command's stdout)."""
    venv = tmp_path_factory.mktemp("reference-venv") / "venv"
    subprocess.run([uv(), "venv", "-q", str(venv)], check=True, env=base_env(), capture_output=True)
    python = venv / "bin" / "python"
    install_sdk(python, verifiers_wheel)
    refs = [f"{OWNER}/{name}" for name in NAMES]
    r = author("env", "install", *refs, "--python", python).ok()
    return python, r.out


# ------------------------------------------------------------------ install
def test_push_published_every_package_at_its_version(pushed):
    for name, info in pushed.items():
        assert info["environment"]["latest_version"] == pyproject_version(name), name
        kinds = sorted(f["kind"] for v in info["versions"] for f in v["files"])
        assert kinds == ["sdist", "wheel"], (name, kinds)


def test_one_install_command_installs_all_at_the_hubs_version(installed, pushed):
    python, out = installed
    versions = json.loads(
        run_py(
            python,
            "import importlib.metadata as m, json, sys\n"
            f"print(json.dumps({{n: m.version(n) for n in {NAMES!r}}}))",
        ).stdout
    )
    for name, info in pushed.items():
        version = info["environment"]["latest_version"]
        wheel = hub_wheel(info)
        assert versions[name] == version, name
        line = f"installed {OWNER}/{name} {version} (sha256 {wheel['sha256'][:12]}…) with uv"
        assert line in out, (line, out)


INSTALLED_FILES = """
import hashlib, importlib.metadata as m, json, sys
out = {}
for name in sys.argv[1:]:
    dist = m.distribution(name)
    out[name] = {
        str(f): hashlib.sha256(f.locate().read_bytes()).hexdigest()
        for f in dist.files or []
        if f.locate().is_file()
    }
print(json.dumps(out))
"""


def test_installed_files_are_the_hubs_wheel_bytes(installed, pushed, hub):
    """Each wheel as the hub serves it (checked against the hub's sha256) and the installed
    files: every file of the wheel is installed byte for byte (RECORD aside, which installers
    rewrite)."""
    python, _ = installed
    r = subprocess.run(
        [str(python), "-c", INSTALLED_FILES, *NAMES],
        capture_output=True, text=True, env=base_env(), timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    on_disk = json.loads(r.stdout)
    with httpx.Client(base_url=hub.url, timeout=60) as http:
        for name, info in pushed.items():
            wheel = hub_wheel(info)
            data = http.get(wheel["url"]).raise_for_status().content
            assert hashlib.sha256(data).hexdigest() == wheel["sha256"], name
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                files = {
                    i.filename: hashlib.sha256(zf.read(i)).hexdigest()
                    for i in zf.infolist()
                    if not i.is_dir() and not i.filename.endswith(".dist-info/RECORD")
                }
            assert any(p.endswith("/__init__.py") for p in files), name
            mismatched = {p for p, h in files.items() if on_disk[name].get(p) != h}
            assert not mismatched, (name, sorted(mismatched))


# ------------------------------------------------------------------ load
LOAD_ALL = """
import json, sys, traceback
import verifiers as vf
for name in sys.argv[1:]:
    try:
        env = vf.load_environment(name, source="sample")
        ds = env.get_eval_dataset() if env.eval_dataset is not None else env.get_dataset()
        row = {"env": name, "ok": True, "type": type(env).__name__, "rows": len(ds)}
    except Exception as exc:
        row = {"env": name, "ok": False, "error": repr(exc), "tb": traceback.format_exc()}
    print(json.dumps(row), flush=True)
"""


def test_load_environment_sample_works_for_every_one(installed):
    python, _ = installed
    r = subprocess.run(
        [str(python), "-c", LOAD_ALL, *NAMES],
        capture_output=True, text=True, env=base_env() | OFFLINE, timeout=300,
    )  # fmt: skip
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    for row in rows:  # a clear per-environment report (pytest shows it on failure)
        print(f"{row['env']:22} {'ok' if row['ok'] else 'FAILED'} "
              f"{row.get('type') or row.get('error')} {row.get('rows', '')}")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert [row["env"] for row in rows] == NAMES
    failed = [f"{row['env']}: {row['tb']}" for row in rows if not row["ok"]]
    assert not failed, "\n".join(failed)
    assert all(row["rows"] > 0 for row in rows), rows
