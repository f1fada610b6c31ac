"""How the hidden tests are run so that the agent's code cannot decide its own verdict.

The agent's source is imported by the tests, so it runs inside the pytest process; anything
that process prints or writes (its summary, a junit file, its exit status) can be forged by
that code. The verdict is therefore built on this side (the trusted parent, which never
imports the agent's code) from three things:

1. **Fixed configuration**: pytest is started with an explicit ini (`-c`: the repository's
   pristine one, else our own empty one), `--rootdir`/`--confcutdir` on a fresh grading folder
   outside the agent's workspace, `-p no:cacheprovider`, `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`,
   `--import-mode=append` and `python -I`: no file the agent left anywhere is read as
   configuration, no plugin of its choosing loads, and the repository sits on `sys.path`
   *after* the standard library, so `pdb.py`, `difflib.py`, `unittest/` ... cannot replace
   modules pytest imports later.
2. **Per-test outcomes from a reporting plugin** written by us and imported before any
   repository code (`vf_report`), not parsed from the text summary.
3. **Canary tests**: tests that must fail (names made of the task's own test-name words, in a
   fresh file next to the hidden tests) run in the same session. Anything that turns failures into passes without
   telling the canaries apart (patched reports, hooks, an always-passing `pytest_runtest_call`,
   swallowed `AssertionError`s, `os._exit(0)`, a rewritten report file, a forged exit status)
   also passes a canary or breaks the session's bookkeeping, and the rollout scores 0.

The canaries import what the hidden tests import from the repository, so "flip only the tests
whose module uses my package" flips them too. What remains possible, stated plainly: code
written against this grader that reads each collected test's source, or traces which tests
call it, to spare the canaries. It would have to be aimed at this exact
mechanism (random names, bodies that look like ordinary asserts), not a generic trick."""

from __future__ import annotations

import ast
import json
import re
import secrets
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# Loaded with `-p vf_report` from the grading folder's `_vf/`, which is first on sys.path and
# imported before the repository is on it, so a repository `vf_report.py` cannot stand in.
REPORT_PLUGIN = '''\
"""Per-test outcomes for the grader (one JSON object per line)."""
import json, os

_out = open(os.environ["VF_REPORT"], "w", buffering=1, encoding="utf-8")


def _write(report, when):
    _out.write(json.dumps({"nodeid": report.nodeid, "when": when, "outcome": report.outcome,
                           "xfail": hasattr(report, "wasxfail")}) + "\\n")


def pytest_runtest_logreport(report):
    _write(report, report.when)


def pytest_collectreport(report):
    if report.failed:
        _write(report, "collect")
'''

# Python that starts pytest: the plugin and pytest first, then the repository after the
# standard library (before site-packages, so the repository wins over an installed copy of
# itself but never over the stdlib).
RUNNER = (
    "import sys; sys.path.insert(0, sys.argv[1]); import pytest, vf_report; "
    "i = next((k for k, p in enumerate(sys.path) if p.endswith(('site-packages', "
    "'dist-packages'))), len(sys.path)); sys.path.insert(i, sys.argv[2]); "
    "sys.exit(pytest.main(sys.argv[3:]))"
)

# The repository's own pytest configuration, in pytest's order of precedence; a file counts
# only when it holds a pytest section (as pytest decides).
CONFIG_FILES = (
    ("pytest.ini", ""),
    (".pytest.ini", ""),
    ("pyproject.toml", "[tool.pytest"),
    ("tox.ini", "[pytest]"),
    ("setup.cfg", "[tool:pytest]"),
)
EXIT_TESTS_FAILED = 1  # pytest's exit status when some test failed (the canaries always do)


def config_file(original: Mapping[str, str]) -> str | None:
    """The pristine root configuration file pytest should use, if the repository has one."""
    for name, marker in CONFIG_FILES:
        text = original.get(name)
        if text is not None and (not marker or marker in text):
            return name
    return None


@dataclass
class Canaries:
    path: str  # relative to the repository root
    source: str
    nodeids: list[str]


GENERIC_WORDS = (
    "value", "empty", "single", "order", "limit", "parse", "format", "default", "edge", "case",
    "large", "small", "none", "zero", "negative", "unicode", "round", "trip", "keeps", "returns",
)  # fmt: skip
_NAME_WORD = re.compile(r"[a-z][a-z0-9]+")


def _name(words: list[str], taken: set[str]) -> str:
    """A test-like name (`clamp_large_returns`) made of the task's own words."""
    while True:
        picked = [secrets.choice(words) for _ in range(2 + secrets.randbelow(3))]
        name = "_".join(picked)
        if name not in taken:
            taken.add(name)
            return name


