"""verifiers: environments for reinforcement learning with verifiable rewards.

`import verifiers as vf` gives the classic environment API: `vf.SingleTurnEnv`,
`vf.MultiTurnEnv`, `vf.Rubric`, parsers, `vf.load_environment`, and `generate`/`evaluate` on
every environment. Importing configures no logging and installs no signal handlers.

Names resolve on first use (PEP 562 ``__getattr__``): `import verifiers` imports none of the
SDK, and ``vf.Rubric`` or ``from verifiers import Rubric`` imports the module that defines it.
So a process that needs one piece (a grading worker imports `verifiers.utils.math_grading`
and math-verify, nothing else) does not pay for the whole SDK and openai's types.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:  # what type checkers and IDEs read; `_SOURCES` is the same, for runtime
    # 0.1.x's `vf.ChatCompletion` (openai's): what classic trainers check step responses against
    from openai.types.chat import ChatCompletion

    from verifiers.client import (
        Client,
        ClientConfig,
        EndpointConfig,
        ModelResponse,
        MultiEndpointClient,
        OpenAIChatCompletionsClient,
        OpenAIClient,
        OpenAICompletionsClient,
    )
    from verifiers.data_sources import hub_reachable, load_dataset_source, load_source_rows
    from verifiers.dataset import prepare_qa_dataset
    from verifiers.decorators import (
        advantage,
        cleanup,
        metric,
        reward,
        setup,
        stop,
        teardown,
        update,
    )
    from verifiers.envs.choice import letter_rubric, name_list
    from verifiers.envs.code_compare import INT_LITERAL, Comparison, parse_number, values_equal
    from verifiers.envs.code_env import FENCE, CodeEnv, extract_code
    from verifiers.envs.env_group import EnvGroup
    from verifiers.envs.environment import Environment
    from verifiers.envs.experimental.gym_env import GymEnv
    from verifiers.envs.experimental.harbor_env import HarborEnv
    from verifiers.envs.experimental.mcp_env import MCPEnv
    from verifiers.envs.integrations.browser_env import BrowserEnv
    from verifiers.envs.integrations.openenv_env import OpenEnvEnv
    from verifiers.envs.integrations.reasoninggym_env import ReasoningGymEnv
    from verifiers.envs.integrations.textarena_env import TextArenaEnv
    from verifiers.envs.judged import (
        JudgedBoxedTask,
        MathVerifyJudgeRubric,
        boxed_answer_parser,
        grade_judge_prompt,
    )
    from verifiers.envs.mixture import Mixture, PoolSpec
    from verifiers.envs.multiturn_env import MultiTurnEnv
    from verifiers.envs.program_prelude import with_prelude
    from verifiers.envs.python_env import PythonEnv
    from verifiers.envs.sandbox_env import SandboxEnv, configured_provider, default_provider
    from verifiers.envs.singleturn_env import SingleTurnEnv
    from verifiers.envs.stateful_tool_env import StatefulToolEnv
    from verifiers.envs.tool_env import ToolEnv
    from verifiers.errors import (
        ClusterError,
        ClusterUnreachableError,
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
        WorkerLostError,
    )
    from verifiers.loading import ensure_keys, load_environment, load_mixture
    from verifiers.parsers import MaybeThinkParser, Parser, ThinkParser, XMLParser
    from verifiers.parsers.parser import content_text
    from verifiers.pass_rate import PassRateFilter
    from verifiers.rubrics.judge_fallback_rubric import COMPASS_VERIFIER_COT, JudgeFallbackRubric
    from verifiers.rubrics.judge_rubric import DEFAULT_JUDGE_PROMPT, JudgeError, JudgeRubric
    from verifiers.rubrics.math_rubric import MathRubric, grade_math_answer, strict_boxed_answer
    from verifiers.rubrics.rubric import Rubric
    from verifiers.rubrics.rubric_group import RubricGroup
    from verifiers.rubrics.tool_rubric import ToolRubric
    from verifiers.sandbox import SandboxCreationError, SandboxDeadError
    from verifiers.state import State, error_record
    from verifiers.tools import ToolSpec, build_tool
    from verifiers.training import DifficultyFilter, RolloutGroup, RolloutStream, TrainingSample
    from verifiers.types import (
        AssistantMessage,
        ChatCompletionMessageToolCall,
        ChatMessage,
        DatasetBuilder,
        GenerateMetadata,
        GenerateOutputs,
        GroupRewardFunc,
        Info,
        Message,
        Messages,
        ProcessedOutputs,
        Response,
        ResponseMessage,
        ResponseTokens,
        RewardFunc,
        RolloutInput,
        RolloutOutput,
        RolloutScore,
        RolloutScores,
        SamplingArgs,
        SystemMessage,
        Tool,
        ToolCall,
        ToolMessage,
        TrajectoryStep,
        TrajectoryStepTokens,
        Usage,
        UserMessage,
    )
    from verifiers.utils.answers import (
        COMPASS_VERIFIER_LABELS,
        extract_boxed_answer,
        extract_boxed_choice,
        extract_hash_answer,
        parse_grade,
        strip_reasoning,
    )
    from verifiers.utils.data_utils import load_example_dataset
    from verifiers.utils.environment_arguments import dataset_from_arguments, judge_from_arguments
    from verifiers.utils.judge_endpoint import judge_endpoint
    from verifiers.utils.logging_utils import (
        log_level,
        print_prompt_completions_sample,
        quiet_verifiers,
        setup_logging,
    )
    from verifiers.utils.process_pool import WorkerTimeoutError
    from verifiers.utils.published_prompts import (
        OFFICIAL,
        PromptSource,
        load_published_prompt,
        resolve_prompt,
    )
# Where each public name is defined; tests/test_math_warm_start.py checks it against the imports
# above. Resolved by `__getattr__` on first use, then bound here.
_SOURCES: dict[str, tuple[str, ...]] = {
    "openai.types.chat": ("ChatCompletion",),
    "verifiers.client": (
        "Client",
        "ClientConfig",
        "EndpointConfig",
        "ModelResponse",
        "MultiEndpointClient",
        "OpenAIChatCompletionsClient",
        "OpenAIClient",
        "OpenAICompletionsClient",
    ),
    "verifiers.data_sources": ("hub_reachable", "load_dataset_source", "load_source_rows"),
    "verifiers.dataset": ("prepare_qa_dataset",),
    "verifiers.decorators": (
        "advantage",
        "cleanup",
        "metric",
        "reward",
        "setup",
        "stop",
        "teardown",
        "update",
    ),
    "verifiers.envs.choice": ("letter_rubric", "name_list"),
    "verifiers.envs.code_compare": ("INT_LITERAL", "Comparison", "parse_number", "values_equal"),
    "verifiers.envs.code_env": ("FENCE", "CodeEnv", "extract_code"),
    "verifiers.envs.env_group": ("EnvGroup",),
    "verifiers.envs.environment": ("Environment",),
    "verifiers.envs.experimental.gym_env": ("GymEnv",),
    "verifiers.envs.experimental.harbor_env": ("HarborEnv",),
    "verifiers.envs.experimental.mcp_env": ("MCPEnv",),
    "verifiers.envs.integrations.browser_env": ("BrowserEnv",),
    "verifiers.envs.integrations.openenv_env": ("OpenEnvEnv",),
    "verifiers.envs.integrations.reasoninggym_env": ("ReasoningGymEnv",),
    "verifiers.envs.integrations.textarena_env": ("TextArenaEnv",),
    "verifiers.envs.judged": (
        "JudgedBoxedTask",
        "MathVerifyJudgeRubric",
        "boxed_answer_parser",
        "grade_judge_prompt",
    ),
    "verifiers.envs.mixture": ("Mixture", "PoolSpec"),
    "verifiers.envs.multiturn_env": ("MultiTurnEnv",),
    "verifiers.envs.program_prelude": ("with_prelude",),
    "verifiers.envs.python_env": ("PythonEnv",),
    "verifiers.envs.sandbox_env": ("SandboxEnv", "configured_provider", "default_provider"),
    "verifiers.envs.singleturn_env": ("SingleTurnEnv",),
    "verifiers.envs.stateful_tool_env": ("StatefulToolEnv",),
    "verifiers.envs.tool_env": ("ToolEnv",),
    "verifiers.errors": (
        "ClusterError",
        "ClusterUnreachableError",
        "ConfigError",
        "EmptyModelResponseError",
        "EnvironmentLoadError",
        "EnvResponseError",
        "Error",
        "InfraError",
        "InvalidModelResponseError",
        "MissingKeyError",
        "ModelConnectionError",
        "ModelError",
        "OverlongPromptError",
        "RewardError",
        "SandboxError",
        "ToolCallError",
        "ToolError",
        "ToolParseError",
        "TrainingDataError",
        "TunnelError",
        "WorkerLostError",
    ),
    "verifiers.loading": ("ensure_keys", "load_environment", "load_mixture"),
    "verifiers.parsers": ("MaybeThinkParser", "Parser", "ThinkParser", "XMLParser"),
    "verifiers.parsers.parser": ("content_text",),
    "verifiers.pass_rate": ("PassRateFilter",),
    "verifiers.rubrics.judge_fallback_rubric": ("COMPASS_VERIFIER_COT", "JudgeFallbackRubric"),
    "verifiers.rubrics.judge_rubric": ("DEFAULT_JUDGE_PROMPT", "JudgeError", "JudgeRubric"),
    "verifiers.rubrics.math_rubric": ("MathRubric", "grade_math_answer", "strict_boxed_answer"),
    "verifiers.rubrics.rubric": ("Rubric",),
    "verifiers.rubrics.rubric_group": ("RubricGroup",),
    "verifiers.rubrics.tool_rubric": ("ToolRubric",),
    "verifiers.sandbox": ("SandboxCreationError", "SandboxDeadError"),
    "verifiers.state": ("State", "error_record"),
    "verifiers.tools": ("ToolSpec", "build_tool"),
    "verifiers.training": ("DifficultyFilter", "RolloutGroup", "RolloutStream", "TrainingSample"),
    "verifiers.types": (
        "AssistantMessage",
        "ChatCompletionMessageToolCall",
        "ChatMessage",
        "DatasetBuilder",
        "GenerateMetadata",
        "GenerateOutputs",
        "GroupRewardFunc",
        "Info",
        "Message",
        "Messages",
        "ProcessedOutputs",
        "Response",
        "ResponseMessage",
        "ResponseTokens",
        "RewardFunc",
        "RolloutInput",
        "RolloutOutput",
        "RolloutScore",
        "RolloutScores",
        "SamplingArgs",
        "SystemMessage",
        "Tool",
        "ToolCall",
        "ToolMessage",
        "TrajectoryStep",
        "TrajectoryStepTokens",
        "Usage",
        "UserMessage",
    ),
    "verifiers.utils.answers": (
        "COMPASS_VERIFIER_LABELS",
        "extract_boxed_answer",
        "extract_boxed_choice",
        "extract_hash_answer",
        "parse_grade",
        "strip_reasoning",
    ),
    "verifiers.utils.data_utils": ("load_example_dataset",),
    "verifiers.utils.environment_arguments": ("dataset_from_arguments", "judge_from_arguments"),
    "verifiers.utils.judge_endpoint": ("judge_endpoint",),
    "verifiers.utils.logging_utils": (
        "log_level",
        "print_prompt_completions_sample",
        "quiet_verifiers",
        "setup_logging",
    ),
    "verifiers.utils.process_pool": ("WorkerTimeoutError",),
    "verifiers.utils.published_prompts": (
        "OFFICIAL",
        "PromptSource",
        "load_published_prompt",
        "resolve_prompt",
    ),
}
_SOURCE_OF = {name: module for module, names in _SOURCES.items() for name in names}

__version__: str  # the installed distribution's, read on first use (`__getattr__`)

# The subpackages `dir(verifiers)` shows (the public module paths; the package once imported
# them all). Reaching one as an attribute (classic ``vf.rubrics.math_rubric.X``) loads the
# whole API first, so that whatever deeper attribute code reached before is still bound.
_SUBMODULES = (
    "client",
    "data_sources",
    "dataset",
    "decorators",
    "envs",
    "errors",
    "generation",
    "loading",
    "parsers",
    "pass_rate",
    "results",
    "rubrics",
    "sandbox",
    "state",
    "tools",
    "training",
    "types",
    "utils",
)


def __getattr__(name: str) -> _Any:
    module = _SOURCE_OF.get(name)
    if module is not None:
        value = getattr(_importlib.import_module(module), name)
    elif name == "__version__":
        value = _package_version()
    elif name in _SUBMODULES:
        _load_everything()
        return globals()[name]  # bound by the import system
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_SUBMODULES})


def _load_everything() -> None:
    for module in _SOURCES:
        _importlib.import_module(module)
    for module in _SUBMODULES:
        _importlib.import_module(f"{__name__}.{module}")


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("verifiers")
    except PackageNotFoundError:  # running from a source tree
        return "0.0.0"


__all__ = [
    "COMPASS_VERIFIER_COT",
    "COMPASS_VERIFIER_LABELS",
    "DEFAULT_JUDGE_PROMPT",
    "FENCE",
    "INT_LITERAL",
    "OFFICIAL",
    "AssistantMessage",
    "BrowserEnv",
    "ChatCompletion",
    "ChatCompletionMessageToolCall",
    "ChatMessage",
    "Client",
    "ClientConfig",
    "ClusterError",
    "ClusterUnreachableError",
    "CodeEnv",
    "Comparison",
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
    "GymEnv",
    "HarborEnv",
    "Info",
    "InfraError",
    "InvalidModelResponseError",
    "JudgeError",
    "JudgeFallbackRubric",
    "JudgeRubric",
    "JudgedBoxedTask",
    "MCPEnv",
    "MathRubric",
    "MathVerifyJudgeRubric",
    "MaybeThinkParser",
    "Message",
    "Messages",
    "MissingKeyError",
    "Mixture",
    "ModelConnectionError",
    "ModelError",
    "ModelResponse",
    "MultiEndpointClient",
    "MultiTurnEnv",
    "OpenAIChatCompletionsClient",
    "OpenAIClient",
    "OpenAICompletionsClient",
    "OpenEnvEnv",
    "OverlongPromptError",
    "Parser",
    "PassRateFilter",
    "PoolSpec",
    "ProcessedOutputs",
    "PromptSource",
    "PythonEnv",
    "ReasoningGymEnv",
    "Response",
    "ResponseMessage",
    "ResponseTokens",
    "RewardError",
    "RewardFunc",
    "RolloutGroup",
    "RolloutInput",
    "RolloutOutput",
    "RolloutScore",
    "RolloutScores",
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
    "TextArenaEnv",
    "ThinkParser",
    "Tool",
    "ToolCall",
    "ToolCallError",
    "ToolEnv",
    "ToolError",
    "ToolMessage",
    "ToolParseError",
    "ToolRubric",
    "ToolSpec",
    "TrainingDataError",
    "TrainingSample",
    "TrajectoryStep",
    "TrajectoryStepTokens",
    "TunnelError",
    "Usage",
    "UserMessage",
    "WorkerLostError",
    "WorkerTimeoutError",
    "XMLParser",
    "__version__",
    "advantage",
    "boxed_answer_parser",
    "build_tool",
    "cleanup",
    "configured_provider",
    "content_text",
    "dataset_from_arguments",
    "default_provider",
    "ensure_keys",
    "error_record",
    "extract_boxed_answer",
    "extract_boxed_choice",
    "extract_code",
    "extract_hash_answer",
    "grade_judge_prompt",
    "grade_math_answer",
    "hub_reachable",
    "judge_endpoint",
    "judge_from_arguments",
    "letter_rubric",
    "load_dataset_source",
    "load_environment",
    "load_example_dataset",
    "load_mixture",
    "load_published_prompt",
    "load_source_rows",
    "log_level",
    "metric",
    "name_list",
    "parse_grade",
    "parse_number",
    "prepare_qa_dataset",
    "print_prompt_completions_sample",
    "quiet_verifiers",
    "resolve_prompt",
    "reward",
    "setup",
    "setup_logging",
    "stop",
    "strict_boxed_answer",
    "strip_reasoning",
    "teardown",
    "update",
    "values_equal",
    "with_prelude",
]
