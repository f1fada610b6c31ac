"""The hidden-test run of a task given as files, once the agent is done: its source files, the
pristine tests and configuration and the hidden tests in a fresh folder, pytest run there with
canary tests watching for tampering, and the grading record."""

from __future__ import annotations

import time
import uuid
from typing import Any

from mini_swe_agent_plus.grading import GradingTree, decide, grading_tree
from mini_swe_agent_plus.runner import (
    REPORT_PLUGIN,
    Canaries,
    config_file,
    make_canaries,
    pytest_command,
    repo_imports,
    statuses,
    tampering,
    top_level_modules,
)
from mini_swe_agent_plus.tasks import SWETask
from mini_swe_agent_plus.workspace import REPO
from verifiers import ConfigError, SandboxError
from verifiers.sandbox import Sandbox

# pytest's own environment for the run: no plugins or options from outside, a wide terminal
_PYTEST_ENV = {
    "CI": "1",
    "PYTEST_ADDOPTS": "",
    "PYTEST_PLUGINS": "",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    "COLUMNS": "200",
}


async def run_file_task(box: Sandbox, task: SWETask, test_timeout: float) -> dict[str, Any]:
    """The grading record of `task` from the repository the agent left in `box`."""
    try:
        agent_files = await box.read_dir(REPO)
    except OSError:  # the agent removed the repository: grade what is left (nothing)
        agent_files = {}
    tree = grading_tree(task.repo_files, agent_files, task.hidden_tests)
    # a fresh folder outside the agent's workspace, written now that the agent can no
    # longer act (the sandbox kills every background job when its command ends); nothing
    # above it is read as configuration (explicit -c / --rootdir / --confcutdir)
    root = f"/tmp/vf-grade-{uuid.uuid4().hex}"
    grade_dir, vf_dir = f"{root}/repo", f"{root}/_vf"
    canaries = _canaries(task, tree)
    try:
        await box.write_dir(grade_dir, tree.files)
        await box.write_dir(vf_dir, {"vf_report.py": REPORT_PLUGIN, "pytest.ini": "[pytest]\n"})
    except OSError as e:  # a disk the agent filled: its doing, not the infrastructure's
        return {
            "solved": False,
            "reason": f"could not write the grading tree: {e}",
            "protected_changed": tree.protected_changed,
            "dropped": tree.dropped,
        }
    if task.test_patch:
        await _apply_test_patch(box, task, root, grade_dir)
    await box.write_file(f"{grade_dir}/{canaries.path}", canaries.source)
    own_config = config_file(task.repo_files)
    ini = f"{grade_dir}/{own_config}" if own_config else f"{vf_dir}/pytest.ini"
    report_path = f"{root}/report-{uuid.uuid4().hex}.jsonl"
    command = pytest_command(vf_dir, grade_dir, ini, [*task.test_files, canaries.path])
    t0 = time.perf_counter()
    r = await box.exec(
        command, timeout=test_timeout, cwd=grade_dir, env={**_PYTEST_ENV, "VF_REPORT": report_path}
    )
    log = r.stdout + r.stderr
    if "No module named pytest" in log or "No module named 'pytest'" in log:
        raise SandboxError("pytest is not installed in the sandbox runtime")
    try:
        report = (await box.read_file(report_path)).decode("utf-8", "replace")
    except OSError:
        report = ""  # the run died before the plugin started (or the file was removed)
    observed = {} if r.timed_out else statuses(report)
    canary_set = set(canaries.nodeids)
    verdict = decide(task, {k: v for k, v in observed.items() if k not in canary_set})
    tampered = None if r.timed_out else tampering(canaries, observed, r.exit_code)
    if r.timed_out:
        reason = f"the hidden tests timed out after {test_timeout:g} s"
    elif verdict.solved and tampered:
        reason = f"the test run was tampered with: {tampered}"
    else:
        reason = verdict.reason
    return {
        "solved": verdict.solved and not r.timed_out and tampered is None,
        "tampered": tampered,
        "reason": reason,
        "statuses": verdict.statuses,
        "exit_code": r.exit_code,
        "timed_out": r.timed_out,
        "duration": time.perf_counter() - t0,
        "protected_changed": tree.protected_changed,
        "dropped": tree.dropped,
        "log_tail": log[-4000:],
    }


def _canaries(task: SWETask, tree: GradingTree) -> Canaries:
    """Canary tests for this run, in a file that is none of the repository's or the task's."""
    names = [*task.graded_tests, *(task.expected_output or {})]
    added = [ln[1:].strip() for ln in (task.test_patch or "").splitlines() if ln[:1] == "+"]
    imports = repo_imports([*task.hidden_tests.values(), *added], top_level_modules(tree.files))
    canaries = make_canaries(task.test_files, names, imports)
    while canaries.path in tree.files or canaries.path in task.test_files:
        canaries = make_canaries(task.test_files, names, imports)  # never over a real file
    return canaries


async def _apply_test_patch(box: Sandbox, task: SWETask, root: str, grade_dir: str) -> None:
    await box.write_file(f"{root}/test.patch", task.test_patch or "")
    r = await box.exec(
        ["patch", "-p1", "--batch", "--forward", "-i", f"{root}/test.patch"],
        timeout=60,
        cwd=grade_dir,
    )
    if r.exit_code != 0:
        raise ConfigError(
            f"{task.instance_id}: test_patch does not apply to the repository: "
            f"{(r.stdout + r.stderr)[-500:]}"
        )
