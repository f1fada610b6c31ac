"""OpenEnvEnv: an OpenEnv project (a gym or MCP server packaged as a container image).

Upstream starts the project's prebuilt image (named in `<project>/.build.json`) in a Prime
Sandbox per rollout, resets it with the row's seed, renders observations to chat messages with
`prompt_renderer`, and sums the per-step rewards. Here the seed datasets, the renderer check
and the build manifest are real; a rollout then fails with a `SandboxError` naming what is
missing (a Prime Sandbox to run the image in), since that service cannot exist offline.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from verifiers.envs.experimental.gym_env import EpisodicSumRubric
from verifiers.envs.multiturn_env import MultiTurnEnv
from verifiers.errors import ConfigError, SandboxError
from verifiers.rubrics import Rubric
from verifiers.state import State
from verifiers.types import Messages
from verifiers.utils.json_object import json_object

INITIAL_PROMPT = "OpenEnv rollout is initializing."
CONTRACTS = ("gym", "mcp")
BUILD_HINT = "Run: vf-build <env-id> (optionally with -p <environments-path>)."


class OpenEnvEpisodicSumRubric(EpisodicSumRubric):
    """Reward: the sum of the per-step rewards the OpenEnv server returned (upstream's name
    for `EpisodicSumRubric` here)."""


class OpenEnvEnv(MultiTurnEnv):
    """An OpenEnv project as an environment (upstream's constructor arguments)."""

    def __init__(
        self,
        openenv_project: str | Path | None = None,
        num_train_examples: int = 100,
        num_eval_examples: int = 50,
        seed: int = 0,
        prompt_renderer: Callable[..., Messages] | None = None,
        max_turns: int = -1,
        rubric: Rubric | None = None,
        startup_timeout_seconds: int = 30,
        startup_poll_interval_seconds: float = 1.0,
        health_request_timeout_seconds: float = 2.0,
        schema_request_timeout_seconds: float = 5.0,
        wait_for_creation_max_attempts: int = 20,
        max_retries: int = 5,
        base_delay: float = 0.5,
        backoff_factor: float = 2.0,
        max_backoff_seconds: float = 30.0,
        jitter: float = 1e-3,
        **kwargs: Any,
    ) -> None:
        # As upstream: the project defaults to `proj/` beside the module that built the env.
        self.openenv_project = str(openenv_project or _caller_dir() / "proj")
        if prompt_renderer is None:
            raise ConfigError(
                "OpenEnvEnv requires `prompt_renderer`: a function in your environment module "
                "that turns an observation into non-empty chat messages"
            )
        self.prompt_renderer = prompt_renderer
        self.num_train_examples = num_train_examples
        self.num_eval_examples = num_eval_examples
        self.seed = seed
        self.startup_timeout_seconds = startup_timeout_seconds
        self.startup_poll_interval_seconds = startup_poll_interval_seconds
        self.health_request_timeout_seconds = health_request_timeout_seconds
        self.schema_request_timeout_seconds = schema_request_timeout_seconds
        self.wait_for_creation_max_attempts = wait_for_creation_max_attempts
        self.retry = {
            "max_retries": max_retries,
            "base_delay": base_delay,
            "backoff_factor": backoff_factor,
            "max_backoff_seconds": max_backoff_seconds,
            "jitter": jitter,
        }
        dataset, eval_dataset = self._build_seed_datasets()
        super().__init__(
            dataset=dataset,
            eval_dataset=eval_dataset,
            rubric=rubric or OpenEnvEpisodicSumRubric(),
            max_turns=max_turns,
            message_type="chat",
            **kwargs,
        )

    def _build_seed_datasets(self) -> tuple[Any, Any]:
        """One row per seed (`info.seed`); the real prompt comes from the server's reset."""
        from datasets import Dataset

        rows = [
            {
                "prompt": [{"role": "user", "content": INITIAL_PROMPT}],
                "info": {"seed": self.seed + i},
            }
            for i in range(max(0, self.num_train_examples + self.num_eval_examples))
        ]
        train, evals = rows[: self.num_train_examples], rows[self.num_train_examples :]
        return Dataset.from_list(train), Dataset.from_list(evals) if evals else None

    def read_build_manifest(self) -> dict[str, Any]:
        """`<project>/.build.json`, checked as upstream checks it (image, port, command,
        contract)."""
        project = Path(self.openenv_project).expanduser().resolve()
        if not project.is_dir():
            raise ConfigError(
                f"OpenEnvEnv requires a local OpenEnv project directory. Got: {project}"
            )
        path = project / ".build.json"
        if not path.exists():
            raise ConfigError(f"OpenEnv project is missing .build.json. {BUILD_HINT}")
        manifest = json_object(path.read_text(), f"the OpenEnv build manifest {path}")
        image, command = manifest.get("image"), manifest.get("start_command")
        if not isinstance(image, str) or not image.strip():
            raise ConfigError(
                f"Invalid .build.json: `image` must be a non-empty string. {BUILD_HINT}"
            )
        if not isinstance(command, str) or not command.strip():
            raise ConfigError(
                f"Invalid .build.json: `start_command` must be a non-empty string. {BUILD_HINT}"
            )
        try:
            int(manifest.get("port", 8000))
        except (TypeError, ValueError) as e:
            raise ConfigError("Invalid .build.json: `port` must be an integer.") from e
        if manifest.get("contract") not in CONTRACTS:
            raise ConfigError(
                f"Invalid .build.json: `contract` must be either 'gym' or 'mcp'. {BUILD_HINT}"
            )
        return manifest

    async def setup_state(self, state: State, **kwargs: Any) -> State:
        manifest = self.read_build_manifest()
        raise SandboxError(
            f"OpenEnvEnv cannot start the OpenEnv server here: it runs the image "
            f"{manifest['image']!r} ({manifest['contract']} contract, `{manifest['start_command']}` "
            f"on port {manifest.get('port', 8000)}) in a Prime Sandbox and talks to it over "
            "HTTP with the openenv client, and this SDK has no Prime Sandboxes or runtime for "
            "container images. Run it with upstream verifiers[openenv] and Prime Sandboxes."
        ) from None  # not caused by whatever the caller was handling

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        raise SandboxError("OpenEnvEnv rollouts need the OpenEnv server (see setup_state)")


def _caller_dir() -> Path:
    """Directory of the first stack frame outside this module (the environment module)."""
    here = Path(__file__).resolve()
    frame = inspect.currentframe()
    while frame is not None:
        path = Path(frame.f_code.co_filename).resolve()
        if path != here:
            return path.parent
        frame = frame.f_back
    return Path.cwd()
