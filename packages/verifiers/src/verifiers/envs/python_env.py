"""PythonEnv: a SandboxEnv whose tool is a persistent Python REPL (state kept between calls).

The REPL is a long-lived interpreter inside the rollout's sandbox, served by the sandbox agent:
each call `exec`s the cell and shows a trailing expression as `Out[n]: repr`, a failing cell
shows its traceback (upstream's format). A cell that times out or kills the interpreter resets
the state, and the tool says so. Extra packages (`pip_install_packages`) are built once into a
cached runtime, not pip-installed in every sandbox."""

from __future__ import annotations

import time
from typing import Any, TypedDict

from verifiers.envs.sandbox_env import SandboxEnv, SandboxState
from verifiers.state import State
from verifiers.types import RolloutOutput

_TRACEBACK = "Traceback (most recent call last):"


class PythonWorkerState(TypedDict):
    """`state["python_state"]` (upstream 0.1.9+)."""

    ready: bool
    execution_count: int
    ready_wait_time: float


class PythonEnv(SandboxEnv):
    def __init__(
        self,
        pip_install_packages: str = "numpy sympy scipy",
        max_startup_wait_seconds: float = 30,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("runtime_packages", tuple(pip_install_packages.split()))
        kwargs.setdefault("sandbox_name", "python-env")
        super().__init__(**kwargs)
        self.pip_install_packages = pip_install_packages
        self.max_startup_wait_seconds = max_startup_wait_seconds
        self.remove_tool("bash")
        self.add_tool(self.python, args_from_state=["sandbox_id", "sandbox_state", "python_state"])

    async def setup_state(self, state: State, **kwargs: Any) -> State:
        state = await super().setup_state(state, **kwargs) or state
        state["python_state"] = PythonWorkerState(
            ready=False, execution_count=0, ready_wait_time=0.0
        )
        return state

    async def python(
        self,
        code: str,
        sandbox_id: str,
        sandbox_state: SandboxState | None = None,
        python_state: PythonWorkerState | None = None,
    ) -> str:
        """Execute `code` inside persistent Python REPL."""
        # (the tool's description as the model sees it: upstream's, word for word; variables,
        # imports and functions stay defined between calls, a final expression shows as Out[n])
        t0 = time.perf_counter()
        box = await self.sandbox_leases.wait(sandbox_id, sandbox_state)
        if python_state is not None and not python_state["ready"]:
            python_state["ready"] = True  # the interpreter starts with the sandbox's agent
            python_state["ready_wait_time"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        res = await box.python(code, timeout=self.timeout_per_command_seconds)
        if sandbox_state is not None:
            sandbox_state.setdefault("command_execution_times", []).append(time.perf_counter() - t1)
        count = res.get("execution_count") or 0
        if python_state is not None:
            python_state["execution_count"] = count
        return format_cell(res, count)

    def metric_names(self) -> list[str]:
        return [*super().metric_names(), "python_ready_wait_time"]

    def state_to_output(
        self, state: State, state_columns: list[str] | None = None
    ) -> RolloutOutput:
        out = super().state_to_output(state, state_columns)
        ps = state.get("python_state") or {}
        out["metrics"] = {
            **out["metrics"],
            "python_ready_wait_time": float(ps.get("ready_wait_time", 0.0)),
        }
        return out


def format_cell(res: dict[str, Any], count: int) -> str:
    """Upstream's layout: stdout, then `stderr:` and the cell's stderr, then the traceback of
    a failing cell (or `Out[n]: repr` of a trailing expression), else `(no output)`."""
    stderr = (res.get("stderr") or "").rstrip()
    error = ""
    if res.get("status") == "error":
        # the agent writes the traceback (or why the REPL was reset) after the cell's stderr
        cut = stderr.rfind(_TRACEBACK)
        if cut < 0 and res.get("result") is None:
            cut = 0 if not res.get("execution_count") else -1
        if cut >= 0:
            stderr, error = stderr[:cut].rstrip(), stderr[cut:]
    parts: list[str] = []
    stdout = (res.get("stdout") or "").rstrip()
    if stdout:
        parts.append(stdout)
    if stderr:
        parts.append(f"stderr:\n{stderr}")
    if error:
        parts.append(error)
    elif res.get("status") == "ok" and res.get("result") is not None:
        parts.append(f"Out[{count}]: {res['result']}")
    if res.get("truncated"):
        parts.append("[output truncated]")
    return "\n".join(parts) or "(no output)"
