"""Image tasks: the repository is a per-instance container image (R2E-Gym, SWE-bench style)
with the code at /testbed. The sandbox is created from the image (`verifiers.sandbox`'s image
provider) and set up as upstream does; the image's own hidden tests are taken out of the
sandbox while the agent works and put back, pristine, to be run by the image's own runner
once it has submitted.

* R2E-Gym (`expected_output_json`): the repository's venv is linked into root's home
  (`~/.venv`, `~/.local/bin`), bytecode is removed from /testbed and /r2e_tests, and
  `/r2e_tests` plus `/testbed/run_tests.sh` are withheld. Grading: `ln -s /r2e_tests
  r2e_tests && bash run_tests.sh` in /testbed, its pytest summary compared with the expected
  statuses (same tests, same status each).
* SWE-bench (`FAIL_TO_PASS` / `PASS_TO_PASS`): `/run_tests.sh` is made executable and
  withheld, the conda env is linked to `~/.venv`. Grading: `/run_tests.sh`, every
  FAIL_TO_PASS and PASS_TO_PASS test PASSED in its pytest summary.

Upstream also installs `chardet` for its in-sandbox editing script; the editing tool here runs
on the host, and the sandbox has no network, so that step is left out."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from mini_swe_agent_plus.grading import CONFIG_NAMES, RUNNER_MODULES, decide, parse_pytest_summary
from mini_swe_agent_plus.tasks import SWETask
from verifiers.errors import SandboxError
from verifiers.sandbox.base import RuntimeSpec, Sandbox, SandboxSpec

IMAGE_REPO = "/testbed"
# upstream's environment prefix for every command (ENV_VARS), and root's home as HOME
IMAGE_ENV = {
    "PATH": "/testbed/.venv/bin:/root/.local/bin:/root/.cargo/bin:/usr/local/sbin:"
    "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "PAGER": "cat",
    "MANPAGER": "cat",
    "LESS": "-R",
    "PIP_PROGRESS_BAR": "off",
    "TQDM_DISABLE": "1",
    "HOME": "/root",
}
R2E_SETUP = r"""set -e
mkdir -p /root/.local/bin
ln -sfn /testbed/.venv /root/.venv
ln -sf /testbed/.venv/bin/python /root/.local/bin/python
ln -sf /testbed/.venv/bin/python /root/.local/bin/python3
if [ -d /testbed/.venv/bin ]; then
  find /testbed/.venv/bin -type f -executable -exec ln -sf {} /root/.local/bin/ \;
