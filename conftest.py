"""Test layers (issue 29 item 6): ``pytest -m "not e2e and not slow"`` is the unit layer.

``e2e`` is decided here by path, for files that are end-to-end as a whole (other processes: the
vf-eval command, environment servers, killed hub servers, a Ray cluster, a browser, installs),
and for the hub's PostgreSQL + S3 deployment; ``slow`` marks single tests measured slow
(``--durations``) that the unit layer can do without. Both still run in ``make test``. Markers are
registered in the root pyproject's [tool.pytest.ini_options].
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent

# Whole files (or folders) that are end-to-end: relative to the repository root.
E2E_PATHS = (
    "tests/",  # the cross-package end-to-end suite, except UNIT_FILES
    "packages/verifiers/tests/ray/",  # a real multi-node Ray cluster per module
    # vf-eval as a command in another process
    "packages/verifiers/tests/test_vf_eval.py",
    "packages/verifiers/tests/test_vf_eval_config.py",
    "packages/verifiers/tests/test_vf_eval_defaults.py",
    "packages/verifiers/tests/test_vf_eval_flags.py",
    "packages/verifiers/tests/test_vf_eval_summary.py",
    "packages/verifiers/tests/test_stand_in_cli.py",
    # environment servers in worker processes, over ZeroMQ
    "packages/verifiers/tests/test_serve.py",
    "packages/verifiers/tests/test_serve_security.py",
    "packages/verifiers/tests/test_prime_rl_replay.py",
    # every sandbox tier (a single-node Ray among them) and the image tier's registry
    "packages/verifiers/tests/test_sandbox_isolation.py",
    "packages/verifiers/tests/test_sandbox_providers.py",
    "packages/verifiers/tests/test_sandbox_env_images.py",
    "packages/verifiers/tests/test_sandbox_image_hostile.py",
    # hub servers killed and restarted; the upstream prime CLI as a command
    "packages/hub-server/tests/test_reliability.py",
    "packages/hub-server/tests/test_leftovers.py",
    "packages/hub-server/tests/test_public_prime_cli.py",
    "packages/hub-server/tests/test_web_browser.py",  # chromium through chromedriver
    "packages/hub-server/tests/test_install_e2e.py",  # uv installs from a served hub
    "packages/viewer/tests/test_browser.py",  # chromium through chromedriver
)
# Files under an E2E_PATHS folder that are unit checks (they read the tree, start nothing).
UNIT_FILES = (
    "tests/test_environment_imports.py",
    "tests/test_no_outside_references.py",
    "tests/test_test_layers.py",
    "tests/test_public_api.py",
)
# Single tests measured slow: 0.4 s or more each (setup included) in a run of the rest of
# the suite with --durations on 2 cores shared with other runs; a whole file where its table
# shares one expensive fixture. Entries are node ids without parameters, or a file.
SLOW_TESTS = frozenset(
    {
        "environments/mini-swe-agent-plus/tests/test_attacks.py",  # every attack in a sandbox
        "environments/deepdive/tests/test_deepdive.py::test_judge_max_retries_bounds_requests_to_a_failing_judge",
        "environments/gpqa/tests/test_gpqa.py::test_same_seed_same_order_in_another_process",
        "environments/i3-code/tests/test_attacks.py::test_attack_row",
        "environments/i3-code/tests/test_i3_code.py::test_bad_programs_and_malformed_output",
        "environments/i3-code/tests/test_i3_code.py::test_infinite_loop_is_cut_at_the_timeout_without_stalling_others",
        "environments/i3-code/tests/test_i3_code.py::test_right_and_wrong_solutions",
        "environments/i3-code/tests/test_i3_code.py::test_vf_eval_against_the_scripted_server",
        "environments/i3-logic/tests/families/test_calcudoko.py::test_rows_partition_the_grid_and_hold_their_answer",
        "environments/i3-logic/tests/families/test_cryptarithm.py::test_rows_have_one_solution_and_right_replies_are_right",
        "environments/i3-logic/tests/families/test_game_of_24.py::test_every_solution_of_a_small_puzzle_is_accepted_and_nothing_else",
        "environments/i3-logic/tests/families/test_norinori.py::test_every_small_set_of_dominoes_is_graded_like_the_judge",
        "environments/i3-logic/tests/test_real_rows.py::test_vf_eval_over_the_default_rows_scores_the_scripted_replies",
        "environments/i3-math/tests/test_grading_table.py::test_sample_through_the_pool",
        "environments/i3-math/tests/test_i3_math.py::test_pathological_answer_times_out_without_stalling_others",
        "environments/i3-science/tests/test_grading_table.py::test_sample_through_the_pool",
        "environments/i3-science/tests/test_i3_science.py::test_grading_table",
        "environments/i3-science/tests/test_i3_science.py::test_pathological_answer_times_out_without_stalling_others",
        "environments/i3-science/tests/test_i3_science.py::test_vf_eval_with_judge",
        "environments/livecodebench/tests/test_attacks.py::test_attack_row",
        "environments/livecodebench/tests/test_livecodebench.py::test_right_and_wrong_solutions",
        "environments/livecodebench/tests/test_livecodebench.py::test_sandbox_that_cannot_start_is_masked",
        "environments/livecodebench/tests/test_livecodebench.py::test_strictness_loops_and_crashes",
        "environments/livecodebench/tests/test_livecodebench.py::test_vf_eval_against_the_scripted_server",
        "environments/mini-swe-agent-plus/tests/test_images.py::test_image_rows_run_end_to_end",
        "environments/mini-swe-agent-plus/tests/test_images.py::test_rows_given_as_files_run_on_the_image_provider_too",
        "environments/mini-swe-agent-plus/tests/test_images.py::test_the_cheat_works_when_graded_in_the_agents_sandbox",
        "environments/mini-swe-agent-plus/tests/test_mini_swe_agent_plus.py::test_editing_the_tests_scores_zero",
        "environments/mini-swe-agent-plus/tests/test_mini_swe_agent_plus.py::test_gold_fix_scores_one_and_no_edit_scores_zero",
        "environments/mini-swe-agent-plus/tests/test_mini_swe_agent_plus.py::test_hanging_command_is_cut_and_the_rollout_goes_on",
        "environments/mini-swe-agent-plus/tests/test_mini_swe_agent_plus.py::test_hidden_tests_are_not_in_the_sandbox_during_the_rollout",
        "environments/mini-swe-agent-plus/tests/test_mini_swe_agent_plus.py::test_hitting_max_turns_scores_zero_without_grading",
        "environments/mini-swe-agent-plus/tests/test_mini_swe_agent_plus.py::test_naive_fix_that_breaks_a_pass_to_pass_test_scores_zero",
        "environments/mini-swe-agent-plus/tests/test_mini_swe_agent_plus.py::test_one_tool_call_per_turn",
        "environments/mini-swe-agent-plus/tests/test_mini_swe_agent_plus.py::test_repeated_timeouts_end_the_rollout_with_zero",
        "environments/mini-swe-agent-plus/tests/test_mini_swe_agent_plus.py::test_swebench_test_patch_and_r2e_expected_output_rows",
        "environments/mini-swe-agent-plus/tests/test_mini_swe_agent_plus.py::test_tool_errors_are_messages_not_crashes",
        "environments/mini-swe-agent-plus/tests/test_mini_swe_agent_plus.py::test_vf_eval_run",
        "environments/mini-swe-agent-plus/tests/test_mini_swe_agent_plus.py::test_wiped_repository_scores_zero_without_error",
        "packages/hub-server/tests/test_auth.py::test_pip_style_basic_auth_reads_private_index",
        "packages/hub-server/tests/test_auth.py::test_private_environment_is_invisible_without_a_granting_token",
        "packages/hub-server/tests/test_cli_help.py::test_an_unreachable_database_is_one_clear_line_not_a_traceback",
        "packages/hub-server/tests/test_cli_help.py::test_serve_help_lists_every_setting_with_its_variable_default_and_meaning",
        "packages/hub-server/tests/test_compat.py::test_prime_cli_duplicate_content_hash_and_version_rules",
        "packages/hub-server/tests/test_compat.py::test_prime_cli_inspect_lists_and_reads_the_source_archive",
        "packages/hub-server/tests/test_compat.py::test_prime_cli_inspect_respects_private_access",
        "packages/hub-server/tests/test_compat.py::test_prime_cli_links_login_and_hosted_only_features",
        "packages/hub-server/tests/test_docs_offline.py::test_redoc_renders_offline",
        "packages/hub-server/tests/test_docs_offline.py::test_swagger_ui_renders_offline",
        "packages/hub-server/tests/test_eval_rollouts.py::test_gc_removes_rollouts_whose_evaluation_went_with_its_version",
        "packages/hub-server/tests/test_eval_rollouts.py::test_path_and_key_tricks_find_nothing",
        "packages/hub-server/tests/test_eval_rollouts.py::test_private_environment_rollouts_are_for_members_only",
        "packages/hub-server/tests/test_latest_pointer.py::test_pointer_follows_publish_yank_unyank_and_delete",
        "packages/hub-server/tests/test_listing_queries.py::test_listing_query_count_does_not_grow_with_environments",
        "packages/hub-server/tests/test_listing_queries.py::test_listings_show_the_same_latest_version_as_the_environment",
        "packages/hub-server/tests/test_publish.py::test_yank_and_unyank",
        "packages/hub-server/tests/test_simple_api.py::test_download_counts",
        "packages/hub-server/tests/test_simple_api.py::test_global_index_and_ambiguous_names",
        "packages/hub-server/tests/test_simple_api.py::test_without_a_pass_through_unknown_names_are_not_found",
        "packages/hub-server/tests/test_upload_limits.py::test_chunked_body_over_the_cap_is_cut_off_while_streaming",
        "packages/hub-server/tests/test_upload_limits.py::test_chunked_upload_within_the_cap_still_publishes",
        "packages/hub-server/tests/test_upstream_names.py::test_non_ascii_names_are_refused_with_a_4xx",
        "packages/verifiers/tests/test_client.py::test_retries_dropped_connections_and_timeouts",
        "packages/verifiers/tests/test_code_env.py::test_code_env_grades_programs_in_sandboxes",
        "packages/verifiers/tests/test_code_env.py::test_sandbox_failures_retry_then_mask_and_kills_are_the_solutions_fault",
        "packages/verifiers/tests/test_environment.py::test_import_and_construction_configure_no_logging",
        "packages/verifiers/tests/test_environment.py::test_rollout_retries_on_invalid_model_response",
        "packages/verifiers/tests/test_environment.py::test_timeout_keeps_partial_state",
        "packages/verifiers/tests/test_exact_answers.py::test_math_rubric_agrees_with_every_row",
        "packages/verifiers/tests/test_exact_answers.py::test_pathological_answers_stop_at_the_timeout",
        "packages/verifiers/tests/test_exact_answers.py::test_trigonometry_in_degrees_grades_as_degrees",
        "packages/verifiers/tests/test_integrations_textarena.py::test_01x_module_path_keeps_the_01x_end_of_game",
        "packages/verifiers/tests/test_integrations_textarena.py::test_dataset_rows_are_the_opening_prompt_and_seeded_secret_words",
        "packages/verifiers/tests/test_integrations_textarena.py::test_missing_nltk_data_is_a_config_error_naming_the_download",
        "packages/verifiers/tests/test_integrations_textarena.py::test_scripted_game_feedback_final_message_and_rewards",
        "packages/verifiers/tests/test_integrations_textarena.py::test_unparsable_turns_are_invalid_moves_that_end_the_game",
        "packages/verifiers/tests/test_judge_rubric.py::test_judge_timeout_retried",
        "packages/verifiers/tests/test_judge_rubric.py::test_repeated_sync_evaluations_leave_no_open_sessions",
        "packages/verifiers/tests/test_logging_utils.py::test_import_configures_no_logging",
        "packages/verifiers/tests/test_math_rubric.py::test_bounded_queue_and_close_leaves_no_processes",
        "packages/verifiers/tests/test_math_rubric.py::test_cancelled_call_kills_its_worker_only",
        "packages/verifiers/tests/test_math_rubric.py::test_crashed_worker_is_an_infra_error_on_the_rollout",
        "packages/verifiers/tests/test_math_rubric.py::test_equivalences_and_wrong_answers",
        "packages/verifiers/tests/test_math_rubric.py::test_first_gradings_of_a_fresh_process_are_right_and_the_kill_applies",
        "packages/verifiers/tests/test_math_rubric.py::test_hard_kill_scores_zero_and_worker_is_replaced",
        "packages/verifiers/tests/test_math_rubric.py::test_pathological_answer_times_out_while_others_finish",
        "packages/verifiers/tests/test_math_rubric.py::test_timeout_kills_only_that_worker",
        "packages/verifiers/tests/test_math_warm_start.py::test_a_grading_worker_imports_math_verify_not_the_sdk",
        "packages/verifiers/tests/test_math_warm_start.py::test_names_resolve_on_first_use_and_submodule_paths_still_reach_deep_modules",
        "packages/verifiers/tests/test_process_pool_fork_server.py::test_calls_timeouts_and_replacement",
        "packages/verifiers/tests/test_process_pool_fork_server.py::test_close_stops_the_workers_and_the_server",
        "packages/verifiers/tests/test_process_pool_fork_server.py::test_workers_do_not_import_the_parents_main_script",
        "packages/verifiers/tests/test_mixture.py::test_a_mixture_file_as_the_id_of_an_eval_config",
        "packages/verifiers/tests/test_mixture.py::test_shipped_config_has_the_six_environments_and_its_shares",
        "packages/verifiers/tests/test_mixture.py::test_vf_eval_runs_the_shipped_mix",
        "packages/verifiers/tests/test_sandbox.py::test_dead_agent_and_lifetime_raise_sandbox_error",
        "packages/verifiers/tests/test_sandbox.py::test_fork_bomb_is_contained_host_responsive",
        "packages/verifiers/tests/test_sandbox.py::test_infinite_loop_and_background_tree_killed_at_timeout",
        "packages/verifiers/tests/test_sandbox.py::test_nothing_remains_after_close",
        "packages/verifiers/tests/test_sandbox.py::test_output_flood_is_capped",
        "packages/verifiers/tests/test_sandbox.py::test_sandboxes_and_zygote_die_with_their_host",
        "packages/verifiers/tests/test_sandbox_env.py::test_cancelled_generate_leaves_no_sandbox",
        "packages/verifiers/tests/test_sandbox_env.py::test_command_timeout_is_reported_to_the_model",
        "packages/verifiers/tests/test_sandbox_env.py::test_creation_failures_retry_with_backoff_then_mark_infra_error",
        "packages/verifiers/tests/test_sandbox_env.py::test_ctrl_c_mid_rollout_leaves_no_sandbox",
        "packages/verifiers/tests/test_sandbox_env.py::test_python_env_keeps_state_between_calls_not_rollouts",
        "packages/verifiers/tests/test_sandbox_env.py::test_rollout_timeout_still_scores_then_releases",
        "packages/verifiers/tests/test_sandbox_env.py::test_sandbox_is_acquired_while_the_first_model_call_runs",
        "packages/verifiers/tests/test_sandbox_env_compat.py::test_bulk_delete_by_id_and_label",
        "packages/verifiers/tests/test_sandbox_env_compat.py::test_client_files_timeouts_and_errors",
        "packages/verifiers/tests/test_sandbox_env_compat.py::test_own_setup_state_creates_through_the_client_and_is_released",
        "packages/verifiers/tests/test_sandbox_env_compat.py::test_timeout_errors_match_prime_sandboxes_classes_when_imported",
        "packages/verifiers/tests/test_sandbox_image.py::test_a_pull_in_one_event_loop_serves_the_next",
        "packages/verifiers/tests/test_sandbox_image.py::test_image_links_never_lead_to_host_files",
        "packages/verifiers/tests/test_sandbox_image.py::test_network_only_when_asked_for",
        "packages/verifiers/tests/test_sandbox_image.py::test_pull_and_run",
        "packages/verifiers/tests/test_sandbox_image.py::test_pull_failures_are_infra_errors_naming_image_and_registry",
        "packages/verifiers/tests/test_sandbox_image.py::test_pull_is_cached_across_providers",
        "packages/verifiers/tests/test_testing_server.py::test_cli_serves_until_sigterm",
        "packages/verifiers/tests/test_testing_server.py::test_fault_500_503_and_match",
        "packages/verifiers/tests/test_testing_server.py::test_fault_timeout",
        "packages/verifiers/tests/test_testing_server.py::test_models_and_completions",
        "packages/viewer/tests/test_cli.py::test_vf_view_prints_the_url_it_serves_and_stops_on_ctrl_c",
        "packages/viewer/tests/test_pages.py::test_an_example_group_side_by_side_and_two_runs_compared",
        "packages/viewer/tests/test_pages.py::test_every_response_carries_the_csp",
        "packages/viewer/tests/test_pages.py::test_run_page_lists_rollouts_with_filters_and_a_histogram",
        "packages/viewer/tests/test_pages.py::test_untrusted_strings_are_escaped_everywhere",
    }
)


def layer_of(relpath: str, nodeid: str, params_id: str = "") -> str | None:
    """``"e2e"``, ``"slow"`` or None (unit) for a test at `relpath` (posix, repository-relative)
    with node id `nodeid` and parametrization id `params_id` (``"sqlite-api list"``)."""
    if relpath not in UNIT_FILES and any(
        relpath == p or (p.endswith("/") and relpath.startswith(p)) for p in E2E_PATHS
    ):
        return "e2e"
    if "postgres" in params_id.split("-"):  # the hub's production deployment: PostgreSQL, S3
        return "e2e"
    if relpath in SLOW_TESTS or nodeid.split("[", 1)[0] in SLOW_TESTS:
        return "slow"
    return None


# Files that start Ray (a multi-node test cluster, or the sandbox tier's single-node instance):
# under `pytest -n 2 --dist loadfile` they are one unit of work, so no two Ray instances compete
# for the two cores at once.
RAY_PATHS = (
    "packages/verifiers/tests/ray/",
    "packages/verifiers/tests/test_sandbox_isolation.py",
    "packages/verifiers/tests/test_sandbox_providers.py",
)


def work_unit_of(nodeid: str) -> str:
    """What pytest-xdist hands one worker as a whole: the test's file (its module fixtures, hub
    servers and environments, are made once and its tests keep their order), or one unit for
    every file that starts Ray."""
    relpath = nodeid.split("::", 1)[0]
    if any(relpath == p or (p.endswith("/") and relpath.startswith(p)) for p in RAY_PATHS):
        return "ray"
    return relpath


@pytest.hookimpl(optionalhook=True)  # plain `pytest -p no:xdist` still runs
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """`--dist loadfile`, with the Ray files as one unit (`work_unit_of`). (xdist's own
    `loadgroup` marks do not reach pytest 9's node ids.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileOrRayScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit_of(nodeid)

    return FileOrRayScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            relpath = Path(str(item.path)).resolve().relative_to(ROOT).as_posix()
        except ValueError:  # a test outside this repository
            continue
        callspec = getattr(item, "callspec", None)
        layer = layer_of(relpath, item.nodeid, callspec.id if callspec else "")
        if layer is not None:
            item.add_marker(getattr(pytest.mark, layer))


@pytest.fixture
def vf_eval_in_process(monkeypatch: pytest.MonkeyPatch):
    """`vf_eval_in_process(cwd, env_id, base_url, *args) -> (rows, metadata)`, as
    `verifiers.testing.run_vf_eval` returns them, from vf-eval's `main` run in this process in
    the folder `cwd`. A new interpreter per run only imports the same modules again (seconds
    each); vf-eval as a command keeps its own tests (test_vf_eval*.py) and the sandboxed
    environments' runs."""
    import json
    import logging

    from verifiers.cli.eval import main

    def run(cwd: Path, env_id: str, base_url: str, *args: object, model: str = "m"):
        argv = [env_id, "-m", model, "-b", base_url, "--no-progress", *map(str, args)]
        try:
            with monkeypatch.context() as patch:
                patch.chdir(cwd)
                rc = main(argv)
        finally:  # main() logs to this test's stderr through a root handler it names vf-eval
            root = logging.getLogger()
            for handler in [h for h in root.handlers if h.get_name() == "vf-eval"]:
                root.removeHandler(handler)
        assert rc == 0, f"vf-eval {' '.join(argv)} exited {rc} (its stderr is above)"
        run_dir = sorted((Path(cwd) / "outputs" / "evals" / f"{env_id}--{model}").iterdir())[-1]
        rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
        return rows, json.loads((run_dir / "metadata.json").read_text())

    return run
