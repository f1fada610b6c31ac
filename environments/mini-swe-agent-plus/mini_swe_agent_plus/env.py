"""The environment: an agent fixes a bug in a repository inside a sandbox with two tools, and
the hidden tests decide the reward after it submits."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from datasets import Dataset

import verifiers as vf
from mini_swe_agent_plus import images
from mini_swe_agent_plus.grading import truncate_middle
from mini_swe_agent_plus.hidden_tests import run_file_task
from mini_swe_agent_plus.prompts import FORMAT_ERROR, SYSTEM_PROMPT, TIMEOUT_MESSAGE, USER_PROMPT
from mini_swe_agent_plus.scoring import HiddenTestGrades
from mini_swe_agent_plus.tasks import SWETask
from mini_swe_agent_plus.tools import first_words, observation, replace_once, sandbox_path
from mini_swe_agent_plus.workspace import REPO, RepoWorkspaces, cancel_jobs
from verifiers import ConfigError, Messages, State
from verifiers.sandbox import SandboxSpec

REPO_DIR = "/workspace/repo"  # where the model is told the repository is (bwrap layout)
SENTINEL = "MINI_SWE_AGENT_FINAL_OUTPUT"
MAX_TURNS_LIMIT = 200
DEFAULT_BLOCKED = ("git", "ipython", "jupyter", "nohup")


class MiniSweAgentPlusEnv(vf.SandboxEnv):
    """Repository bug fixing with `execute_bash` and `edit_via_str_replace` in a sandbox.

    Image tasks are graded in a fresh sandbox from the image (`fresh_grading_sandbox`; False
    runs the tests in the agent's own sandbox, as upstream, for comparison).

    Reward `solved` (weight 1): 1.0 when the agent submitted and every graded hidden test
    passes (SWE-bench FAIL_TO_PASS + PASS_TO_PASS, or an exact R2E-Gym expected output), else
    0.0. Zero-weight metrics: `did_submit`, `command_timeout_count`, `format_error_count`,
    `protected_files_changed`, `graded_tests_passing`.

    Its parts: `workspaces` puts each rollout's repository in its sandbox (`RepoWorkspaces`);
    `grades` keeps the grading records the rubric reads (`HiddenTestGrades`); the tools' text
    handling is in `mini_swe_agent_plus.tools`, the file tasks' test run in `hidden_tests`.
    """

    fresh_grading_sandbox = True

    def __init__(
        self,
        tasks: Sequence[SWETask],
        max_turns: int = MAX_TURNS_LIMIT,
        command_timeout: float = 90.0,
        test_timeout: float = 300.0,
        max_output_chars: int = 10_000,
        max_command_timeouts: int = 5,
        blocked_commands: Sequence[str] = DEFAULT_BLOCKED,
        runtime_packages: Sequence[str] = ("pytest>=8,<10",),
        environment_vars: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(max_turns, int) or not 1 <= max_turns <= MAX_TURNS_LIMIT:
            raise ConfigError(
                f"max_turns must be between 1 and {MAX_TURNS_LIMIT}, got {max_turns!r}"
            )
        if command_timeout <= 0 or test_timeout <= 0:
            raise ConfigError("command_timeout and test_timeout must be positive")
        self.tasks = {t.instance_id: t for t in tasks}
        self.command_timeout = float(command_timeout)
        self.test_timeout = float(test_timeout)
        self.max_output_chars = int(max_output_chars)
        self.max_command_timeouts = int(max_command_timeouts)
        self.blocked_commands = tuple(blocked_commands)
        self.grades = HiddenTestGrades(self.run_hidden_tests)
        if any(t.docker_image for t in tasks):
            provider = kwargs.get("provider")
            if provider is None:  # VF_SANDBOX_PROVIDER's (e.g. ray), else the image tier
                from verifiers import default_provider

                kwargs["provider"] = default_provider(images=True)
            elif not getattr(provider, "supports_images", False):
                raise ConfigError(
                    f"some tasks name a docker_image, which {type(provider).__name__} cannot "
                    "run (use verifiers.sandbox.ImageProvider, or give those repositories as files)"
                )
        env_vars = {
            "PAGER": "cat",
            "MANPAGER": "cat",
            "GIT_PAGER": "cat",
            "PIP_PROGRESS_BAR": "off",
            "TQDM_DISABLE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            **(environment_vars or {}),
        }
        rubric = self.grades.rubric()
        rows = [
            {
                "question": self.user_prompt(t),
                "answer": "",
                "info": {
                    "instance_id": t.instance_id,
                    "repo_name": t.repo_name,
                    **({"docker_image": t.docker_image} if t.docker_image else {}),
                },
                "task": "mini-swe-agent-plus",
            }
            for t in tasks
        ]
        if not rows:
            raise ConfigError("no tasks")
        # the images are per row (info["docker_image"]); the class-wide classic default
        # (python:3.11-slim) is not one: file rows get the local runtime with its packages
        kwargs.setdefault("ignore_docker_image", True)
        super().__init__(
            dataset=Dataset.from_list(rows),
            system_prompt=SYSTEM_PROMPT,
            rubric=rubric,
            max_turns=max_turns,
            timeout_per_command_seconds=self.command_timeout,
            runtime_packages=tuple(runtime_packages),
            environment_vars=env_vars,
            **kwargs,
        )
        # file rows run on the local runtime: the classic request's default image
        # (python:3.11-slim) must not be pulled by an image-capable provider
        self.spec = dataclasses.replace(self.spec, image=None)
        self.workspaces = RepoWorkspaces(self.sandbox_leases.wait, self.get_sandbox)
        self.remove_tool("bash")
        self.add_tool(self.execute_bash, args_from_state=["state"])
        self.add_tool(self.edit_via_str_replace, args_from_state=["state"])

    # -- prompts ----------------------------------------------------------------------------
    def user_prompt(self, task: SWETask) -> str:
        if self.blocked_commands:
            blocked_rule = (
                "These programs are not available: " + ", ".join(self.blocked_commands) + "."
            )
        else:
            blocked_rule = "Any non-interactive program may be used."
        return USER_PROMPT.format(
            problem_statement=task.problem_statement.strip(),
            repo_dir=images.IMAGE_REPO if task.docker_image else REPO_DIR,
            timeout=self.command_timeout,
            blocked_rule=blocked_rule,
            sentinel=SENTINEL,
        )

    def task_for(self, state: State) -> SWETask:
        iid = (state.get("info") or {}).get("instance_id")
        task = self.tasks.get(iid) if isinstance(iid, str) else None
        if task is None:
            raise ConfigError(f"no task with instance_id {iid!r} in this environment")
        return task

    @staticmethod
    def repo_paths(task: SWETask) -> tuple[str, str]:
        """(where the model is told the repository is, the same for sandbox calls)."""
        if task.docker_image:
            return images.IMAGE_REPO, images.IMAGE_REPO
        return REPO_DIR, REPO

    # -- per-rollout setup ------------------------------------------------------------------
    def get_sandbox_spec(self, state: State) -> SandboxSpec:
        task = self.task_for(state)
        if task.docker_image:  # a sandbox of its own from the image (no warm pool)
            return images.image_spec(self.spec, task)
        return super().get_sandbox_spec(state)

    async def setup_state(self, state: State, **kwargs: Any) -> State:
        state = await super().setup_state(state, **kwargs) or state
        task = self.task_for(state)
        state.update(submitted=False, command_timeouts=0, format_errors=0, grading=None)
        self.workspaces.start(state["sandbox_id"], task)
        return state

    async def release_sandbox(self, state: State) -> None:
        key = state.get("sandbox_id") or ""
        await cancel_jobs([self.workspaces.release(key), self.grades.release(key)])
        await super().release_sandbox(state)

    async def close_sandboxes(self) -> None:
        await cancel_jobs([*self.workspaces.release_all(), *self.grades.release_all()])
        await super().close_sandboxes()

    # -- tools ------------------------------------------------------------------------------
    async def execute_bash(self, command: str, state: State) -> str:
        """Run one bash command in the repository and return its exit code and output.

        Each call starts a fresh shell in the repository root, so `cd` and exported variables
        do not carry over. Commands must be non-interactive; long outputs are shortened to
        their beginning and end. To submit, run `echo MINI_SWE_AGENT_FINAL_OUTPUT` alone.

        Args:
            command: The bash command to run, e.g. `grep -rn "def parse" src/`.
        """
        if not isinstance(command, str) or not command.strip():
            return "Error: `command` must be a non-empty shell command."
        blocked = [w for w in first_words(command) if w in self.blocked_commands]
        if blocked:
            return (
                f"Error: `{blocked[0]}` is not allowed in this environment "
                f"(not available: {', '.join(self.blocked_commands)})."
            )
        box = await self.workspaces.box(state)
        cwd = self.repo_paths(self.task_for(state))[1]
        t0 = time.perf_counter()
        result = await box.exec(f"exec 2>&1\n{command}", timeout=self.command_timeout, cwd=cwd)
        state["sandbox_state"]["command_execution_times"].append(time.perf_counter() - t0)
        output = result.stdout + result.stderr
        if result.timed_out:
            state["command_timeouts"] += 1
            return TIMEOUT_MESSAGE.format(
                command=command,
                timeout=self.command_timeout,
                output=truncate_middle(output, self.max_output_chars),
            )
        lines = output.lstrip().splitlines()
        if result.exit_code == 0 and lines and lines[0].strip() == SENTINEL:
            state["submitted"] = True
            return SENTINEL
        return observation(result.exit_code, output, self.max_output_chars, result.truncated)

    async def edit_via_str_replace(
        self, path: str, old_str: str, new_str: str, state: State
    ) -> str:
        """Replace the one occurrence of `old_str` in a file with `new_str`.

        The edit is refused when `old_str` does not occur exactly once; include enough
        surrounding lines to make it unique. Whitespace and indentation must match exactly.

        Args:
            path: File to edit, relative to the repository root (or absolute).
            old_str: The exact text to replace; it must occur exactly once in the file.
            new_str: The replacement text (may be empty to delete).
        """
        if not isinstance(path, str) or not path.strip():
            raise ValueError("`path` must name a file")
        if not isinstance(old_str, str) or not old_str:
            raise ValueError("`old_str` must be non-empty text")
        if not isinstance(new_str, str):
            raise ValueError("`new_str` must be text")
        full = sandbox_path(path, *self.repo_paths(self.task_for(state)))
        box = await self.workspaces.box(state)
        try:
            raw = await box.read_file(full)
        except OSError as e:
            raise ValueError(f"cannot read {path}: {e}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{path} is not UTF-8 text") from None
        new_text, reply = replace_once(text, old_str, new_str, path)
        await box.write_file(full, new_text)
        return reply

    # -- turn rules -------------------------------------------------------------------------
    async def no_tools_called(self, state: State) -> bool:  # not a stop condition here
        return False

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        reply = await self._respond(messages, state, **kwargs)
        state["answered_turns"] = len(state["trajectory"])
        if (
            state.get("submitted")
            or self._too_many_timeouts(state)
            or 0 < self.max_turns <= len(state["trajectory"])
        ):
            # the rollout ends with this response: no further model call
            state["final_env_response"] = reply
            return []
        return reply

    async def _respond(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        calls = messages[-1].get("tool_calls") or []
        if len(calls) == 1:
            return await super().env_response(messages, state, **kwargs)
        state["format_errors"] += 1
        text = FORMAT_ERROR.format(n=len(calls), sentinel=SENTINEL)
        if not calls:
            return [{"role": "user", "content": text}]
        # every call must be answered for the conversation to stay valid; none is executed
        return [
            {
                "role": "tool",
                "tool_call_id": c.get("id", ""),
                "content": f"Error: not executed. {text}",
            }
            for c in calls
        ]

    def _too_many_timeouts(self, state: State) -> bool:
        return 0 < self.max_command_timeouts <= state.get("command_timeouts", 0)

    @vf.stop(priority=10)
    async def max_turns_reached(self, state: State) -> bool:
        """After the last allowed model turn, once its tool call has run."""
        n = len(state["trajectory"])
        return 0 < self.max_turns <= n and state.get("answered_turns", 0) >= n

    @vf.stop(priority=11)
    async def submitted(self, state: State) -> bool:
        return bool(state.get("submitted"))

    @vf.stop(priority=10)
    async def max_command_timeouts_reached(self, state: State) -> bool:
        return self._too_many_timeouts(state)

    # -- scoring (the rubric: `self.grades`) ----------------------------------------------
    async def run_hidden_tests(self, state: State) -> dict[str, Any]:
        """Copy the hidden tests in (now that the agent is done) and run them against the
        agent's source files with pristine tests and configuration. Cached in state."""
        if state.get("grading") is not None:
            return state["grading"]
        task = self.task_for(state)
        box = await self.workspaces.box(state)
        if not task.docker_image:
            state["grading"] = await run_file_task(box, task, self.test_timeout)
        elif not self.fresh_grading_sandbox:
            withheld = self.workspaces.withheld(state["sandbox_id"])
            state["grading"] = await images.grade(box, None, task, withheld, self.test_timeout)
        else:
            withheld = self.workspaces.withheld(state["sandbox_id"])
            async with await self.provider.create(images.image_spec(self.spec, task)) as fresh:
                state["grading"] = await images.grade(box, fresh, task, withheld, self.test_timeout)
        return state["grading"]

    async def grade(self, state: State) -> dict[str, Any]:
        """The grading record of this rollout (the hidden tests run at most once, shared by the
        reward and the metrics, which are scored concurrently)."""
        return await self.grades.grade(state)
