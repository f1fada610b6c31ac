"""Scoring pieces that need no sandbox: which files the agent may not change, the tree the
hidden tests run in, the pytest summary parser and the pass/fail decision."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from mini_swe_agent_plus.tasks import SWETask

# Test and configuration files: the agent's versions are never used for grading (the pristine
# ones are restored, new ones dropped), so editing tests cannot make the hidden tests pass.
CONFIG_NAMES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "sitecustomize.py",
        "usercustomize.py",
    }
)
TEST_DIRS = frozenset({"tests", "test", "testing"})
# Top-level modules that would shadow the test runner itself if the agent created them.
RUNNER_MODULES = frozenset(
    {"pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "pygments", "vf_report"}
)
JUNK_PARTS = frozenset({"__pycache__", ".pytest_cache"})

PASSING = frozenset({"PASSED", "XFAIL"})
STATUSES = ("PASSED", "FAILED", "ERROR", "XFAIL", "XPASS", "SKIPPED")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SUMMARY_HEADER = re.compile(r"^=+ short test summary info =+\s*$", re.MULTILINE)
SUMMARY_LINE = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)\s+(.+)$")


def is_protected(path: str) -> bool:
    """Test files, test directories and test/interpreter configuration."""
    parts = path.split("/")
    name = parts[-1]
    if name in CONFIG_NAMES or name.endswith(".pth"):
        return True
    if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
        return True
    return any(p in TEST_DIRS for p in parts[:-1])


def is_junk(path: str) -> bool:
    parts = path.split("/")
    return any(p in JUNK_PARTS for p in parts) or path.endswith((".pyc", ".pyo"))


def shadows_runner(path: str) -> bool:
    head = path.split("/")[0]
    return posixpath.splitext(head)[0] in RUNNER_MODULES


@dataclass
class GradingTree:
    files: dict[str, bytes]
    protected_changed: list[str] = field(default_factory=list)  # test/config files touched
    dropped: list[str] = field(default_factory=list)  # agent files left out of the tree


def grading_tree(
    original: Mapping[str, str], agent: Mapping[str, bytes], hidden: Mapping[str, str]
) -> GradingTree:
    """The repository the hidden tests run against: the agent's source files, the pristine
    test and config files, and the hidden tests on top."""
    files: dict[str, bytes] = {}
    changed: list[str] = []
    dropped: list[str] = []
    for path, content in agent.items():
        if is_junk(path):
            continue
        if is_protected(path):
            if original.get(path, None) is None or original[path].encode() != content:
                changed.append(path)
            continue
        if path not in original and shadows_runner(path):
            dropped.append(path)
            continue
        files[path] = content
    for path, text in original.items():
        if is_protected(path):
            files[path] = text.encode()
            if path not in agent:
                changed.append(path)  # deleted by the agent; restored
    for path, text in hidden.items():
        files[path] = text.encode()
    return GradingTree(files, sorted(set(changed)), sorted(dropped))


def parse_pytest_summary(log: str) -> dict[str, str]:
    """``{node id: status}`` from the ``short test summary info`` section of ``pytest -rA``.
    ANSI colours are stripped and `` - reason`` suffixes dropped; no section -> ``{}``."""
    text = ANSI.sub("", log)
    headers = list(SUMMARY_HEADER.finditer(text))
    if not headers:
        return {}
    results: dict[str, str] = {}
    for line in text[headers[-1].end() :].splitlines():
        line = line.rstrip()
        if line.startswith("="):
            break
        m = SUMMARY_LINE.match(line)
        if m is None:
            continue
        status, rest = m.groups()
        if status == "SKIPPED":  # "SKIPPED [1] path:line: reason" names no test id
            if "::" not in rest.split(" ", 1)[0]:
                continue
        name = rest.split(" - ", 1)[0].strip()
        results[name] = status
    return results


def _short(nodeid: str) -> str | None:
    head, sep, tail = nodeid.partition("::")
    return tail if sep and head.endswith(".py") else None


@dataclass
class Verdict:
    solved: bool
    statuses: dict[str, str | None]  # graded test -> observed status (None: not run)
    reason: str


def decide(task: SWETask, results: Mapping[str, str]) -> Verdict:
    """SWE-bench: every FAIL_TO_PASS and PASS_TO_PASS test passes. R2E-Gym: every test in
    ``expected_output_json`` has exactly its expected status, and no test is missing or extra."""
    by_short: dict[str, str] = {}
    for nodeid, status in results.items():
        short = _short(nodeid)
        if short is not None:
            by_short.setdefault(short, status)

    def lookup(name: str) -> str | None:
        return results.get(name) or by_short.get(name)

    if task.expected_output is not None:
        statuses = {name: lookup(name) for name in task.expected_output}
        wrong = [n for n, want in task.expected_output.items() if statuses[n] != want]
        if wrong:
            return Verdict(False, statuses, f"{len(wrong)} test(s) differ, e.g. {wrong[0]!r}")
        if len(results) != len(task.expected_output):
            return Verdict(
                False,
                statuses,
                f"{len(results)} tests ran, {len(task.expected_output)} expected",
            )
        return Verdict(True, statuses, "all tests match the expected output")
    statuses = {name: lookup(name) for name in task.graded_tests}
    failing = [n for n, s in statuses.items() if s not in PASSING]
    if failing:
        return Verdict(
            False, statuses, f"{len(failing)} graded test(s) not passing, e.g. {failing[0]!r}"
        )
    return Verdict(True, statuses, "all FAIL_TO_PASS and PASS_TO_PASS tests pass")


def truncate_middle(text: str, limit: int) -> str:
    """Head and tail of ``text`` (``limit // 2`` characters each) with the elided count."""
    if limit <= 0 or len(text) <= limit:
        return text
    half = limit // 2
    elided = len(text) - 2 * half
    return (
        f"{text[:half]}\n<elided_chars>\n{elided} characters elided\n</elided_chars>\n"
        f"{text[-half:]}"
    )
