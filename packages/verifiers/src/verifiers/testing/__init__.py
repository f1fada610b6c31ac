"""Test helpers: a scripted OpenAI-compatible server with vLLM-style token data.

>>> with ScriptedServer() as srv:  # doctest: +SKIP
...     client = AsyncOpenAI(base_url=srv.base_url, api_key="x")

CLI: ``python -m verifiers.testing serve --port 0`` prints ``READY <base_url>``.
"""

from verifiers.testing.browser import chromium
from verifiers.testing.environments import (
    assert_replies_scored,
    bwrap_provider,
    environment_fixture,
    evaluate_against_script,
    grade_program_table,
    jsonl_rows,
    key_recording_judge,
    offline_hub,
    point_at_local_copy,
    published_files,
    rollout_state,
    row_state,
    score_completion,
    score_rollouts,
    scripted_eval,
    serve_app,
    write_jsonl,
)
from verifiers.testing.evalrun import run_vf_eval
from verifiers.testing.file_server import serve_folder
from verifiers.testing.hub_dataset import write_hub_dataset
from verifiers.testing.judged_tasks import (
    JUDGED_TASK_CHECKS,
    UPSTREAM_JUDGED_DEFAULTS,
    SdkGradingTable,
    judged_environment,
    problems_of,
    sdk_grading_table,
    signature_defaults,
    table_messages,
    verdict_judge,
)
from verifiers.testing.ports import free_port, wait_listening
from verifiers.testing.programs import assert_scored, score_fenced_programs
from verifiers.testing.responders import (
    ArithmeticResponder,
    GateResponder,
    Reply,
    Responder,
    ScriptResponder,
    SequenceResponder,
)
from verifiers.testing.samples import reference_stdout, write_sample
from verifiers.testing.server import Fault, ScriptedServer
from verifiers.testing.stalls import assert_stuck_grading_does_not_stall
from verifiers.testing.tokenizer import decode, encode, encode_chat, encode_completion

__all__ = [
    "JUDGED_TASK_CHECKS",
    "UPSTREAM_JUDGED_DEFAULTS",
    "ArithmeticResponder",
    "Fault",
    "GateResponder",
    "Reply",
    "Responder",
    "ScriptResponder",
    "ScriptedServer",
    "SdkGradingTable",
    "SequenceResponder",
    "assert_replies_scored",
    "assert_scored",
    "assert_stuck_grading_does_not_stall",
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
    "reference_stdout",
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
    "write_sample",
]
