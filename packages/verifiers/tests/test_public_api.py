"""The SDK's public names, pinned (issue 29 item 1; as httpx pins its own in
tests/test_exported_members.py).

Each public module's ``__all__`` is written out here: adding, renaming or removing a public
name is a deliberate change to this file, not a side effect. Every pinned name resolves, and
nothing else public-looking is on the module: what ``dir()`` shows beyond ``__all__`` is a
submodule (a module path users import; upstream's classic paths are pinned by
test_classic_contract.py) or private. Environments use only these names
(tests/test_environment_imports.py).
"""

from __future__ import annotations

import importlib
import types

import pytest

PINNED: dict[str, list[str]] = {
    "verifiers": [
        "AssistantMessage",
        "BrowserEnv",
        "COMPASS_VERIFIER_COT",
        "COMPASS_VERIFIER_LABELS",
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
        "DEFAULT_JUDGE_PROMPT",
        "DatasetBuilder",
        "DifficultyFilter",
        "EmptyModelResponseError",
        "EndpointConfig",
        "EnvGroup",
        "EnvResponseError",
        "Environment",
        "EnvironmentLoadError",
        "Error",
        "FENCE",
        "GenerateMetadata",
        "GenerateOutputs",
        "GroupRewardFunc",
        "GymEnv",
        "HarborEnv",
        "INT_LITERAL",
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
        "OFFICIAL",
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
    ],
    "verifiers.sandbox": [
        "BwrapProvider",
        "ExecResult",
        "ImageProvider",
        "ImageRef",
        "ImageStore",
        "Layer",
        "LocalRegistry",
        "MiB",
        "ProcessProvider",
        "Promises",
        "Provider",
        "ProviderUnavailableError",
        "RayProvider",
        "RaySandbox",
        "RunscProvider",
        "RuntimeSpec",
        "Sandbox",
        "SandboxCreationError",
        "SandboxDeadError",
        "SandboxPool",
        "SandboxSpec",
        "TIERS",
        "Tier",
        "close_all",
        "host_programs",
        "tier_of",
    ],
    "verifiers.training": [
        "DifficultyFilter",
        "InferenceAdmin",
        "NCCL_READY_MARKER",
        "ProblemStats",
        "RolloutGroup",
        "RolloutStream",
        "TOKEN_SAMPLING_ARGS",
        "TokenInClient",
        "TrainingSample",
        "VersionTaggingClient",
        "build_group",
        "build_samples",
        "group_advantages",
        "has_zero_variance",
        "is_masked",
        "truncate",
    ],
    "verifiers.serve": [
        "API_KEYS_VAR",
        "ApiKeyPolicy",
        "BaseRequest",
        "BaseResponse",
        "EnvClient",
        "EnvClientPool",
        "EnvRouter",
        "EnvServer",
        "EnvWorker",
        "HealthRequest",
        "HealthResponse",
        "PendingRequest",
        "ResponseError",
        "RunGroupRequest",
        "RunGroupResponse",
        "RunRolloutRequest",
        "RunRolloutResponse",
        "SECRET_VAR",
        "ServerError",
        "ServerState",
        "ServerTimeoutError",
        "SpawnedServer",
        "ZMQEnvClient",
        "ZMQEnvServer",
        "error_output",
        "get_free_port",
        "is_loopback",
        "make_ipc_address",
        "spawn_env_server",
    ],
    "verifiers.testing": [
        "ArithmeticResponder",
        "Fault",
        "GateResponder",
        "JUDGED_TASK_CHECKS",
        "Reply",
        "Responder",
        "ScriptResponder",
        "ScriptedServer",
        "SdkGradingTable",
        "SequenceResponder",
        "UPSTREAM_JUDGED_DEFAULTS",
        "assert_replies_scored",
        "assert_scored",
        "bwrap_provider",
        "chromium",
        "decode",
        "encode",
        "encode_chat",
        "encode_completion",
        "environment_fixture",
        "evaluate_against_script",
        "free_port",
        "grade_program_table",
        "jsonl_rows",
        "judged_environment",
        "key_recording_judge",
        "offline_hub",
        "point_at_local_copy",
        "problems_of",
        "published_files",
        "rollout_state",
        "row_state",
        "run_vf_eval",
        "score_completion",
        "score_fenced_programs",
        "score_rollouts",
        "scripted_eval",
        "sdk_grading_table",
        "serve_app",
        "serve_folder",
        "signature_defaults",
        "table_messages",
        "verdict_judge",
        "wait_listening",
        "write_hub_dataset",
        "write_jsonl",
    ],
    "verifiers.ray": [
        "EnvServers",
        "RayEnvironment",
        "connect",
        "require_ray",
        "start_env_servers",
    ],
}


@pytest.mark.parametrize("module", sorted(PINNED))
def test_exports_are_pinned(module: str):
    """A public name appears or goes only with an edit of PINNED."""
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == PINNED[module]
    assert len(set(mod.__all__)) == len(mod.__all__), "a name listed twice"


@pytest.mark.parametrize("module", sorted(PINNED))
def test_every_export_resolves_and_none_is_private(module: str):
    mod = importlib.import_module(module)
    missing = [name for name in mod.__all__ if not hasattr(mod, name)]
    assert missing == []
    private = [n for n in mod.__all__ if n.startswith("_") and n != "__version__"]
    assert private == []


@pytest.mark.parametrize("module", sorted(PINNED))
def test_nothing_public_outside_all(module: str):
    """What a module shows besides ``__all__`` is its submodules (module paths) or private;
    a helper imported for the module's own use must not look like API (``vf.version`` did)."""
    mod = importlib.import_module(module)
    stray = [
        name
        for name in dir(mod)
        if not name.startswith("_")
        and name not in mod.__all__
        and not _is_submodule(mod, getattr(mod, name))
    ]
    assert stray == []


def test_submodules_shown_by_verifiers_are_importable_paths():
    """The modules ``dir(verifiers)`` shows besides ``__all__`` are its own subpackages, each
    importable by its dotted path (the public module paths)."""
    import verifiers as vf

    shown = [n for n in dir(vf) if not n.startswith("_") and n not in vf.__all__]
    assert shown  # submodules are bound once imported
    for name in shown:
        assert importlib.import_module(f"verifiers.{name}") is getattr(vf, name)


def _is_submodule(package: types.ModuleType, value: object) -> bool:
    return isinstance(value, types.ModuleType) and value.__name__.startswith(package.__name__ + ".")


def test_the_package_ships_type_information():
    """``py.typed`` (PEP 561): type checkers read the SDK's annotations in users' code."""
    from importlib import resources

    assert resources.files("verifiers").joinpath("py.typed").is_file()
