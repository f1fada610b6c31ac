from verifiers.envs.code_env import CodeEnv
from verifiers.envs.env_group import EnvGroup
from verifiers.envs.environment import Environment
from verifiers.envs.multiturn_env import MultiTurnEnv
from verifiers.envs.python_env import PythonEnv
from verifiers.envs.sandbox_env import SandboxEnv
from verifiers.envs.singleturn_env import SingleTurnEnv
from verifiers.envs.stateful_tool_env import StatefulToolEnv
from verifiers.envs.tool_env import ToolEnv

__all__ = [
    "CodeEnv",
    "EnvGroup",
    "Environment",
    "MultiTurnEnv",
    "PythonEnv",
    "SandboxEnv",
    "SingleTurnEnv",
    "StatefulToolEnv",
    "ToolEnv",
]
