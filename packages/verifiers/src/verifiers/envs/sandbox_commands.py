"""The `bash` tool's command plumbing: run a command in a rollout's sandbox, record its time in
`state["sandbox_state"]`, and show the result as upstream's SandboxEnv does."""

from __future__ import annotations

import time
from typing import TypedDict

from verifiers.envs.sandbox_client import in_dir
from verifiers.sandbox.base import ExecResult, Sandbox


class SandboxState(TypedDict):
    """`state["sandbox_state"]` (upstream 0.1.9+): readiness and command timings."""

    ready: bool
    ready_wait_time: float
    command_execution_times: list[float]


async def run_bash(
    box: Sandbox,
    command: str,
    working_dir: str | None,
    timeout: float,  # noqa: ASYNC109
    sandbox_state: SandboxState | None,
) -> str:
    """Run `command` (from `working_dir`) and return what the model sees."""
    times: list[float] = (
        sandbox_state.setdefault("command_execution_times", []) if sandbox_state is not None else []
    )
    t0 = time.perf_counter()
    result = await box.exec(in_dir(command, working_dir), timeout=timeout)
    if result.timed_out:
        times.append(float(timeout))
        return f"Error: Command timed out after {timeout:g}s"
    times.append(time.perf_counter() - t0)
    return bash_output(result)


def bash_output(result: ExecResult) -> str:
    """As upstream: each stream stripped, stderr under a "stderr:" header."""
    output = result.stdout.strip()
    stderr = result.stderr.strip()
    if stderr:
        output = f"{output}\nstderr:\n{stderr}" if output else f"stderr:\n{stderr}"
    if result.truncated:
        output += "\n[output truncated]"
    return output or "(no output)"
