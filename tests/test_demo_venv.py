"""`make demo` keeps to a virtualenv of its own (issue 27: rerunning it synced the project's
`.venv`, uninstalling the environments `prime eval` had put there)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from e2e_kit import base_env, uv

ROOT = Path(__file__).resolve().parents[1]


def _site_packages(venv: Path) -> Path:
    (site,) = venv.glob("lib/python*/site-packages")
    return site


def _add_reader_package(venv: Path) -> Path:
    """A package as an installer leaves it (METADATA, RECORD): what `uv sync` prunes."""
    site = _site_packages(venv)
    (site / "reader_pkg").mkdir()
    (site / "reader_pkg" / "__init__.py").write_text("")
    info = site / "reader_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: reader-pkg\nVersion: 1.0\n")
    (info / "INSTALLER").write_text("uv\n")
    (info / "RECORD").write_text(
        "reader_pkg/__init__.py,,\nreader_pkg-1.0.dist-info/METADATA,,\n"
        "reader_pkg-1.0.dist-info/INSTALLER,,\nreader_pkg-1.0.dist-info/RECORD,,\n"
    )
    return info


def test_make_demo_does_not_sync_the_project():
    assert shutil.which("make"), "make is part of the README's commands"
    r = subprocess.run(["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert "scripts/demo.py" in r.stdout
    assert "sync" not in r.stdout, r.stdout


def test_demo_syncs_its_own_venv_and_leaves_the_projects(tmp_path):
    """The project's environment is pointed at a scratch venv holding a reader's package (so
    a regression prunes that, not the shared .venv); the demo must sync DEMO_VENV instead."""
    project_venv, demo_venv = tmp_path / "project-venv", tmp_path / "demo-venv"
    subprocess.run([uv(), "venv", "-q", str(project_venv)], check=True, env=base_env())
    reader_pkg = _add_reader_package(project_venv)
    env = {
        **{k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"},
        "UV_PROJECT_ENVIRONMENT": str(project_venv),
        "DEMO_VENV": str(demo_venv),
    }
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "demo.py"), "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert "usage:" in r.stdout  # the script ran again, from its own venv
    assert f"the demo's own virtualenv, {demo_venv}" in r.stdout
    for tool in ("prime-hub", "prime", "python"):
        assert (demo_venv / "bin" / tool).exists(), tool
    assert reader_pkg.is_dir() and (_site_packages(project_venv) / "reader_pkg").is_dir()
