"""PythonEnv: a SandboxEnv whose tool is a persistent Python REPL (state kept between calls).

The REPL is a long-lived interpreter inside the rollout's sandbox, served by the sandbox agent:
each call `exec`s the cell and shows a trailing expression as `Out[n]: repr`. A cell that times
out or kills the interpreter resets the state, and the tool says so. Extra packages
(`pip_install_packages`) are built once into a cached runtime, not installed per rollout."""

from __future__ import annotations

from typing import Any

from verifiers.envs.sandbox_env import SandboxEnv
from verifiers.state import State
from verifiers.types import Messages


class PythonEnv(SandboxEnv):
    def __init__(
        self,
        pip_install_packages: str = "numpy sympy scipy",
        max_startup_wait_seconds: float = 30,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("runtime_packages", tuple(pip_install_packages.split()))
        super().__init__(**kwargs)
        self.pip_install_packages = pip_install_packages
        self.max_startup_wait_seconds = max_startup_wait_seconds
        self.remove_tool("bash")
        self.add_tool(self.python, args_to_skip=["sandbox_id", "sandbox_state"])

    def update_tool_args(
        self,
        tool_name: str,
        tool_args: dict[str, Any],
        messages: Messages,
        state: State,
        **kwargs: Any,
    ) -> dict[str, Any]:
        if tool_name == "python":
            tool_name = "bash"  # same hidden arguments
        return super().update_tool_args(tool_name, tool_args, messages, state, **kwargs)

    async def python(self, code: str, sandbox_id: str, sandbox_state: dict[str, Any]) -> str:
        """Run Python code in a persistent interpreter; variables, imports and functions stay
        defined between calls. The value of a final expression is shown as Out[n].

        Args:
            code: The Python code to run.
        """
        box = await self._sandbox(sandbox_id, sandbox_state)
        res = await box.python(code, timeout=self.timeout_per_command_seconds)
        sandbox_state["command_execution_times"].append(0.0)
        parts = []
        if res.get("stdout"):
            parts.append(res["stdout"].rstrip("\n"))
        if res.get("stderr"):
            parts.append("stderr:\n" + res["stderr"].rstrip("\n"))
        if res.get("result") is not None:
            parts.append(f"Out[{res.get('execution_count', 0)}]: {res['result']}")
        if res.get("truncated"):
            parts.append("[output truncated]")
        return "\n".join(parts) or "(no output)"
