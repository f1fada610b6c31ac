from verifiers.envs.environment import Environment
from verifiers.envs.multiturn_env import MultiTurnEnv
from verifiers.envs.singleturn_env import SingleTurnEnv

__all__ = ["Environment", "MultiTurnEnv", "SingleTurnEnv"]
