"""The comparison rules every code grader uses: integers exactly, floats within the stated
tolerance, strings as the environment says, and per-problem overrides."""

from __future__ import annotations

import json

import pytest

from verifiers.envs.code_compare import Comparison, outputs_match, tokens_equal, values_equal
from verifiers.envs.code_env import CodeEnv, comparison_from
from verifiers.errors import ConfigError

FLOATS_OK = Comparison(int_accepts_float=True)
TOKENS = Comparison(strings="tokens")
BIG = 10**18


@pytest.mark.parametrize(
    ("actual", "expected", "cmp", "ok"),
    [
        ("7", "7", None, True),
        ("007", "7", None, True),  # the same integer
        ("+7", "7", None, True),
        (str(BIG + 1), str(BIG), None, False),  # was equal under a relative tolerance
        (str(10**400), str(10**400 + 1), None, False),  # beyond float range, still exact
        ("7.0", "7", None, False),  # a float for an integer answer
        ("7.0", "7", FLOATS_OK, True),  # ... where floats are accepted
        ("7.0000001", "7", FLOATS_OK, True),
        ("1e18", str(BIG), None, False),
        ("0.3333333333", "0.333333333", None, True),  # within 1e-6
        ("0.334", "0.333", None, False),
        ("3", "3.0", None, True),  # an integer is a fine float answer
        ("nan", "0.5", None, False),
        ("inf", "1e400", None, False),
        ("1_000", "1000", None, False),  # Python's float() would take it
        ("0x10", "16", None, False),
        ("1e999999999", "1", None, False),
        ("yes", "Yes", None, False),
        ("abc", "abc", None, True),
    ],
)
def test_tokens(actual, expected, cmp, ok):
    assert tokens_equal(actual, expected, cmp or Comparison()) is ok


@pytest.mark.parametrize(
    ("actual", "expected", "cmp", "ok"),
    [
        (3, 3, None, True),
        (BIG + 1, BIG, None, False),
        (10**400, 10**400, None, True),
        (10**400, 0.5, None, False),  # no OverflowError
        (3.0, 3, None, False),
        (3.0, 3, FLOATS_OK, True),
        (2, 2.0, None, True),
        (0.1 + 0.2, 0.3, None, True),
        (0.31, 0.3, None, False),
        (float("nan"), float("nan"), None, False),
        (True, 1, None, False),
        (1, True, None, False),
        (True, True, None, True),
        ("3", 3, None, False),
        (3, "3", None, False),
        ((1, [2, 3]), [1, [2, 3]], None, True),
        ([1, 2], [2, 1], None, False),
        ({"a": [1]}, {"a": [1]}, None, True),
        ({"a": 1.0}, {"a": 1}, None, False),
        ("a  b", "a b", None, False),  # strings exactly by default
        ("a  b", "a b", TOKENS, True),  # ... or token-wise where the environment says so
        ("100000001", "100000000", TOKENS, False),  # integers inside strings exactly, too
        (None, None, None, True),
        (None, 0, None, False),
        ("<E object>", 3, None, False),  # what the harness makes of an always-equal object
    ],
)
def test_values(actual, expected, cmp, ok):
    assert values_equal(actual, expected, cmp or Comparison()) is ok


def test_outputs_are_whitespace_insensitive_but_exact_on_integers():
    assert outputs_match("1 2\n\n3 \n", "1\n2 3")
    assert not outputs_match("1 2", "1 2 3")
    assert not outputs_match(f"{BIG}\n", f"{BIG + 1}\n")


def test_problem_overrides_and_bad_input():
    base = Comparison()
    assert comparison_from(base, None) is base and comparison_from(base, "{}") == base
    assert comparison_from(base, json.dumps({"int_accepts_float": True})).int_accepts_float
    assert comparison_from(base, {"float_rel_tol": 0.1}).float_rel_tol == 0.1
    assert comparison_from(base, '{"int_accepts_float": null}') == base  # null: not set
    with pytest.raises(ConfigError, match="unknown field"):
        comparison_from(base, {"tolerance": 1})
    with pytest.raises(ConfigError, match="JSON"):
        comparison_from(base, "{nope")
    with pytest.raises(ConfigError, match="non-negative"):
        Comparison(float_rel_tol=-1)
    with pytest.raises(ConfigError, match="true or false"):
        comparison_from(base, {"int_accepts_float": "yes"})
    with pytest.raises(ConfigError, match="numbers"):
        comparison_from(base, {"float_abs_tol": "0.1"})
    with pytest.raises(ConfigError, match="non-negative"):
        Comparison(float_abs_tol=float("nan"))
    with pytest.raises(ConfigError, match="strings"):
        Comparison(strings="loose")  # type: ignore[arg-type]


def test_code_env_uses_the_problems_comparison():
    from datasets import Dataset

    env = CodeEnv(dataset=Dataset.from_list([{"question": "q", "answer": ""}]), pool_size=0)
    state = {"info": {"comparison": {"int_accepts_float": True}}}
    cmp = env.comparison_for(state)
    assert env.compare_values(3.0, 3, cmp) and not env.compare_values(3.0, 3)
    assert env.compare_stdout("3.0", "3", cmp) and not env.compare_stdout("3.0", "3")
