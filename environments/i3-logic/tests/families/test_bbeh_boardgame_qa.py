"""BBEH (23 keys, one verifier): rows recomputed where arithmetic, upstream's fuzzy match
reproduced without eval, and its gameable rules tightened."""

from __future__ import annotations

import datetime as dt

import pytest
from i3_logic import TASKS, Puzzle, verify
from i3_logic.families import bbeh as family
from i3_logic.puzzle import PuzzleDataError
from i3_logic_testkit import real_puzzles, replies_test

PUZZLES = {p.task: p for p in real_puzzles(family.NAME)}


def test_every_key_has_a_row():
    assert set(PUZZLES) == {family.NAME, *family.ALIASES} and len(PUZZLES) == 23
    assert all(TASKS[k].name == family.NAME for k in PUZZLES)


def test_computed_rows_are_right():
    hash_, at = (lambda a, b: 2 * a - b), (lambda a, b: a * b + 1)
    assert PUZZLES["bbeh_multistep_arithmetic"].answer == str(at(hash_(3, 4), hash_(1, 5)))
    leave = dt.datetime(2000, 1, 1, 22, 50)
    arrive = leave + dt.timedelta(hours=4, minutes=55)
    assert PUZZLES["bbeh_time_arithmetic"].answer == arrive.strftime("%H:%M")
    assert PUZZLES["bbeh_buggy_tables"].answer == str((40 + 25 + 0 + 15) // 10)
    assert PUZZLES["bbeh_object_counting"].answer == str(3 + 1 + 4)  # apples, banana, grapes
    compass = ["north", "east", "south", "west"]
    facing = (0 + 1 + 1 - 1) % 4  # right, right, left
    assert PUZZLES["bbeh_spatial_reasoning"].answer == compass[facing]
    held = {"Ann": "atlas", "Ben": "novel", "Cat": "cookbook"}
    for a, b in (("Ann", "Cat"), ("Ben", "Cat")):
        held[a], held[b] = held[b], held[a]
    assert held["Ben"] == "atlas" and PUZZLES["bbeh_shuffled_objects"].answer == "(A)"
    assert PUZZLES["bbeh_word_sorting"].answer == " ".join(sorted(["mango", "apple", "kiwi"]))
    ada = True
    bo = not ada  # says Ada lies
    cy = not bo  # says Bo lies
    want = ", ".join("yes" if v else "no" for v in (ada, bo, cy))
    assert PUZZLES["bbeh_web_of_lies"].answer == want
    ben, cam = {"Monday", "Wednesday", "Friday"}, {"Tuesday", "Wednesday", "Thursday"}
    assert {PUZZLES["bbeh_temporal_sequence"].answer} == ben & cam


def py(value: str) -> str:
    return f"Step by step.\n```python\n{value}\n```"


MC = PUZZLES["bbeh_hyperbaton"]  # (C) a big old red car


test_option_answers = replies_test(
    MC,
    [
        (py('"(C)"'), 1.0),
        (py("'c'"), 1.0),
        (py("(C)"), 1.0),  # written without quotes: taken as written
        (py('"(C) a big old red car"'), 1.0),
        ("The answer is: (C)", 1.0),  # no fence: the final answer block
        (py('"(A)"'), 0.0),
        (py('"(C) a red big car"'), 0.0),  # option C with another option's text
        (py('"(c) or (a)"'), 0.0),  # upstream: the second character matched -> 1
        (py('"xc"'), 0.0),  # upstream: the second character matched -> 1
        (py('"(c)\\n(a)"'), 0.0),  # upstream kept the first line -> 1
        (py('"(C)" if True else "(A)"'), 0.0),  # an expression: never evaluated
        (py("__import__('os').system('echo hacked')"), 0.0),
        (py('{"answer": "(C)"}'), 0.0),
        ("I would pick (C).", 0.0),
        ("", 0.0),
    ],
)


def answer(reference: str, reply: str) -> float:
    return verify(Puzzle("bbeh_nycc", "q", reference, 1, {}), reply)


@pytest.mark.parametrize(
    "reference,value,score",
    [
        ("8", "8.0", 1.0),  # numbers by value
        ("(b) the dog", "'(b)'", 1.0),  # a reference with the option text: the letter counts
        ("(b) the dog", "'b'", 1.0),
        ("(b) the dog", "'(c)'", 0.0),
        ("(b) the dog", "'(b) the cat'", 0.0),  # not option B's text (the prompt has none)
        ("8", "'8'", 1.0),
        ("8", "1e1", 0.0),
        ("1, 0, 1", "'1,0,1'", 1.0),  # spacing ignored
        ("1, 0, 1", "'1, 0'", 0.0),
        ("[1, 2]", "[1, 2]", 1.0),  # a list literal, read as upstream's str(eval(...))
        ("[1, 2]", "'1,2'", 1.0),  # list reference against an unbracketed answer
        ("[1, 2]", "[2, 1]", 0.0),
        ("mosu-ki", "'MOSU-KI'", 1.0),  # case ignored
        ("it's", "'its'", 1.0),  # quotes ignored, as upstream
        ("yes", "'yes?'", 1.0),  # a trailing question mark dropped, as upstream
        ("yes", "'yes.'", 1.0),
        ("yes", "'**yes**'", 1.0),
        ("proved", "'proved or disproved'", 0.0),
        ("nan", "float('nan')", 0.0),
    ],
)
def test_fuzzy_rules(reference, value, score):
    assert answer(reference, py(value)) == score


def test_oversized_answers_score_zero():
    assert answer("8", py("'" + "8" * 5000 + "'")) == 0.0
    assert answer("8", py("[" * 500 + "]" * 500)) == 0.0


def test_check_rejects_rows_without_an_answer():
    with pytest.raises(PuzzleDataError):
        family.check(Puzzle("bbeh_linguini", "q", " ", 1, {}))
