"""What a new user of vf-eval meets first: the endpoint it picks when none is given, the key it
needs, a -n larger than the dataset, and the help texts (vf-eval's and the scripted server's)."""

import argparse
import json
import os

import pytest
from command_kit import run_command, vf_eval

from verifiers.cli.eval_options import build_parser
from verifiers.cli.eval_settings import UsageError, check_credentials, raw_from_args, resolve

KEY_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENROUTER_API_KEY", "VLLM_API_KEY", "VF_MODEL")


def clean_env(**extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    return {**env, **extra}


def test_no_endpoint_and_no_key_says_how_to_configure_one(tmp_path):
    """Nothing configured (no -b, $OPENAI_BASE_URL, provider or endpoints file) and no
    OPENAI_API_KEY: one line saying each way to name an endpoint, exit 2, before any work."""
    proc = vf_eval("arithmetic", "-n", 2, cwd=tmp_path, env=clean_env())
    assert proc.returncode == 2
    err = proc.stderr
    assert err.startswith("vf-eval: error: no model endpoint is configured")
    for way in ("-b/--api-base-url", "$OPENAI_BASE_URL", "./configs/endpoints.toml",
                "-p/--provider", "-k", "set OPENAI_API_KEY"):  # fmt: skip
        assert way in err
    assert "Traceback" not in err and not (tmp_path / "outputs").exists()


def settings_for(*argv):
    return resolve(raw_from_args(build_parser().parse_args(["arithmetic", *map(str, argv)])))


@pytest.fixture
def keyless(monkeypatch, tmp_path):
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)  # no ./configs/endpoints.toml
    return monkeypatch


@pytest.mark.parametrize(
    ("argv", "env", "url"),
    [
        # as before: OPENAI_API_KEY alone means OpenAI (the README's documented default)
        ((), {"OPENAI_API_KEY": "sk-x"}, "https://api.openai.com/v1"),
        (("-b", "https://api.openai.com/v1"), {"OPENAI_API_KEY": "sk-x"}, None),
        (("-p", "openrouter"), {"OPENROUTER_API_KEY": "k"}, "https://openrouter.ai/api/v1"),
        # a local or private server needs no key (upstream sends "EMPTY")
        (("-p", "vllm"), {}, "http://localhost:8000/v1"),
        (("-b", "http://gpu-box:8000/v1"), {}, None),
        ((), {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "http://127.0.0.1:9/v1"),
    ],
)
def test_endpoints_that_can_work_pass(keyless, argv, env, url):
    for k, v in env.items():
        keyless.setenv(k, v)
    s = settings_for(*argv)
    check_credentials(s)
    if url is not None:
        assert s.endpoints[0].url == url


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("-p", "openai"), "https://api.openai.com/v1 (from -p openai) needs an API key: "
         "$OPENAI_API_KEY is not set"),
        (("-b", "https://api.openai.com/v1"), "(from -b/--api-base-url) needs an API key"),
        (("-p", "openrouter"), "$OPENROUTER_API_KEY is not set"),
        (("-p", "openrouter", "-k", "MY_KEY"), "$MY_KEY is not set"),
    ],
)  # fmt: skip
def test_hosted_api_without_its_key_is_refused(keyless, argv, message):
    with pytest.raises(UsageError, match="-k/--api-key-var") as e:
        check_credentials(settings_for(*argv))
    assert message in str(e.value)


def test_endpoints_file_row_without_its_key_is_refused(keyless, tmp_path):
    reg = tmp_path / "endpoints.toml"
    reg.write_text(
        '[[endpoint]]\nendpoint_id = "or"\nmodel = "x/y"\n'
        'url = "https://openrouter.ai/api/v1"\nkey = "OPENROUTER_API_KEY"\n'
    )
    with pytest.raises(UsageError, match=f"from endpoint 'or' of {reg}.*OPENROUTER_API_KEY"):
        check_credentials(settings_for("-m", "or", "-e", reg))


def test_more_examples_than_the_dataset_warns_and_records_both(tmp_path, server):
    """-n 50 on a 17-row dataset: upstream runs 17 silently; here a warning names both numbers
    and metadata.json keeps the request beside the count run."""
    proc = vf_eval(
        "arithmetic", "-m", "m", "-b", server.base_url, "-n", 50, "-r", 1,
        "-a", '{"num_examples": 17}', cwd=tmp_path, env=clean_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "warning: 50 examples asked for (-n), but arithmetic has only 17: running 17" in (
        " ".join(proc.stderr.split())
    )
    (run,) = (tmp_path / "outputs" / "evals" / "arithmetic--m").iterdir()
    meta = json.loads((run / "metadata.json").read_text())
    assert (meta["num_examples"], meta["num_examples_requested"]) == (17, 50)
    assert len((run / "results.jsonl").read_text().splitlines()) == 17 == server.request_count


def value_options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings and a.nargs != 0]


def test_vf_eval_help_shows_every_default(monkeypatch):
    monkeypatch.delenv("VF_MODEL", raising=False)
    parser = build_parser()
    formatter = parser._get_formatter()
    for action in value_options(parser):
        text = formatter._expand_help(action)
        assert "default" in text, f"{action.option_strings[0]}: {text!r}"
    text = " ".join(parser.format_help().split())
    for shown in ("(default: 32)", "(default: gpt-4.1-mini;", "(default: 3)", "(default: 5)",
                  "(default: ./configs/endpoints.toml)", "else 5)"):  # fmt: skip
        assert shown in text
    # flags say what they do
    flags = [a for a in parser._actions if a.option_strings and a.nargs == 0]
    assert all(a.help for a in flags)


def test_testing_serve_help_explains_every_option():
    from verifiers.testing.__main__ import _parser

    proc = run_command("verifiers.testing", "serve", "--help", timeout=60)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "READY <base URL>" in text
    serve = next(
        a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)
    ).choices["serve"]
    for action in value_options(serve):
        assert action.help and len(action.help) > 10, action.option_strings
        assert f"{action.option_strings[0]} {action.metavar or action.dest.upper()}" in text
        assert f"(default: {action.default})" in text
