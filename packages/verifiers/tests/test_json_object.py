"""`verifiers.utils.json_object.json_object`: the one reading of "a mapping, or the JSON text
of an object" that `vf-eval`'s flags, a dataset's `info` column and an env server's
`api_keys` share (issue 29 item 5: these were three copies that each said something else
about bad input)."""

from __future__ import annotations

import pytest

import verifiers as vf
from verifiers.cli.eval_settings import UsageError, parse_json_object
from verifiers.dataset import parse_info
from verifiers.serve.credentials import ApiKeyPolicy
from verifiers.utils.json_object import json_object


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, {}),
        ("", {}),
        ('{"a": 1, "b": [2]}', {"a": 1, "b": [2]}),
        ({"a": 1}, {"a": 1}),
    ],
)
def test_accepted_forms(value: object, expected: dict) -> None:
    assert json_object(value, "x") == expected


def test_a_dict_is_returned_as_it_is() -> None:
    """`parse_info` runs once per rollout: a dict `info` is not copied."""
    info = {"k": 1}
    assert json_object(info, "x") is info and parse_info(info) is info


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{not json", r"^--flag is not valid JSON \(.*\): '\{not json'$"),
        ("[1, 2]", r"^--flag must be a JSON object, got list$"),
        (3, r"^--flag must be a JSON object, got int$"),
    ],
)
def test_bad_input_names_what_was_read(value: object, message: str) -> None:
    with pytest.raises(vf.ConfigError, match=message):
        json_object(value, "--flag")


def test_each_caller_keeps_its_error_class_and_wording() -> None:
    """The CLI reports a `UsageError` (exit status 2); a row's `info` and a server's keys say
    what they should have been."""
    with pytest.raises(UsageError, match="--env-args must be a JSON object, got list"):
        parse_json_object("[1]", "--env-args")
    with pytest.raises(vf.ConfigError, match="'info' must be a dict or the JSON text of an obj"):
        parse_info(7)
    with pytest.raises(vf.ConfigError, match="api_keys must be a map of variable names"):
        ApiKeyPolicy.resolve("[]")
    given = {"a": 1}
    copy = parse_json_object(given, "--env-args")  # the CLI edits what it parsed
    assert copy == given and copy is not given


def test_long_bad_text_is_cut_in_the_message() -> None:
    with pytest.raises(vf.ConfigError) as raised:
        json_object("x" * 5000, "info")
    assert len(str(raised.value)) < 400
