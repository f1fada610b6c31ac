"""BBH multiple choice (date understanding and its 16 aliases): rows solved, answers read."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re

from i3_logic import TASKS, Puzzle, puzzle_from_info, verify
from i3_logic.families import bbh_date_understanding as family
from i3_logic.families.bbh_common import options
from i3_logic_testkit import broken_answers_test, real_rows, replies_test

ROWS = real_rows(family.NAME)
PUZZLES = {json.loads(r["info"])["task"]: puzzle_from_info(r["info"]) for r in ROWS}


def letter_of(p: Puzzle, text: str) -> str:
    """The option letter whose text is ``text`` (the solvers below answer in option text)."""
    found = [k for k, v in options(p.question).items() if v == text]
    assert len(found) == 1, (text, options(p.question))
    return f"({found[0]})"


def test_every_key_has_a_row():
    assert set(PUZZLES) == {family.NAME, *family.ALIASES}
    assert len(family.ALIASES) == 16
    assert all(TASKS[k].name == family.NAME for k in PUZZLES)


def test_date_row_is_right():
    p = PUZZLES["bbh_date_understanding"]
    week_ago = dt.date(2024, 3, 1) - dt.timedelta(days=7)
    assert p.answer == letter_of(p, week_ago.strftime("%m/%d/%Y"))


def brute_force_order(items, constraints):
    orders = [o for o in itertools.permutations(items) if all(c(o.index) for c in constraints)]
    assert len(orders) == 1, orders  # the puzzle has exactly one solution
    return orders[0]


def test_logical_deduction_rows_are_right():
    p = PUZZLES["bbh_logical_deduction_three_objects"]
    order = brute_force_order(
        ["red", "green", "blue"], [lambda i: i("green") < i("blue"), lambda i: i("red") == 2]
    )
    assert p.answer == letter_of(p, f"The {order[0]} book is the leftmost")

    p = PUZZLES["bbh_logical_deduction_five_objects"]
    order = brute_force_order(
        ["Ana", "Ben", "Cai", "Dee", "Eli"],
        [
            lambda i: i("Ben") < i("Cai"),
            lambda i: i("Eli") == 0,
            lambda i: i("Dee") == 4,
            lambda i: i("Ana") == 2,
        ],
    )
    assert p.answer == letter_of(p, f"{order[1]} finished second")

    p = PUZZLES["bbh_logical_deduction_seven_objects"]
    order = brute_force_order(
        ["hawk", "owl", "robin", "crow", "wren", "jay", "finch"],
        [
            lambda i: i("hawk") == 0,
            lambda i: i("finch") == 6,
            lambda i: i("owl") == 2,
            lambda i: i("crow") == i("finch") - 1,
            lambda i: i("robin") > i("owl"),
            lambda i: i("jay") < i("owl"),
            lambda i: i("wren") < i("robin"),
        ],
    )
    assert p.answer == letter_of(p, f"The {order[3]} is the fourth from the left")


def test_tracking_rows_are_right():
    """Simulate the swaps from the prompt text itself."""
    cases = {
        "bbh_tracking_shuffled_objects_three_objects": (
            {"Alice": "red ball", "Bob": "blue ball", "Claire": "green ball"},
            [("Alice", "Bob"), ("Bob", "Claire"), ("Alice", "Claire")],
            "Alice",
        ),
        "bbh_tracking_shuffled_objects_five_objects": (
            {"Alice": "Rob", "Bob": "Sam", "Claire": "Tom", "Dave": "Uma", "Eve": "Val"},
            [("Alice", "Claire"), ("Bob", "Eve"), ("Dave", "Alice"), ("Claire", "Bob")],
            "Claire",
        ),
        "bbh_tracking_shuffled_objects_seven_objects": (
            dict(
                zip(
                    "Alice Bob Claire Dave Eve Fred Gert".split(),
                    [
                        "goalkeeper",
                        "left winger",
                        "striker",
                        "center midfielder",
                        "right winger",
                        "fullback",
                        "sweeper",
                    ],
                    strict=True,
                )
            ),
            [
                ("Alice", "Dave"),
                ("Fred", "Bob"),
                ("Gert", "Claire"),
                ("Eve", "Alice"),
                ("Bob", "Gert"),
                ("Dave", "Fred"),
            ],
            "Gert",
        ),
    }
    for task, (held, swaps, asked) in cases.items():
        p = PUZZLES[task]
        for name, thing in held.items():
            assert name in p.question and thing in p.question
        # The swaps appear in the prompt in this order.
        first = p.question.index("first")
        positions = [p.question.index(f"{a} and {b}", first) for a, b in swaps]
        assert positions == sorted(positions)
        held = dict(held)
        for a, b in swaps:
            held[a], held[b] = held[b], held[a]
        assert p.answer == letter_of(p, held[asked]), task


def test_table_counting_and_schedule_rows_are_right():
    p = PUZZLES["bbh_penguins_in_a_table"]
    table = p.question.split("weight (kg)\n")[1].split("\nHow many")[0]
    ages = [int(line.split(", ")[1]) for line in table.splitlines()]
    assert p.answer == letter_of(p, str(sum(a > 6 for a in ages)))

    p = PUZZLES["bbh_temporal_sequences"]
    busy: set[int] = set()
    hours = {"6am": 6, "9am": 9, "12pm": 12, "2pm": 14, "5pm": 17, "8pm": 20}
    for a, b in re.findall(r"From (\d+[ap]m) to (\d+[ap]m)", p.question):
        busy.update(range(hours[a], hours[b]))
    free = [h for h in range(6, 20) if h not in busy]
    assert free == [12, 13]
    assert p.answer == letter_of(p, "12pm to 2pm")

    p = PUZZLES["bbh_reasoning_about_colored_objects"]
    words = {"a": 1, "two": 2}
    red = sum(
        words[n]
        for n, c in re.findall(r"(a|two) (\w+) \w+", p.question.split("?")[0])
        if c == "red"
    )
    assert p.answer == letter_of(p, ["zero", "one", "two", "three", "four"][red])

    p = PUZZLES["bbh_geometric_shapes"]
    points = re.findall(r"(\d+),(\d+)", p.question)
    assert points[0] == points[-1] and len(set(points)) == 5  # closed, five vertices
    assert p.answer == letter_of(p, "pentagon")


def test_hyperbaton_row_follows_the_adjective_order():
    rank = {"small": 2, "old": 3, "round": 4, "wooden": 7}  # size, age, shape, material
    p = PUZZLES["bbh_hyperbaton"]
    good = [
        t
        for t in options(p.question).values()
        if [rank[w] for w in t.split()[1:-1]] == sorted(rank[w] for w in t.split()[1:-1])
    ]
    assert len(good) == 1 and p.answer == letter_of(p, good[0])


P = PUZZLES["bbh_date_understanding"]  # answer (A) 02/23/2024


test_answer_forms = replies_test(
    P,
    [
        ("So the answer is (A).", 1.0),
        ("So the answer is A.", 1.0),
        ("The answer is: **(A)**", 1.0),
        ("So the answer is (A) 02/23/2024.", 1.0),
        ("**So the answer is (A).**", 1.0),  # markdown around the sentence
        ("Option A.\n<answer>Option A</answer>", 1.0),
        ("\\boxed{(A)}", 1.0),
        ("The answer is (B) at first sight. So the answer is (A).", 1.0),  # the last statement
        ("So the answer is (A) 02/22/2024.", 0.0),  # option A with another option's text
        ("So the answer is (A) or (B).", 0.0),
        ("So the answer is (A), not (B).", 0.0),
        ("So the answer is (A)\nor maybe (B).", 0.0),  # continued with an alternative
        ("So the answer is (A).\nThat settles it.", 1.0),  # later lines are not the answer
        ("(A) looks right.", 0.0),  # no final statement: upstream took the first (X) anywhere
        ("", 0.0),
        ("So the answer is .", 0.0),
        ("So the answer is " + "(A)" * 2000, 0.0),
    ],
)


def test_upstream_first_match_is_not_kept():
    # Upstream: the first "(X)" after the first "the answer is" - here (A) - scored 1.
    assert verify(P, "So the answer is (A) or (B). Final: the answer is (B).") == 0.0
    assert verify(P, "So the answer is (A) or (B).") == 0.0


test_check_rejects_rows_without_an_option_answer = broken_answers_test(
    family.check, family.NAME, ["", "A or B", "02/23/2024", "(AB)"], question=P.question
)
