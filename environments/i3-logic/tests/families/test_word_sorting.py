"""word_sorting in SynLogic's layout (changed alphabet, order): solver-checked rows and forms."""

from __future__ import annotations

import functools

import pytest
from i3_logic import Puzzle, PuzzleDataError, generate, puzzle_from_info, verify
from i3_logic.families import word_sorting
from i3_logic_testkit import changed, real_rows, rejected_test, replies_test


def judge_order(words: list[str], front: list[str], order: int) -> list[str]:
    """Pairwise comparison letter by letter (not the package's key function)."""

    def before(a: str, b: str) -> int:
        for x, y in zip(a, b, strict=False):
            if x != y:
                rx = front.index(x) if x in front else len(front) + ord(x) - ord("a")
                ry = front.index(y) if y in front else len(front) + ord(y) - ord("a")
                return -1 if rx < ry else 1
        return len(a) - len(b)

    ordered = sorted(words, key=functools.cmp_to_key(before))
    return ordered if order == 1 else ordered[::-1]


def meta_of(words: list[str], front: list[str], order: int) -> dict:
    return {
        "words": words,
        "sorted_words": judge_order(words, front, 1),
        "front_letters": ",".join(front),
        "order": order,
    }


def test_rows_hold_the_solved_order():
    for row in real_rows("word_sorting"):
        p = puzzle_from_info(row["info"])
        m = p.metadata
        want = judge_order(m["words"], m["front_letters"].split(","), m["order"])
        assert p.answer == ", ".join(want)
        assert want != sorted(m["words"]) and want != sorted(m["words"])[::-1]
        assert verify(p, "\\boxed{" + ",".join(want) + "}") == 1.0


@pytest.mark.parametrize("level", [1, 2, 3])
def test_generated_puzzles_use_the_synlogic_layout(level):
    orders = set()
    for index in range(6):
        p = generate("word_sorting", 8, level, index)
        m = p.metadata
        assert set(m) == {"words", "sorted_words", "front_letters", "order"}
        assert isinstance(m["front_letters"], str)
        want = judge_order(m["words"], m["front_letters"].split(","), m["order"])
        assert p.answer == ", ".join(want)
        assert verify(p, f"<answer>{p.answer}</answer>") == 1.0
        assert verify(p, "\\boxed{" + ",".join(want[::-1]) + "}") == 0.0
        orders.add(m["order"])
    assert orders == {1, -1}


P = Puzzle("word_sorting", "q", "", 1, meta_of(["apple", "river", "ant", "violin"], ["r", "v"], 1))
# r, v first: river < violin < ant < apple


test_answer_forms = replies_test(
    P,
    [
        ("\\boxed{river,violin,ant,apple}", 1.0),
        ("Sorted: \\boxed{river, violin, ant, apple}", 1.0),
        ("<answer>River Violin Ant Apple</answer>", 1.0),
        ("<answer>1. river\n2. violin\n3. ant\n4. apple</answer>", 1.0),
        ("\\boxed{ant,apple,river,violin}", 0.0),  # the usual alphabet
        ("\\boxed{apple,ant,violin,river}", 0.0),  # decreasing
        ("\\boxed{river,violin,ant}", 0.0),
        ("\\boxed{river,violin,ant,apple,apple}", 0.0),
        ("\\boxed{river,violin,ant,apple or ant,apple,river,violin}", 0.0),
        ("river, violin, ant, apple", 0.0),  # no answer block
        ("", 0.0),
        ("\\boxed{" + "river," * 1000 + "}", 0.0),
    ],
)


def test_decreasing_order():
    p = Puzzle("word_sorting", "q", "", 1, meta_of(["apple", "river", "ant"], ["r"], -1))
    assert verify(p, "\\boxed{apple,ant,river}") == 1.0
    assert verify(p, "\\boxed{river,ant,apple}") == 0.0


test_broken_metadata_is_rejected = rejected_test(
    word_sorting.check,
    changed(
        P,
        [
            {"sorted_words": ["ant", "apple", "river", "violin"]},  # not under the new alphabet
            {"order": 0},
            {"order": "1"},
            {"front_letters": "1,2"},
            {"front_letters": "r,r"},
            {"words": []},
            {"front_letters": None},
        ],
    ),
)


def test_missing_key_is_rejected():
    meta = dict(P.metadata)
    del meta["sorted_words"]
    with pytest.raises(PuzzleDataError, match="sorted_words"):
        word_sorting.check(Puzzle("word_sorting", "q", "", 1, meta))
    word_sorting.check(P)  # the intact one passes
