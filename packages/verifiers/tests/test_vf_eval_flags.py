"""vf-eval's upstream flags, each driven through the real command against a scripted server.

Reference: upstream 0.3.1 `vf-eval --help` (legacy/scripts/eval.py, legacy/utils/eval_utils.py,
legacy/utils/path_utils.py, legacy/utils/heartbeat.py).
"""

import functools
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from command_kit import run_command

PROBE_ENV = """
import json, os
from verifiers.examples.arithmetic import load_environment as arithmetic

def load_environment(num_examples: int = 10, judge_model: str = "none", seed: int = 0):
    with open(os.environ["PROBE_OUT"], "a") as f:
        f.write(json.dumps({"num_examples": num_examples, "judge_model": judge_model,
                            "seed": seed}) + "\\n")
    return arithmetic(num_examples=num_examples, seed=seed)
"""


@pytest.fixture
def probe(tmp_path):
    """An environment `probe-env` whose load_environment records its arguments, with
    `[tool.verifiers.eval]` defaults (4 examples x 2 rollouts) in the pyproject beside it."""
    envs = tmp_path / "envs"
    envs.mkdir()
    (envs / "probe_env.py").write_text(PROBE_ENV)
    (envs / "pyproject.toml").write_text(
        '[project]\nname = "probe-env"\n\n[tool.verifiers.eval]\n'
        "num_examples = 4\nrollouts_per_example = 2\n"
    )
    out = tmp_path / "probe.jsonl"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(envs), os.environ.get("PYTHONPATH", "")]),
        "PROBE_OUT": str(out),
    }
    return env, out


# vf-eval exactly as given: these tests choose the display flags themselves (-f and
# --no-progress exclude each other)
vf_eval = functools.partial(run_command, "verifiers.cli.eval")


def calls(out: Path) -> list[dict]:
    return [json.loads(line) for line in out.read_text().splitlines()]


def only_run(base: Path) -> Path:
    (run,) = sorted(base.iterdir())
    return run


def rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def test_a_is_env_args_into_load_environment(tmp_path, server, probe):
    """upstream 0.3.1: `-a` is --env-args; `vf-eval env -a '{"judge_model": ...}'` reaches
    load_environment (it used to be read as sampling args here)."""
    env, out = probe
    proc = vf_eval(
        "probe-env", "-m", "m", "-b", server.base_url, "-n", 2, "-r", 1, "-d",
        "-a", '{"judge_model": "my-judge", "num_examples": 3}',
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert calls(out) == [{"num_examples": 3, "judge_model": "my-judge", "seed": 0}]
    assert all("judge_model" not in r for r in server.requests)
    meta = json.loads(
        (only_run(tmp_path / "outputs/evals/probe-env--m") / "metadata.json").read_text()
    )
    assert meta["env_args"] == {"judge_model": "my-judge", "num_examples": 3}


def test_S_sampling_args_reach_the_request_body(tmp_path, server):
    """upstream 0.3.1: `-S` is --sampling-args; its keys win over -t/-T, which fill the rest."""
    proc = vf_eval(
        "arithmetic", "-m", "m", "-b", server.base_url, "-n", 2, "-r", 1, "-d",
        "-S", '{"top_p": 0.25, "max_tokens": 7, "extra_body": {"min_p": 0.1}}',
        "-t", 99, "-T", 0.3,
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert len(server.requests) == 2
    for body in server.requests:
        assert body["top_p"] == 0.25 and body["max_tokens"] == 7
        assert body["temperature"] == 0.3 and body["min_p"] == 0.1


def test_num_examples_and_rollouts_default_to_the_environments_pyproject(tmp_path, server, probe):
    """upstream 0.3.1 get_env_eval_defaults: [tool.verifiers.eval] beside the module gives -n/-r
    when the command line does not; an explicit -n wins."""
    env, _ = probe
    proc = vf_eval("probe-env", "-m", "m", "-b", server.base_url, "-d", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert server.request_count == 4 * 2
    server.clear()
    proc = vf_eval(
        "probe-env", "-m", "m", "-b", server.base_url, "-d", "-n", 1, cwd=tmp_path, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert server.request_count == 1 * 2


def test_shuffle_seed_defaults_to_zero(tmp_path, server):
    """upstream 0.3.1: --shuffle-seed defaults to 0 when --shuffle is given."""

    def questions(*more):
        server.clear()
        base = ("arithmetic", "-m", "m", "-b", server.base_url, "-n", 3, "-r", 1, "-c", 1)
        proc = vf_eval(*base, "-d", "--no-save", *more, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return [r["messages"][-1]["content"] for r in server.requests]

    plain = questions()
    default_seed = questions("--shuffle")
    assert default_seed == questions("--shuffle", "--shuffle-seed", 0)
    assert default_seed != plain
    assert questions("--shuffle", "--shuffle-seed", 1) != default_seed


def test_results_go_to_the_local_environment_folder(tmp_path, server):
    """upstream 0.3.1 path_utils: without -o, results go to <env-dir-path>/<module>/outputs when
    that folder exists, else ./outputs; -o names the base directly."""
    (tmp_path / "environments" / "arithmetic").mkdir(parents=True)
    (tmp_path / "mine" / "arithmetic").mkdir(parents=True)
    base = ("arithmetic", "-m", "m", "-b", server.base_url, "-n", 1, "-r", 1, "-d")
    assert vf_eval(*base, cwd=tmp_path).returncode == 0
    only_run(tmp_path / "environments/arithmetic/outputs/evals/arithmetic--m")
    assert vf_eval(*base, "--env-dir-path", "mine", cwd=tmp_path).returncode == 0
    only_run(tmp_path / "mine/arithmetic/outputs/evals/arithmetic--m")
    assert vf_eval(*base, "-o", "elsewhere", cwd=tmp_path).returncode == 0
    only_run(tmp_path / "elsewhere/evals/arithmetic--m")
    assert not (tmp_path / "outputs").exists()


def test_provider_shorthand_sets_the_base_url():
    """upstream 0.3.1 PROVIDER_CONFIGS: `-p vllm` means http://localhost:8000/v1; an explicit -b
    wins over the provider. (Resolved settings: a run would need a server on port 8000.)"""
    (e,) = settings_for("-p", "vllm").endpoints
    assert (e.url, e.api_key_var) == ("http://localhost:8000/v1", "VLLM_API_KEY")
    (e,) = settings_for("-p", "vllm", "-b", "http://127.0.0.1:9/v1").endpoints
    assert (e.url, e.api_key_var) == ("http://127.0.0.1:9/v1", "VLLM_API_KEY")


def test_accepted_flags_run(tmp_path, server):
    """upstream 0.3.1 flags with nothing to change here are accepted: -N (parsed, unused
    upstream too), --disable-env-server, -w auto / 1, -s, -D without -H, -f, -i,
    --api-client-type openai_chat_completions."""
    proc = vf_eval(
        "arithmetic", "-m", "m", "-b", server.base_url, "-n", 2, "-r", 2,
        "-N", "--disable-env-server", "-w", 1, "-s", "-D", "me/results", "-f", "-i",
        "--api-client-type", "openai_chat_completions",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert server.request_count == 4
    assert vf_eval(
        "arithmetic", "-m", "m", "-b", server.base_url, "-n", 1, "-r", 1, "-d", "-w", "auto",
        cwd=tmp_path,
    ).returncode == 0  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-d", "-f"], "--disable-tui and --fullscreen are mutually exclusive"),
        (["-H"], "--save-to-hf-hub is not available"),
        (["--header-from-state", "X-Session-ID: trajectory_id"], "--header-from-state is not"),
        (["-w", "4"], "--num-workers 4: there are no env server worker processes"),
        (["-w", "many"], "--num-workers must be 'auto' or an integer"),
        (["--api-client-type", "anthropic_messages"], "'anthropic_messages' is not available"),
        (["-p", "anthropic"], "'anthropic_messages' is not available"),
        (["-p", "nowhere"], "invalid choice: 'nowhere'"),
    ],
)
def test_upstream_flags_that_cannot_apply_say_why(tmp_path, args, message):
    """upstream 0.3.1 options this vf-eval cannot honour fail with one clear line, exit 2."""
    proc = vf_eval("arithmetic", "-b", "http://127.0.0.1:9/v1", *args, cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "outputs").exists()


def test_verbose_logs_the_settings_and_abbreviated_summary_skips_the_example(tmp_path, server):
    """upstream 0.3.1: -v debug logging (it logs the evaluation config); the summary shows an
    example prompt and completion unless -A."""
    base = ("arithmetic", "-m", "m", "-b", server.base_url, "-n", 1, "-r", 1, "--no-save")
    proc = vf_eval(*base, "-d", "-v", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "DEBUG verifiers.cli.eval: evaluation settings" in proc.stderr
    assert "example" in proc.stdout and "prompt: What is" in proc.stdout
    proc = vf_eval(*base, "-d", "-A", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "DEBUG" not in proc.stderr
    assert "reward" in proc.stdout and "prompt:" not in proc.stdout


class _Beats(BaseHTTPRequestHandler):
    paths: list[str] = []

    def do_GET(self):
        self.paths.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_heartbeat_url_is_pinged_as_rollouts_finish(tmp_path, server):
    """upstream 0.3.1 legacy/utils/heartbeat.py: a GET to --heartbeat-url on progress."""
    _Beats.paths = []
    monitor = ThreadingHTTPServer(("127.0.0.1", 0), _Beats)
    thread = threading.Thread(
        target=monitor.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    try:
        url = f"http://127.0.0.1:{monitor.server_address[1]}/beat?run=1"
        proc = vf_eval(
            "arithmetic", "-m", "m", "-b", server.base_url, "-n", 3, "-r", 1, "-d",
            "--heartbeat-url", url,
            cwd=tmp_path,
        )  # fmt: skip
    finally:
        monitor.shutdown()
        monitor.server_close()
    assert proc.returncode == 0, proc.stderr
    assert _Beats.paths and set(_Beats.paths) == {"/beat?run=1"}


def settings_for(*argv):
    from verifiers.cli.eval_options import build_parser
    from verifiers.cli.eval_settings import raw_from_args, resolve

    return resolve(raw_from_args(build_parser().parse_args(["arithmetic", *map(str, argv)])))


def test_provider_key_variable_and_overrides():
    """upstream 0.3.1 PROVIDER_CONFIGS: a provider gives base URL and key variable; -k / -b win."""
    (e,) = settings_for("-p", "openrouter").endpoints
    assert (e.url, e.api_key_var) == ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY")
    (e,) = settings_for("-p", "openrouter", "-k", "MY_KEY", "-b", "http://h/v1").endpoints
    assert (e.url, e.api_key_var) == ("http://h/v1", "MY_KEY")


def test_endpoint_registry_aliases_and_header_order(tmp_path):
    """upstream 0.3.1 load_endpoints / build_eval_config: -m is looked up as an endpoint_id
    (url/api_base_url, key/api_key_var aliases; several rows are replicas); --header wins over
    the row's headers; -b and -k together skip the registry."""
    reg = tmp_path / "endpoints.toml"
    reg.write_text(
        '[[endpoint]]\nendpoint_id = "pair"\nmodel = "real"\nurl = "http://a/v1"\nkey = "KA"\n'
        'headers = { "X-Team" = "row", "X-Row" = "1" }\n'
        '[[endpoint]]\nendpoint_id = "pair"\nmodel = "real"\napi_base_url = "http://b/v1"\n'
        'api_key_var = "KB"\n'
    )
    s = settings_for("-m", "pair", "-e", reg, "--header", "X-Team: cli")
    assert s.model == "real"
    assert [(e.url, e.api_key_var) for e in s.endpoints] == [
        ("http://a/v1", "KA"),
        ("http://b/v1", "KB"),
    ]
    assert s.endpoints[0].headers == {"X-Team": "cli", "X-Row": "1"}
    (one,) = settings_for("-m", "pair", "-e", reg, "-b", "http://c/v1").endpoints
    assert (one.url, one.api_key_var) == ("http://c/v1", "KA")
    direct = settings_for("-m", "pair", "-e", reg, "-b", "http://c/v1", "-k", "KC")
    assert direct.model == "pair" and direct.endpoints[0].url == "http://c/v1"


def test_state_columns_are_split_and_stripped():
    """upstream 0.3.1: -C is a comma-separated list, each name stripped."""
    assert settings_for("-C", " turn , timing,").state_columns == ["turn", "timing"]


def test_eval_defaults_only_from_the_environments_own_pyproject(tmp_path, monkeypatch):
    """upstream 0.3.1 get_env_eval_defaults reads the pyproject.toml beside the module; a
    single-file module's sits in site-packages, shared, so ours also checks [project].name."""
    from verifiers.cli.eval_settings import env_eval_defaults

    (tmp_path / "solo_env.py").write_text("def load_environment(): ...\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    section = "[tool.verifiers.eval]\nnum_examples = 9\nrollouts_per_example = 1\n"
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "solo-env"\n{section}')
    assert env_eval_defaults("solo-env") == {"num_examples": 9, "rollouts_per_example": 1}
    assert env_eval_defaults("owner/solo-env@1.0") == {"num_examples": 9, "rollouts_per_example": 1}
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "other-env"\n{section}')
    assert env_eval_defaults("solo-env") == {}