def _false_assert() -> str:
    a = secrets.randbelow(1000)
    b = a + 1 + secrets.randbelow(50)
    return secrets.choice(
        [
            f"assert {a} + 1 == {a}",
            f"assert sorted([{b}, {a}]) == [{b}, {a}]",
            f"assert str({a}) == {str(b)!r}",
            f"assert len({'x' * (a % 7)!r}) == {a % 7 + 1}",
            f"assert {{{a}}} == {{{b}}}",
        ]
    )


def repo_imports(sources: Iterable[str], top_level: set[str]) -> list[str]:
    """The hidden tests' absolute imports of the repository's own modules (so a canary module
    references the agent's code exactly as the hidden test modules do). Each source may be a
    whole file or a single line (from a test patch); unparsable ones are skipped."""
    found: dict[str, None] = {}
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            if any(n.split(".")[0] in top_level for n in names):
                found[ast.unparse(node)] = None
    return list(found)


def top_level_modules(paths: Iterable[str]) -> set[str]:
    """Importable top-level names of a tree: `pkg/...` folders and `mod.py` files."""
    out = set()
    for path in paths:
        head, sep, _ = path.partition("/")
        name = head if sep else (head[:-3] if head.endswith(".py") else "")
        if name.isidentifier():
            out.add(name)
    return out


def make_canaries(
    test_files: Iterable[str],
    test_names: Iterable[str] = (),
    imports: Iterable[str] = (),
    count: int = 2,
) -> Canaries:
    """A test file of `count` failing tests next to the first graded file, its file and test
    names built from the words of the task's own test names, importing what the hidden tests
    import from the repository, so that nothing but reading their bodies tells them apart."""
    files = list(test_files)
    words = sorted(
        {w for n in test_names for w in _NAME_WORD.findall(n.rpartition("::")[2]) if w != "test"}
    )
    words = words + list(GENERIC_WORDS) if len(words) < 6 else words
    taken = {n.rpartition("::")[2] for n in test_names}
    folder = files[0].rpartition("/")[0] if files else ""
    stem = f"test_{_name(words, taken)}.py"
    path = f"{folder}/{stem}" if folder else stem
    names = [f"test_{_name(words, taken)}" for _ in range(count)]
    head = "".join(f"try:\n    {line}\nexcept Exception:\n    pass\n" for line in imports)
    body = "\n\n".join(f"def {name}():\n    {_false_assert()}\n" for name in names)
    source = f"{head}\n\n{body}" if head else body
    return Canaries(path, source, [f"{path}::{name}" for name in names])


def pytest_command(vf_dir: str, tree: str, ini: str, files: Iterable[str]) -> str:
    return " ".join(
        [
            "python -I -B -c", shlex.quote(RUNNER), shlex.quote(vf_dir), shlex.quote(tree),
            "-c", shlex.quote(ini), "--rootdir", shlex.quote(tree),
            "--confcutdir", shlex.quote(tree), "-p no:cacheprovider -p no:stepwise -p vf_report",
            # after the ini's addopts: a repository's `-x` must not stop before the canaries
            "--maxfail=0",
            "--import-mode=append -rA --color=no", shlex.join(list(files)), "2>&1",
        ]
    )  # fmt: skip


def statuses(report: str) -> dict[str, str]:
    """``{node id: status}`` (pytest's -rA words) from the plugin's records; a test whose call
    never reported (the process died) is absent, i.e. not run."""
    phases: dict[str, dict[str, dict]] = {}
    for line in report.splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn last line
        if isinstance(rec, dict) and isinstance(rec.get("nodeid"), str):
            phases.setdefault(rec["nodeid"], {})[str(rec.get("when"))] = rec
    out: dict[str, str] = {}
    for nodeid, p in phases.items():
        setup, call, teardown = p.get("setup"), p.get("call"), p.get("teardown")
        if "collect" in p or (setup and setup.get("outcome") == "failed"):
            status = "ERROR"
        elif setup and setup.get("outcome") == "skipped":
            status = "XFAIL" if setup.get("xfail") else "SKIPPED"
        elif call is None:
            continue
        elif call.get("outcome") == "failed":
            status = "FAILED"
        elif call.get("outcome") == "skipped":
            status = "XFAIL" if call.get("xfail") else "SKIPPED"
        else:
            status = "XPASS" if call.get("xfail") else "PASSED"
        if status == "PASSED" and teardown and teardown.get("outcome") == "failed":
            status = "ERROR"
        out[nodeid] = status
    return out


def tampering(canaries: Canaries, results: Mapping[str, str], exit_code: int) -> str | None:
    """Why the run cannot be trusted, or None: every canary failed and pytest said so."""
    for nodeid in canaries.nodeids:
        if results.get(nodeid) != "FAILED":
            return f"canary test {nodeid!r} reported {results.get(nodeid)}, but it must fail"
    if exit_code != EXIT_TESTS_FAILED:
        return f"pytest exited {exit_code} although tests failed"
    return None
