"""MCPEnv, HarborEnv, OpenEnvEnv and BrowserEnv: upstream's constructors, their real offline
parts (task folders, seed datasets, build manifests), and clear failures where the service
they drive (the MCP SDK, containers, Prime Sandboxes, Browserbase) is not here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.envs.experimental.harbor_env import HarborEnv
from verifiers.envs.experimental.mcp_env import MCPEnv, MCPServerConfig, _server_config
from verifiers.envs.integrations.browser_env import BrowserEnv
from verifiers.errors import ConfigError
from verifiers.testing import ScriptedServer

QA = Dataset.from_dict({"question": ["Open example.com"], "answer": ["Example Domain"]})


def only_output(env: vf.Environment) -> dict:
    with ScriptedServer() as srv:
        out = env.evaluate_sync(srv.base_url, "m", num_examples=1)
    assert len(srv.requests) == 0  # the rollout failed before asking the model
    return out["outputs"][0]


def error_text(row: dict) -> str:
    err = row["error"]
    assert err is not None
    return json.dumps(err) if not isinstance(err, str) else err


# -- MCPEnv ----------------------------------------------------------------------------------
def test_mcp_env_without_the_sdk_names_what_to_install(monkeypatch):
    """upstream 0.3.1 legacy/envs/experimental/mcp_env.py imports the `mcp` SDK at import
    time; ours imports without it and MCPEnv(...) raises ConfigError naming the package."""
    monkeypatch.setitem(sys.modules, "mcp", None)
    servers = [{"name": "fetch", "command": "uvx", "args": ["mcp-server-fetch"]}]
    with pytest.raises(ConfigError, match="pip install mcp"):
        MCPEnv(mcp_servers=servers, dataset=QA)


def test_mcp_server_configs_from_dicts():
    """upstream 0.3.1 mcp_env.py: dict servers become MCPServerConfig(name, command, args,
    env, description)."""
    cfg = _server_config(
        {"name": "exa", "command": "npx", "args": ["-y", "exa"], "env": {"K": "v"}}
    )
    assert cfg == MCPServerConfig(name="exa", command="npx", args=["-y", "exa"], env={"K": "v"})
    with pytest.raises(ConfigError, match="'name' and 'command'"):
        _server_config({"command": "npx"})


# -- HarborEnv --------------------------------------------------------------------------------
def write_task(root: Path, name: str, image: str | None = "python:3.11-slim") -> Path:
    task = root / name
    task.mkdir(parents=True)
    env_table = f'[environment]\ndocker_image = "{image}"\n' if image else ""
    (task / "task.toml").write_text(f'version = "1.0"\n[agent]\ntimeout_sec = 120.0\n{env_table}')
    (task / "instruction.md").write_text(f"  Solve {name}.\n")
    return task


def test_harbor_tasks_load_as_rows(tmp_path):
    """upstream 0.3.1 legacy/envs/experimental/harbor_env/env.py load_harbor_dataset: one row
    per task folder with task.toml and instruction.md, sorted by name, `tasks` filtering;
    the prompt is the stripped instruction; info carries name, dir, image and config."""
    write_task(tmp_path, "b-task", image=None)
    write_task(tmp_path, "a-task")
    write_task(tmp_path, "c-task")
    (tmp_path / "incomplete").mkdir()
    (tmp_path / "README.md").write_text("not a task")
    env = HarborEnv(run_command="run-agent", dataset_path=tmp_path, tasks=["a-task", "b-task"])
    rows = list(env.dataset)
    assert [r["info"]["task_name"] for r in rows] == ["a-task", "b-task"]
    assert rows[0]["prompt"] == [{"role": "user", "content": "Solve a-task."}]
    assert rows[0]["info"]["docker_image"] == "python:3.11-slim"
    assert rows[1]["info"]["docker_image"] is None
    assert rows[0]["info"]["config"]["agent"]["timeout_sec"] == 120.0
    assert rows[0]["info"]["task_dir"] == str(tmp_path / "a-task")
    assert env.rubric.get_reward_func_names() == ["harbor_reward"]


def test_harbor_rollout_fails_naming_the_container_runtime(tmp_path):
    """HarborEnv needs a container per task (upstream: Prime Sandboxes via CliAgentEnv); ours
    records an infra SandboxError naming the run command and image instead of running."""
    write_task(tmp_path, "hello", image="ghcr.io/example/hello:1")
    env = HarborEnv(run_command="python /app/run_agent.py", dataset_path=tmp_path)
    row = only_output(env)
    text = error_text(row)
    assert "SandboxError" in text
    assert "ghcr.io/example/hello:1" in text and "python /app/run_agent.py" in text


def test_harbor_bad_dataset_paths_are_config_errors(tmp_path):
    """upstream 0.3.1 raises FileNotFoundError / ValueError; ours raises ConfigError."""
    with pytest.raises(ConfigError, match="not found"):
        HarborEnv(run_command="x", dataset_path=tmp_path / "missing")
    with pytest.raises(ConfigError, match="no valid Harbor tasks"):
        HarborEnv(run_command="x", dataset_path=tmp_path)


# -- OpenEnvEnv -------------------------------------------------------------------------------
def render(observation, **kwargs):
    return [{"role": "user", "content": str(observation)}]


def test_openenv_seed_datasets_and_required_renderer(tmp_path):
    """upstream 0.3.1 legacy/envs/integrations/openenv_env.py: rows are seeds (info.seed =
    seed + i) with a placeholder prompt, split train/eval; prompt_renderer is required; the
    project defaults to proj/ beside the calling module; episodic-sum rubric."""
    env = vf.OpenEnvEnv(num_train_examples=3, num_eval_examples=2, seed=5, prompt_renderer=render)
    assert [r["info"]["seed"] for r in env.dataset] == [5, 6, 7]
    assert [r["info"]["seed"] for r in env.eval_dataset] == [8, 9]
    assert env.dataset[0]["prompt"] == [
        {"role": "user", "content": "OpenEnv rollout is initializing."}
    ]
    assert env.openenv_project == str(Path(__file__).resolve().parent / "proj")
    assert env.rubric.get_reward_func_names() == ["sum_step_rewards"]
    with pytest.raises(ConfigError, match="prompt_renderer"):
        vf.OpenEnvEnv(openenv_project=tmp_path)


def test_openenv_rollout_reads_the_manifest_then_names_the_missing_sandbox(tmp_path):
    """The build manifest is checked as upstream checks it (a file that is not a JSON object
    is a ConfigError naming it); with a valid one the rollout records a SandboxError naming
    the image it would have started in a Prime Sandbox."""
    env = vf.OpenEnvEnv(
        openenv_project=tmp_path, num_train_examples=1, num_eval_examples=1, prompt_renderer=render
    )
    assert "missing .build.json" in error_text(only_output(env))
    for bad, says in (("{not json", "is not valid JSON"), ("[1, 2]", "must be a JSON object")):
        (tmp_path / ".build.json").write_text(bad)
        text = error_text(only_output(env))
        assert "ConfigError" in text and "OpenEnv build manifest" in text and says in text
    manifest = {"image": "reg/echo:1", "port": 8000, "start_command": "serve", "contract": "mcp"}
    (tmp_path / ".build.json").write_text(json.dumps({**manifest, "contract": "grpc"}))
    assert "`contract` must be either" in error_text(only_output(env))
    (tmp_path / ".build.json").write_text(json.dumps(manifest))
    text = error_text(only_output(env))
    assert "SandboxError" in text and "reg/echo:1" in text and "Prime Sandbox" in text


# -- BrowserEnv -------------------------------------------------------------------------------
def test_browser_env_constructs_with_upstreams_arguments():
    """upstream 0.3.1 legacy/envs/integrations/browser_env/browser_env.py: mode 'dom' or
    'cua' (anything else is refused), settings kept, SandboxError stops rollouts by default."""
    env = BrowserEnv(mode="cua", dataset=QA, use_sandbox=False, server_url="http://h:3000")
    assert env.mode == "cua" and env.server_url == "http://h:3000"
    assert env.stop_errors == (vf.SandboxError,)
    assert vf.BrowserEnv is BrowserEnv
    with pytest.raises(ConfigError, match="Unknown mode"):
        BrowserEnv(mode="vision", dataset=QA)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"mode": "dom"}, "Stagehand"),
        ({"mode": "cua"}, "deepdream19/cua-server:latest"),
        ({"mode": "cua", "use_sandbox": False, "env": "LOCAL"}, "http://localhost:3000"),
    ],
)
def test_browser_rollout_fails_naming_the_missing_service(kwargs, needle, monkeypatch):
    """Browserbase/Stagehand sessions and CUA servers are not here: a rollout records an
    infra error naming what each mode needs."""
    monkeypatch.delenv("BROWSERBASE_API_KEY", raising=False)
    row = only_output(BrowserEnv(dataset=QA, **kwargs))
    text = error_text(row)
    assert needle in text
    assert ("BROWSERBASE_API_KEY: not set" in text) == (kwargs.get("env") != "LOCAL")


def test_harbor_hooks_subclasses_extend(tmp_path):
    """upstream 0.3.1 harbor_env/env.py build_env_vars adds HARBOR_TASK_NAME, HARBOR_TASK_DIR,
    HARBOR_INSTRUCTION_PATH and AGENT_WORKDIR; the sandbox hooks say there is no sandbox."""
    import asyncio

    write_task(tmp_path, "hello")
    env = HarborEnv(run_command="x", dataset_path=tmp_path, environment_vars={"A": "1"})
    state = {"model": "m", "info": env.dataset[0]["info"]}
    env_vars = asyncio.run(env.build_env_vars(state))
    assert env_vars == {
        "A": "1",
        "OPENAI_MODEL": "m",
        "HARBOR_TASK_NAME": "hello",
        "HARBOR_TASK_DIR": "/task",
        "HARBOR_INSTRUCTION_PATH": "/task/instruction.md",
        "AGENT_WORKDIR": "/app",
    }
    with pytest.raises(vf.SandboxError, match="no Prime Sandboxes client"):
        asyncio.run(env.sandbox_client.execute_command("sb", "ls"))
    with pytest.raises(vf.SandboxError):
        asyncio.run(env.post_sandbox_setup(state))
