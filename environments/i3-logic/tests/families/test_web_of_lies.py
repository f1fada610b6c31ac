"""web_of_lies: SynLogic's multi-question layout, answer = one yes/no per person asked."""

from __future__ import annotations

import itertools
import re

import pytest
from i3_logic import Puzzle, PuzzleDataError, generate, puzzle_from_info, verify
from i3_logic.families import web_of_lies as fam
from i3_logic_testkit import real_rows, replies_test

_CLAIM = r"(tells the truth|lies)"


def solve(question: str) -> list[str]:
    """Brute force over the clue *text*: every honesty assignment consistent with it."""
    clues = question.split("Clues: ")[1].split("\nQuestions: ")[0]
    asked = re.findall(r"Does (.+?) tell the truth\?", question.split("\nQuestions: ")[1])
    where = dict(re.findall(r"(\w+) is at the ([a-z ]+?)\.", clues))
    person = {**{n: n for n in where}, **{f"the person at the {p}": n for n, p in where.items()}}
    ref = "|".join(sorted(map(re.escape, person), key=len, reverse=True))
    says = [
        (person[a.lower() if a.startswith("The") else a], person[b], c == "tells the truth")
        for a, b, c in re.findall(rf"(?i:({ref})) says ({ref}) {_CLAIM}\.", clues)
    ]
    stated = [
        (person[a.lower() if a.startswith("The") else a], c == "tells the truth")
        for a, c in re.findall(rf"(?:^|\. )(?i:({ref})) {_CLAIM}\.", clues)
    ]
    names = sorted(where)
    answers = set()
    for values in itertools.product((True, False), repeat=len(names)):
        h = dict(zip(names, values, strict=True))
        if all(h[a] == c for a, c in stated) and all(h[a] == (h[b] == c) for a, b, c in says):
            answers.add(
                tuple("yes" if h[person[q if q in person else q.lower()]] else "no" for q in asked)
            )
    assert len(answers) == 1, answers
    return list(answers.pop())


def solve_zh(question: str) -> list[str]:
    """The same brute force over the clue text of a Chinese row."""
    clues = question.split("线索：")[1].split("\n问题：")[0]
    sentences = [c for c in clues.split("。") if c]
    where = {m[1]: m[2] for c in sentences if (m := re.fullmatch(r"([^在说]+)在([^在说的]+)", c))}
    person = {**{n: n for n in where}, **{f"在{loc}的人": n for n, loc in where.items()}}
    ref = "|".join(sorted(map(re.escape, person), key=len, reverse=True))
    says, stated = [], []
    for c in sentences:
        if m := re.fullmatch(rf"({ref})说({ref})说的是(真话|假话)", c):
            says.append((person[m[1]], person[m[2]], m[3] == "真话"))
        elif m := re.fullmatch(rf"({ref})说的是(真话|假话)", c):
            stated.append((person[m[1]], m[2] == "真话"))
    asked = re.findall(rf"({ref})说的是真话吗？", question.split("\n问题：")[1].split("\n")[0])
    names = sorted(where)
    answers = set()
    for values in itertools.product((True, False), repeat=len(names)):
        h = dict(zip(names, values, strict=True))
        if all(h[a] == c for a, c in stated) and all(h[a] == (h[b] == c) for a, b, c in says):
            answers.add(tuple("是" if h[person[q]] else "否" for q in asked))
    assert len(answers) == 1, answers
    return list(answers.pop())


@pytest.mark.parametrize("row", real_rows("web_of_lies"))
def test_rows_are_right_by_brute_force(row):
    pz = puzzle_from_info(row["info"])
    chinese = pz.metadata["use_chinese"]
    assert pz.answer.split(", ") == (solve_zh if chinese else solve)(row["question"])
    targets = [p for p in pz.metadata["people"] if p["is_target"]]
    assert len(targets) == len(pz.answer.split(", "))


def test_generated_puzzles_are_forced_and_right():
    for lvl in (1, 2, 3):
        for i in range(6):
            pz = generate("web_of_lies", 5, lvl, i)
            assert pz.answer.split(", ") == solve(pz.question)
            assert len(pz.metadata["valid_solutions"]) == 1


YES_NO = Puzzle("web_of_lies", "q", "yes, no, yes", 1, {})


test_verdicts = replies_test(
    YES_NO,
    [
        ("The answer is **yes, no, yes**.", 1.0),
        ("The answer is: **Yes, No, Yes**", 1.0),
        ("\\boxed{yes, no, yes}", 1.0),
        ("<answer>true false true</answer>", 1.0),  # upstream read true/false as yes/no
        ("The answer is **Yes**, **No**, and **Yes**.", 1.0),
        ("The answer is **yes, no, and**.", 0.0),
        ("The answer is **yes, yes, yes**.", 0.0),
        ("The answer is **yes, no**.", 0.0),
        ("The answer is **yes, no, yes, no**.", 0.0),
        ("The answer is **yes, no or yes, yes**.", 0.0),
        ("The answer is **yes, maybe, yes**.", 0.0),
        ("yes, no, yes", 0.0),  # upstream fell back to any yes/no run in the text
        ("The answer is **unknown**.", 0.0),
    ],
)


def test_chinese_answers():
    pz = Puzzle("web_of_lies", "q", "是, 否", 1, {})
    assert verify(pz, "\\boxed{是，否}") == 1.0
    assert verify(pz, "推理……\n答案是 **是，否**。") == 1.0  # the Chinese prompts' form
    assert verify(pz, "答案是：**是, 否**") == 1.0
    assert verify(pz, "答案是 **是，否**。\n不过也可能不是。") == 0.0  # not the last line
    assert verify(pz, "答案是 **否，否**。") == 0.0
    assert verify(pz, "\\boxed{否，否}") == 0.0


def test_check_rejects_broken_rows():
    for answer in ("", "maybe", "yes, perhaps"):
        with pytest.raises(PuzzleDataError):
            fam.check(Puzzle("web_of_lies", "q", answer, 1, {}))
    people = [{"id": 0, "is_target": True}, {"id": 1, "is_target": True}]
    with pytest.raises(PuzzleDataError, match="asked about"):
        fam.check(Puzzle("web_of_lies", "q", "yes", 1, {"people": people}))
    with pytest.raises(PuzzleDataError, match="disagrees"):
        meta = {"all_possible_solutions": [{"Amara": True}]}
        fam.check(Puzzle("web_of_lies", "q", "no", 1, meta))
