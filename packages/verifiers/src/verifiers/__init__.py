"""verifiers: environments for reinforcement learning with verifiable rewards.

`import verifiers as vf` gives the classic environment API: `vf.SingleTurnEnv`,
`vf.MultiTurnEnv`, `vf.Rubric`, parsers, `vf.load_environment`, and `generate`/`evaluate` on
every environment. Importing configures no logging and installs no signal handlers.
"""

from importlib.metadata import PackageNotFoundError, version

from verifiers.client import (
    Client,
    ClientConfig,
    EndpointConfig,
    ModelResponse,
    MultiEndpointClient,
    OpenAIChatCompletionsClient,
    OpenAIClient,
)
from verifiers.data_sources import load_dataset_source, load_source_rows
from verifiers.dataset import prepare_qa_dataset
from verifiers.decorators import advantage, cleanup, metric, reward, setup, stop, teardown, update
from verifiers.envs import (
    CodeEnv,
    EnvGroup,
    Environment,
    MultiTurnEnv,
    PythonEnv,
    SandboxEnv,
    SingleTurnEnv,
    StatefulToolEnv,
    ToolEnv,
)
from verifiers.errors import (
    ConfigError,
    EmptyModelResponseError,
    EnvironmentLoadError,
    EnvResponseError,
    Error,
    InfraError,
    InvalidModelResponseError,
    MissingKeyError,
    ModelConnectionError,
    ModelError,
    OverlongPromptError,
    RewardError,
    SandboxError,
    ToolCallError,
    ToolError,
    ToolParseError,
    TrainingDataError,
    TunnelError,
)
from verifiers.loading import ensure_keys, load_environment
from verifiers.parsers import MaybeThinkParser, Parser, ThinkParser, XMLParser
from verifiers.pass_rate import PassRateFilter
from verifiers.rubrics import (
    DEFAULT_JUDGE_PROMPT,
    JudgeError,
    JudgeFallbackRubric,
    JudgeRubric,
    MathRubric,
    Rubric,
    RubricGroup,
)
from verifiers.sandbox import SandboxCreationError, SandboxDeadError
from verifiers.state import State
from verifiers.tools import Tool, build_tool
from verifiers.training import DifficultyFilter, RolloutGroup, RolloutStream, TrainingSample
from verifiers.types import (
    AssistantMessage,
    DatasetBuilder,
    GenerateMetadata,
    GenerateOutputs,
    GroupRewardFunc,
    Info,
    Message,
    Messages,
    RewardFunc,
    RolloutInput,
    RolloutOutput,
    SamplingArgs,
    SystemMessage,
    ToolMessage,
    TrajectoryStep,
    TrajectoryStepTokens,
    UserMessage,
)
from verifiers.utils.answers import (
    extract_boxed_answer,
    extract_boxed_choice,
    extract_hash_answer,
    parse_grade,
    strip_reasoning,
)

try:
    __version__ = version("verifiers")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "DEFAULT_JUDGE_PROMPT",
    "AssistantMessage",
    "Client",
    "ClientConfig",
    "CodeEnv",
    "ConfigError",
    "DatasetBuilder",
    "DifficultyFilter",
    "EmptyModelResponseError",
    "EndpointConfig",
    "EnvGroup",
    "EnvResponseError",
    "Environment",
    "EnvironmentLoadError",
    "Error",
    "GenerateMetadata",
    "GenerateOutputs",
    "GroupRewardFunc",
    "Info",
    "InfraError",
    "InvalidModelResponseError",
    "JudgeError",
    "JudgeFallbackRubric",
    "JudgeRubric",
    "MathRubric",
    "MaybeThinkParser",
    "Message",
    "Messages",
    "MissingKeyError",
    "ModelConnectionError",
    "ModelError",
    "ModelResponse",
    "MultiEndpointClient",
    "MultiTurnEnv",
    "OpenAIChatCompletionsClient",
    "OpenAIClient",
    "OverlongPromptError",
    "Parser",
    "PassRateFilter",
    "PythonEnv",
    "RewardError",
    "RewardFunc",
    "RolloutGroup",
    "RolloutInput",
    "RolloutOutput",
    "RolloutStream",
    "Rubric",
    "RubricGroup",
    "SamplingArgs",
    "SandboxCreationError",
    "SandboxDeadError",
    "SandboxEnv",
    "SandboxError",
    "SingleTurnEnv",
    "State",
    "StatefulToolEnv",
    "SystemMessage",
    "ThinkParser",
    "Tool",
    "ToolCallError",
    "ToolEnv",
    "ToolError",
    "ToolMessage",
    "ToolParseError",
    "TrainingDataError",
    "TrainingSample",
    "TrajectoryStep",
    "TrajectoryStepTokens",
    "TunnelError",
    "UserMessage",
    "XMLParser",
    "__version__",
    "advantage",
    "build_tool",
    "cleanup",
    "ensure_keys",
    "extract_boxed_answer",
    "extract_boxed_choice",
    "extract_hash_answer",
    "load_dataset_source",
    "load_environment",
    "load_source_rows",
    "metric",
    "parse_grade",
    "prepare_qa_dataset",
    "reward",
    "setup",
    "stop",
    "strip_reasoning",
    "teardown",
    "update",
]
