"""What `vf-eval`'s summary tells the user (issue 27, "Summaries that mislead"): a real vf-eval
subprocess against the scripted server on loopback, asserting the printed output."""

import json
from pathlib import Path

from command_kit import vf_eval

from verifiers.testing import Fault, ScriptedServer, run_vf_eval

ENVS = Path(__file__).parent / "envs"


def metadata(tmp_path, env, model="m"):
    (run,) = sorted((tmp_path / "outputs" / "evals" / f"{env}--{model}").iterdir())
    return json.loads((run / "metadata.json").read_text())


def test_a_run_with_no_scored_rollout_shows_no_mean_reward_and_the_first_error(tmp_path):
    """Issue 27: a run where every rollout failed reported `reward 0.0000 ± 0.0000`."""
    with ScriptedServer() as srv:
        srv.add_fault(Fault(status=400, times=None, message="model m is not served here"))
        proc = vf_eval("arithmetic", "-m", "m", "-b", srv.base_url, "-n", 2, "-r", 2, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "0.0000 ± 0.0000" not in proc.stdout and "pass@" not in proc.stdout
    assert "none (no rollout scored)" in proc.stdout
    assert "4 (0 scored, 4 failed)" in proc.stdout
    out = " ".join(proc.stdout.split())  # rich wraps long lines
    assert "first error: ModelError: HTTP 400" in out and "model m is not served here" in out
    meta = metadata(tmp_path, "arithmetic")
    assert meta["avg_reward"] is None and meta["scored_rollouts"] == 0
    assert meta["pass_at_k"] == {} and meta["avg_metrics"] == {}


def test_a_404_on_chat_completions_names_the_endpoint(tmp_path):
    """Issue 27: `-b` pointing at a server that is not a model (the hub) answers 404."""
    with ScriptedServer() as srv:
        srv.add_fault(Fault(status=404, times=None, message="Not Found"))
        proc = vf_eval("arithmetic", "-m", "m", "-b", srv.base_url, "-n", 1, "-r", 1, cwd=tmp_path)
    out = " ".join((proc.stdout + proc.stderr).split())  # rich wraps long lines
    assert proc.returncode == 1
    assert (
        f"The endpoint at {srv.base_url} has no /chat/completions: is it an "
        "OpenAI-compatible model server?"
    ) in out


def test_env_group_is_summarised_per_member_over_its_own_rollouts(tmp_path, monkeypatch):
    """Issue 27: the mixture's summary pooled metrics over different subsets without saying
    which; each member now has its reward and its own metrics over its own rollouts."""
    monkeypatch.setenv("PYTHONPATH", str(ENVS))
    with ScriptedServer() as srv:
        proc = vf_eval(
            "classic_env_group", "-m", "m", "-b", srv.base_url, "-n", 6, "-r", 1, cwd=tmp_path
        )
    assert proc.returncode == 0, proc.stderr
    lines = [" ".join(line.strip("│┃ ").split()) for line in proc.stdout.splitlines()]
    math_at = next(i for i, line in enumerate(lines) if line.startswith("env math"))
    calc_at = next(i for i, line in enumerate(lines) if line.startswith("env calculator"))
    math_rows = lines[math_at:calc_at] if math_at < calc_at else lines[math_at:]
    assert any(line.startswith("metric exact") for line in math_rows)
    meta = metadata(tmp_path, "classic_env_group")
    by_env = meta["by_env"]
    assert set(by_env) == {"math", "calculator"}
    assert "exact" in by_env["math"]["avg_metrics"]
    assert "exact" not in by_env["calculator"]["avg_metrics"]  # filled with 0.0 by the group
    assert by_env["math"]["num_rollouts"] + by_env["calculator"]["num_rollouts"] == 6
    for name, at in (("math", math_at), ("calculator", calc_at)):
        assert f"{by_env[name]['num_rollouts']} rollouts, reward" in lines[at]
    assert meta["metric_envs"]["exact"] == ["math"]
    assert meta["avg_metrics"]["exact"] == by_env["math"]["avg_metrics"]["exact"]
    assert sorted(meta["metric_envs"]["num_turns"]) == ["calculator", "math"]


def test_a_repeated_warning_is_printed_once_and_no_datasets_bar_leaks(tmp_path, monkeypatch):
    """Issue 27: the mixture's dataset warning was printed four times and a `datasets`
    progress bar leaked into the output."""
    monkeypatch.setenv("PYTHONPATH", str(ENVS))
    with ScriptedServer() as srv:
        proc = vf_eval(
            "repeated_warning_group", "-m", "m", "-b", srv.base_url, "-n", 2, cwd=tmp_path
        )
    assert proc.returncode == 0, proc.stderr
    both = proc.stdout + proc.stderr
    assert both.count("using the bundled sample of some/dataset") == 1
    assert "Map:" not in both and "examples/s" not in both


def test_a_single_turn_answer_is_a_completed_rollout(tmp_path, server):
    """Issue 27: a single-turn answer was reported as `stop_condition: max_turns_reached`."""
    rows, _ = run_vf_eval(tmp_path, "arithmetic", server.base_url, "-n", 2, "-r", 1)
    assert [r["stop_condition"] for r in rows] == ["single_turn_completed"] * 2
    assert all(r["is_completed"] and not r["is_truncated"] for r in rows)


def test_the_results_path_is_printed_whole_on_a_line_of_its_own(tmp_path, server):
    """Issue 27: the results path was cut at 80 columns (`outputs/evals/intellect3-mix--scrip…`)."""
    model = "a-model-with-a-name-long-enough-to-push-the-results-path-past-eighty-columns"
    proc = vf_eval("arithmetic", "-m", model, "-b", server.base_url, "-n", 1, "-r", 1, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (run,) = (tmp_path / "outputs" / "evals" / f"arithmetic--{model}").iterdir()
    path = str(run.relative_to(tmp_path))
    assert len(path) > 80
    assert path in proc.stdout.splitlines()
    assert "…" not in proc.stdout.split("example")[0]