fi
find /testbed /r2e_tests -name '*.pyc' -delete
find /testbed /r2e_tests -name '__pycache__' -prune -exec rm -rf {} +
"""
SWEBENCH_SETUP = r"""set -e
chmod +x /run_tests.sh
mkdir -p /root
if [ -d /opt/miniconda3/envs/testbed ]; then ln -sfn /opt/miniconda3/envs/testbed /root/.venv; fi
"""
SETUP_TIMEOUT = 600.0
# Files that change how pytest or the interpreter behave (conftest.py, pytest.ini, ...,
# sitecustomize.py, *.pth) anywhere in the image, and modules in /testbed that would stand in
# for the test runner (`python -m pytest` runs with /testbed on sys.path): recorded after the
# setup, and at grading restored (changed or deleted ones) or removed (new ones).
_NAMES = " -o ".join(f"-name '{n}'" for n in [*sorted(CONFIG_NAMES), "*.pth"])
_SHADOWS = " ".join(f"/testbed/{m} /testbed/{m}.py" for m in sorted(RUNNER_MODULES))
GUARD_LIST = (
    f"find / -xdev \\( {_NAMES} \\) ! -type d -print 2>/dev/null; "
    f"ls -d {_SHADOWS} 2>/dev/null; true"
)


def image_spec(base: SandboxSpec, task: SWETask) -> SandboxSpec:
    """The env's sandbox limits, on the task's image, working in /testbed."""
    assert task.docker_image is not None
    return dataclasses.replace(
        base,
        image=task.docker_image,
        workdir=IMAGE_REPO,
        runtime=RuntimeSpec(),  # the image brings its own Python and test runner
        env={**base.env, **IMAGE_ENV},
    )


async def _run(box: Sandbox, script: str, what: str, task: SWETask) -> None:
    r = await box.exec(script, timeout=SETUP_TIMEOUT, cwd=IMAGE_REPO)
    if r.exit_code != 0 or r.timed_out:
        raise SandboxError(
            f"{task.instance_id}: {what} failed in image {task.docker_image} "
            f"(exit {r.exit_code}{', timed out' if r.timed_out else ''}): "
            f"{(r.stdout + r.stderr)[-800:]}"
        )


async def _guarded(box: Sandbox) -> list[str]:
    r = await box.exec(GUARD_LIST, timeout=SETUP_TIMEOUT)
    if r.truncated:
        raise SandboxError("the list of configuration files in the image is too long")
    return sorted({p for p in r.stdout.splitlines() if p.startswith("/")})


async def _record_guarded(box: Sandbox) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for path in await _guarded(box):
        try:
            out[path] = await box.read_file(path)
        except OSError:  # a link to a directory, or a runner-named package: left as it is
            out[path] = None
    return out


async def restore_guarded(box: Sandbox, pristine: dict[str, bytes | None]) -> list[str]:
    """Put the recorded configuration files back as they were and remove new ones; returns
    the paths the agent had changed, deleted or added."""
    touched = [p for p in await _guarded(box) if p not in pristine]
    if touched:
        await box.exec(["rm", "-rf", "--", *touched], timeout=SETUP_TIMEOUT)
    for path, data in pristine.items():
        if data is None:
            continue
        try:
            same = await box.read_file(path) == data
        except OSError:
            same = False
        if not same:
            await box.exec(["rm", "-rf", "--", path], timeout=60)  # (a link or directory now)
            await box.write_file(path, data)
            touched.append(path)
    return sorted(touched)


async def prepare(box: Sandbox, task: SWETask) -> dict[str, Any]:
    """Set the sandbox up as upstream does, record its configuration files and take the
    hidden tests out; returns what grading needs back."""
    withheld = await _prepare(box, task)
    withheld["config"] = await _record_guarded(box)
    return withheld


async def _prepare(box: Sandbox, task: SWETask) -> dict[str, Any]:
    if task.image_kind == "r2e":
        await _run(box, R2E_SETUP, "the R2E-Gym setup", task)
        try:
            tests = await box.read_dir("/r2e_tests")
            runner = await box.read_file(f"{IMAGE_REPO}/run_tests.sh")
        except OSError as e:
            raise SandboxError(
                f"{task.instance_id}: image {task.docker_image} lacks /r2e_tests or "
                f"/testbed/run_tests.sh ({e})"
            ) from e
        await _run(box, "rm -rf /r2e_tests /testbed/r2e_tests", "withholding the tests", task)
        return {"tests": tests, "runner": runner}
    await _run(box, SWEBENCH_SETUP, "the SWE-bench setup", task)
    try:
        runner = await box.read_file("/run_tests.sh")
    except OSError as e:
        raise SandboxError(
            f"{task.instance_id}: image {task.docker_image} lacks /run_tests.sh ({e})"
        ) from e
    await _run(box, "rm -f /run_tests.sh", "withholding the test runner", task)
    return {"runner": runner}


async def grade(
    box: Sandbox, task: SWETask, withheld: dict[str, Any], test_timeout: float
) -> dict[str, Any]:
    """Restore the configuration, put the pristine tests back, run the image's runner, and
    decide from its summary."""
    changed = await restore_guarded(box, withheld["config"])
    if task.image_kind == "r2e":
        await _run(box, "rm -rf /r2e_tests /testbed/r2e_tests", "clearing the test paths", task)
        await box.write_dir("/r2e_tests", withheld["tests"])
        await box.write_file(f"{IMAGE_REPO}/run_tests.sh", withheld["runner"], mode=0o755)
        command = "ln -s /r2e_tests r2e_tests && /bin/bash run_tests.sh 2>&1"
    else:
        await box.write_file("/run_tests.sh", withheld["runner"], mode=0o755)
        command = "/run_tests.sh 2>&1"
    t0 = time.perf_counter()
    r = await box.exec(command, timeout=test_timeout, cwd=IMAGE_REPO)
    log = r.stdout + r.stderr
    results = {} if r.timed_out else parse_pytest_summary(log)
    verdict = decide(task, results)
    if r.timed_out:
        reason = f"the hidden tests timed out after {test_timeout:g} s"
    elif r.exit_code > 1:  # upstream: a run that did not finish normally scores 0
        reason = f"the test run ended with exit code {r.exit_code}"
    elif not results:
        reason = "the test run printed no pytest summary"
    else:
        reason = verdict.reason
    return {
        "solved": verdict.solved and not r.timed_out and r.exit_code <= 1,
        "reason": reason,
        "statuses": verdict.statuses,
        "exit_code": r.exit_code,
        "timed_out": r.timed_out,
        "duration": time.perf_counter() - t0,
        "protected_changed": changed,
        "image": task.docker_image,
        "image_digest": getattr(getattr(box, "image", None), "digest", None),
        "log_tail": log[-4000:],
    }
