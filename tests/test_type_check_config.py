"""`make test` type-checks the hub and the CLI strictly (issue 29 item 2). mypy takes `strict` in
its global section only, so the root pyproject spells --strict out flag by flag for
`prime_hub` and `prime_cli`; these check that the spelling is --strict's whole list (as the
installed mypy states it) and that mypy, run with that configuration, holds modules of both
packages to it."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
STRICT_PACKAGES = ("prime_hub", "prime_cli")


def _mypy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", *args], cwd=cwd, capture_output=True, text=True
    )


def _strict_override() -> dict:
    found = [o for o in CONFIG["overrides"] if "prime_hub.*" in o["module"]]
    assert len(found) == 1, "one override holds the strict packages"
    return found[0]


def test_the_override_is_all_of_strict():
    """Each flag `mypy --help` lists under --strict is set in the override (or, for the
    global-only ones, in [tool.mypy]), so a mypy that adds a flag to --strict fails here."""
    help_text = _mypy("--help").stdout
    block = help_text.split("--strict ", 1)[1].split("\n  --", 1)[0]
    flags = re.findall(r"--([a-z-]+)", re.sub(r"-\n\s+", "-", block))
    assert "disallow-untyped-defs" in flags, block  # the parse found the list
    override = _strict_override()
    assert set(override["module"]) == {f"{p}{s}" for p in STRICT_PACKAGES for s in ("", ".*")}
    for flag in flags:
        key = flag.replace("-", "_")
        if key.startswith("no_"):  # --no-implicit-reexport
            key, want = key[3:], False
        else:
            want = True
        where = CONFIG if key == "warn_redundant_casts" else override
        assert where.get(key) is want, f"--{flag} is not set for {STRICT_PACKAGES}"


def _probe(tmp_path: Path, packages: tuple[str, ...], body: str) -> str:
    """mypy's output, run with the root configuration over a module `probe.py` holding `body`
    in a package of each name (it must find errors)."""
    for package in packages:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        (tmp_path / package / "probe.py").write_text(body)
    config = ["--config-file", str(ROOT / "pyproject.toml")]
    probes = [f"{package}/probe.py" for package in packages]
    result = _mypy(*config, "--cache-dir", str(tmp_path / "cache"), *probes, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    return result.stdout


def test_mypy_holds_both_packages_to_strict(tmp_path):
    """mypy run with the root configuration rejects what --strict rejects (an untyped
    definition, an Any returned as a typed value) in a module of each strict package."""
    out = _probe(
        tmp_path,
        STRICT_PACKAGES,
        "import json\n\n\n"
        "def untyped(x):\n    return x\n\n\n"
        "def parsed(s: str) -> dict[str, int]:\n    return json.loads(s)\n",
    )
    for package in STRICT_PACKAGES:
        assert f"{package}/probe.py:4: error: Function is missing a type annotation" in out, out
        assert f"{package}/probe.py:9: error: Returning Any from function" in out


def test_make_test_runs_the_type_check():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^test:.*\btypecheck\b", makefile, re.M)
    assert re.search(r"^typecheck:.*\n\t.*\bmypy$", makefile, re.M)
    packages = {
        "packages/hub-server/src/prime_hub",
        "packages/cli/src/prime_cli",
        "packages/viewer/src/verifiers_viewer",
        "packages/verifiers/src/verifiers",
    }
    shipped = {str(p.parent.relative_to(ROOT)) for p in ROOT.glob("environments/*/*/__init__.py")}
    assert shipped, "the environments are found"
    assert set(CONFIG["files"]) == packages | shipped


def test_mypy_holds_the_sdk_and_environments_to_typed_definitions(tmp_path):
    """The SDK and an environment module may not define untyped functions (the bar under
    which they join `files`), while a typed one passes."""
    sdk_bar = [o for o in CONFIG["overrides"] if "verifiers.*" in o["module"]]
    assert len(sdk_bar) == 1 and "i3_math.*" in sdk_bar[0]["module"]
    packages = ("verifiers", "i3_math")
    out = _probe(
        tmp_path,
        packages,
        "def untyped(x):\n    return x\n\n\ndef typed(x: int) -> int:\n    return x\n",
    )
    for package in packages:
        assert f"{package}/probe.py:1: error: Function is missing a type annotation" in out, out
    assert out.count("error:") == 2, out
