"""Environments written for the classic API run unmodified through load_environment and vf-eval."""

import itertools
import re
from pathlib import Path

import pytest

import verifiers as vf
from verifiers.testing import ScriptedServer
from verifiers.testing.responders import last_text

DOCS_EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"


def xml_responder(body):
    a, op, b = re.search(r"(\d+)\s*([+*-])\s*(\d+)", last_text(body)).groups()
    value = {"+": int(a) + int(b), "-": int(a) - int(b), "*": int(a) * int(b)}[op]
    return f"<think>\nAdd the numbers.\n</think>\n<answer>\n{value}\n</answer>"


def binary_search_responder(body):
    """Guesses the number with the hints it was given so far."""
    lo, hi = 1, 100
    messages = body["messages"]
    for prev, hint in itertools.pairwise(messages):
        if prev["role"] == "assistant" and hint["role"] == "user":
            guess = int(re.findall(r"\d+", prev["content"])[-1])
            if hint["content"] == "higher":
                lo = guess + 1
            elif hint["content"] == "lower":
                hi = guess - 1
    return f"My guess is {(lo + hi) // 2}"


def test_single_turn_xml_parser_and_format_reward(run_vf_eval, tmp_path):
    with ScriptedServer(xml_responder) as srv:
        rows, meta = run_vf_eval(tmp_path, "classic_xml_math", srv.base_url, "-n", 5, "-r", 2)
    assert len(rows) == 10
    assert all(r["metrics"]["correct_answer_reward_func"] == 1.0 for r in rows)
    assert all(r["metrics"]["format_reward_func"] == 1.0 for r in rows)
    assert meta["avg_reward"] == 1.2
    system = rows[0]["prompt"][0]
    assert system["role"] == "system" and "<answer>" in system["content"]


def test_xml_env_scores_bad_format_lower(run_vf_eval, tmp_path):
    with ScriptedServer(lambda body: "the answer is 5") as srv:
        rows, _ = run_vf_eval(tmp_path, "classic-xml-math", srv.base_url, "-n", 2, "-r", 1)
    assert all(r["metrics"]["correct_answer_reward_func"] == 0.0 for r in rows)
    assert all(r["metrics"]["format_reward_func"] < 1.0 for r in rows)
    assert all(r["error"] is None for r in rows)


@pytest.fixture
def guess_game(monkeypatch):
    """The multi-turn tutorial's game (docs/examples/guess_game.py, targets 37, 64 and 90),
    importable by its id: a classic-API MultiTurnEnv ended by a @vf.stop condition."""
    monkeypatch.syspath_prepend(str(DOCS_EXAMPLES))
    return "guess_game"


def test_multiturn_game_with_stop_condition(run_vf_eval, tmp_path, guess_game):
    with ScriptedServer(binary_search_responder) as srv:
        rows, _ = run_vf_eval(tmp_path, guess_game, srv.base_url, "-n", 3, "-r", 1)
    assert len(rows) == 3
    assert all(r["stop_condition"] == "guessed" and r["reward"] == 1.0 for r in rows)
    by_target = {int(r["answer"]): r for r in rows}
    assert {t: r["metrics"]["turns"] for t, r in by_target.items()} == {37: 3, 64: 7, 90: 7}
    hints = [m["content"] for m in by_target[37]["completion"] if m["role"] == "user"]
    assert hints == ["lower", "higher"]  # 50, 25, then 37: the hints follow the guesses


def test_multiturn_game_hits_max_turns(run_vf_eval, tmp_path, guess_game):
    with ScriptedServer(lambda body: "My guess is 2") as srv:
        rows, _ = run_vf_eval(
            tmp_path,
            guess_game,
            srv.base_url,
            "-n",
            2,
            "-r",
            1,
            "--env-args",
            '{"max_turns": 3}',
        )
    targets = {int(r["answer"]): r for r in rows}
    assert targets[37]["stop_condition"] == "max_turns_reached"
    assert targets[37]["metrics"]["num_turns"] == 3.0 and targets[37]["reward"] == 0.0


def test_group_reward_function(run_vf_eval, tmp_path):
    with ScriptedServer() as srv:
        rows, meta = run_vf_eval(tmp_path, "classic-group-reward", srv.base_url, "-n", 3, "-r", 4)
    assert len(rows) == 12
    # every rollout of an example gives the same text: the group function sees all four
    assert all(r["metrics"]["unique_answers"] == 0.25 for r in rows)
    assert all(r["metrics"]["difficulty_bonus"] == float((r["example_id"] + 1) % 3) for r in rows)
    assert meta["avg_reward"] == 1.0 + 0.5 * 0.25


def test_group_reward_in_process_advantages():
    env = vf.load_environment("classic-group-reward")

    def varied(body):
        n = len([m for m in body["messages"] if m["role"] == "user"])
        return f"\\boxed{{{n * 2}}}" if "1 + 1" in last_text(body) else "no idea"

    with ScriptedServer(varied) as srv:
        out = env.evaluate_sync(srv.base_url, "m", num_examples=2, rollouts_per_example=2)
    rewards = [o["reward"] for o in out["outputs"]]
    assert rewards == [1.0 + 0.5 * 0.5] * 2 + [0.5 * 0.5] * 2
    assert all(o["advantage"] == 0.0 for o in out["outputs"])
