"""`vf-eval evals.toml`: upstream's multi-environment eval configs.

Reference: upstream 0.3.1 legacy/utils/eval_utils.py load_toml_config (global defaults,
[[eval]], [[ablation]] sweeps, id/args/sampling aliases), legacy/scripts/eval.py (a config runs
every eval, CLI options ignored, results saved), configs/eval/*.toml at upstream tag v0.3.0.
"""

import json
from pathlib import Path

import pytest
from command_kit import run_command

from verifiers.cli.eval_config import load_eval_config
from verifiers.errors import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "evals.toml"
    path.write_text(text)
    return path


def test_two_environments_give_two_result_dirs(tmp_path, server):
    """upstream 0.3.1: each [[eval]] of a config is run, with top-level defaults, and saved."""
    config = write(
        tmp_path,
        f'model = "m"\napi_base_url = "{server.base_url}"\nnum_examples = 2\n'
        "rollouts_per_example = 1\n\n"
        '[[eval]]\nid = "arithmetic"\n\n'
        '[[eval]]\nenv_id = "arithmetic"\nname = "arith-big"\nrollouts_per_example = 2\n'
        "[eval.args]\nseed = 5\n[eval.sampling]\ntemperature = 0.5\n",
    )
    proc = run_command("verifiers.cli.eval", config, "-d", "-n", 9, cwd=tmp_path, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert "these options are ignored: --num-examples" in proc.stderr
    evals = tmp_path / "outputs" / "evals"
    assert sorted(p.name for p in evals.iterdir()) == ["arith-big--m", "arithmetic--m"]
    (plain,) = (evals / "arithmetic--m").iterdir()
    (big,) = (evals / "arith-big--m").iterdir()
    plain_meta = json.loads((plain / "metadata.json").read_text())
    big_meta = json.loads((big / "metadata.json").read_text())
    assert plain_meta["status"] == big_meta["status"] == "complete"
    assert plain_meta["num_rollouts"] == 2 and plain_meta["env_args"] == {}
    assert big_meta["num_rollouts"] == 4 and big_meta["env_args"] == {"seed": 5}
    assert big_meta["name"] == "arith-big" and big_meta["sampling_args"] == {"temperature": 0.5}
    assert server.request_count == 6
    assert sum(1 for r in server.requests if r.get("temperature") == 0.5) == 4


def test_one_failing_environment_does_not_stop_the_others(tmp_path, server):
    """A config's evaluations are independent: a missing environment is reported, the rest run,
    and the exit status says something failed."""
    config = write(
        tmp_path,
        f'model = "m"\napi_base_url = "{server.base_url}"\nnum_examples = 1\n'
        'rollouts_per_example = 1\n[[eval]]\nid = "no-such-env"\n[[eval]]\nid = "arithmetic"\n',
    )
    proc = run_command("verifiers.cli.eval", config, "-d", cwd=tmp_path, timeout=180)
    assert proc.returncode == 1
    assert "no-such-env: no environment 'no-such-env'" in proc.stderr
    assert server.request_count == 1


def test_defaults_and_per_eval_overrides(tmp_path):
    """upstream 0.3.1 load_toml_config: per-eval fields over the top-level ones; a table's own
    endpoint_id drops the inherited model; relative endpoints_path is next to the config."""
    path = write(
        tmp_path,
        'model = "top"\nnum_examples = 7\nendpoints_path = "reg/endpoints.toml"\n'
        '[[eval]]\nid = "a"\nnum_examples = 2\n'
        '[[eval]]\nid = "b"\nendpoint_id = "alias"\n',
    )
    a, b = load_eval_config(path)
    assert a["env_id"] == "a" and a["num_examples"] == 2 and a["model"] == "top"
    assert b["num_examples"] == 7 and b["endpoint_id"] == "alias" and "model" not in b
    assert a["endpoints_path"] == str((tmp_path / "reg" / "endpoints.toml").resolve())


def test_sampling_tables_and_chat_template_mirroring(tmp_path):
    """upstream 0.3.1 normalize_sampling_config: [sampling] is sampling_args; reasoning_effort
    and enable_thinking are also mirrored into extra_body.chat_template_kwargs."""
    path = write(
        tmp_path,
        '[[eval]]\nid = "a"\n[eval.sampling]\nmax_tokens = 64\nenable_thinking = false\n',
    )
    (a,) = load_eval_config(path)
    assert a["sampling_args"] == {
        "max_tokens": 64,
        "enable_thinking": False,
        "extra_body": {"chat_template_kwargs": {"enable_thinking": False}},
    }


def test_ablation_sweeps_are_a_cartesian_product(tmp_path):
    """upstream 0.3.1 _expand_ablation: [ablation.sweep] x [ablation.sweep.args], fixed args
    kept, globals applied."""
    path = write(
        tmp_path,
        'num_examples = 3\n[[eval]]\nid = "plain"\n'
        '[[ablation]]\nid = "swept"\nargs = {split = "test"}\n'
        "[ablation.sweep]\ntemperature = [0.0, 1.0]\n"
        '[ablation.sweep.args]\ndifficulty = ["easy", "hard"]\n',
    )
    plain, *swept = load_eval_config(path)
    assert plain["env_id"] == "plain" and plain["env_args"] == {}
    assert len(swept) == 4
    assert {(c["temperature"], c["env_args"]["difficulty"]) for c in swept} == {
        (0.0, "easy"), (0.0, "hard"), (1.0, "easy"), (1.0, "hard"),
    }  # fmt: skip
    assert all(c["env_args"]["split"] == "test" and c["num_examples"] == 3 for c in swept)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[eval]\nid = "a"\n', "write [[eval]] (an array of tables), not [eval]"),
        ('model = "m"\n', "has no [[eval]] or [[ablation]] section"),
        ('[[eval]]\nid = "a"\ncolour = 1\n', "unknown field(s) colour"),
        ('[[eval]]\nid = "a"\nenv_id = "b"\n', "sets both id and env_id"),
        ("[[eval]]\nnum_examples = 1\n", "every evaluation needs an id"),
        ('[[eval]]\nid = "a"\nargs = {x = 1}\nenv_args = {x = 2}\n', "x set in both args"),
        ('[[eval]]\nid = "a"\n[eval.taskset]\nid = "t"\n', "v1 composable environment"),
        ('[[ablation]]\nid = "a"\n[ablation.sweep]\ntemperature = 1.0\n', "must be lists"),
        ('[[ablation]]\nid = "a"\n', "needs a non-empty [ablation.sweep]"),
        ("[[eval]\n", "is not valid TOML"),
    ],
)
def test_bad_configs_are_refused(tmp_path, text, message):
    """upstream 0.3.1 load_toml_config's validation."""
    with pytest.raises(ConfigError, match=None) as e:
        load_eval_config(write(tmp_path, text))
    assert message in str(e.value)


def test_bad_config_is_a_usage_error(tmp_path):
    """A broken config is one clear line and exit status 2 from the real command."""
    path = write(tmp_path, '[[eval]]\nid = "a"\ncolour = 1\n')
    proc = run_command("verifiers.cli.eval", path, cwd=tmp_path)
    assert proc.returncode == 2 and "unknown field(s) colour" in proc.stderr
    assert "Traceback" not in proc.stderr
