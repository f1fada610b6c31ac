"""`prime-hub` tells an operator what it does: every command, option and setting explained in
`--help`, and a failure to reach the database as one clear line."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from prime_hub.cli import _parser
from prime_hub.settings import Settings


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


COMMANDS = {" ".join(p): sub for p, sub in _commands(_parser())}


@pytest.mark.parametrize("command", [c for c in COMMANDS if c])
def test_every_command_and_option_is_explained(command):
    parser = COMMANDS[command]
    assert parser.description, f"prime-hub {command} has no description"
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        assert action.help, f"prime-hub {command}: {action.dest} has no help text"
    text = parser.format_help()
    for action in parser._actions:  # a meaningful default is shown
        if action.option_strings and action.default not in (None, "", False, argparse.SUPPRESS):
            assert f"default: {action.default}" in " ".join(text.split()), (command, action.dest)


def test_serve_help_lists_every_setting_with_its_variable_default_and_meaning():
    out = subprocess.run(
        [sys.executable, "-m", "prime_hub.cli", "serve", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name, field in Settings.model_fields.items():
        assert field.description, f"setting {name} has no description"
        assert f"PRIME_HUB_{name.upper()}  (default: " in out, name
    # list settings are shown as the JSON an environment variable takes
    assert 'PRIME_HUB_LOCAL_ONLY_NAMES  (default: ["verifiers", "prime"])' in out


@pytest.mark.parametrize("command", [["migrate"], ["admin", "create-user", "x"]])
def test_an_unreachable_database_is_one_clear_line_not_a_traceback(command, tmp_path):
    from verifiers.testing import free_port

    url = f"postgresql+psycopg://hub:s3cret@127.0.0.1:{free_port()}/hub"  # nothing listens
    env = {"PATH": "/usr/bin:/bin", "PRIME_HUB_DATABASE_URL": url, "HOME": str(tmp_path)}
    r = subprocess.run(
        [sys.executable, "-m", "prime_hub.cli", *command], capture_output=True, text=True, env=env
    )
    assert r.returncode == 1
    assert "error: cannot use the database at postgresql+psycopg://hub:***@127.0.0.1" in r.stderr
    assert "Traceback" not in r.stderr and "s3cret" not in r.stderr
