"""goods_exchange: each row's final ownership recomputed by replaying its exchange sentences;
answer forms, a person named twice, hostile input and broken rows."""

from __future__ import annotations

import re

import pytest
from i3_logic import Puzzle, verify
from i3_logic.families import goods_exchange
from i3_logic_testkit import broken_metadata_test, row_params

from verifiers.testing import assert_replies_scored


def replay(before: dict[str, str], operations: list[str]) -> dict[str, str]:
    """Apply the exchange sentences used in the rows (English and Chinese phrasings)."""
    owns = dict(before)
    owner = lambda item: next(p for p, i in owns.items() if i == item)  # noqa: E731

    def swap(a: str, b: str) -> None:
        owns[a], owns[b] = owns[b], owns[a]

    for op in operations:
        if m := re.fullmatch(r"(\S+) and (\S+) swapped their items", op):
            swap(m[1], m[2])
        elif m := re.fullmatch(
            r"The owners of the (.+) and the (.+) exchanged those two items", op
        ):
            swap(owner(m[1]), owner(m[2]))
        elif m := re.fullmatch(r"(\S+), (\S+) and (\S+) made a three-way exchange: .*", op):
            a, b, c = m[1], m[2], m[3]
            owns[a], owns[b], owns[c] = owns[c], owns[a], owns[b]
        elif m := re.fullmatch(r"(\S+) exchanged the (.+) with (\S+)'s (.+)", op):
            assert owns[m[1]] == m[2] and owns[m[3]] == m[4]
            swap(m[1], m[3])
        elif m := re.fullmatch(r"The person holding the (.+) swapped items with (\S+)", op):
            swap(owner(m[1]), m[2])
        elif m := re.fullmatch(r"(.+)和(.+)互相交换了各自的物品", op):
            swap(m[1], m[2])
        elif m := re.fullmatch(r"(.+)用(.+)换来了(.+)", op):
            assert owns[m[1]] == m[2]
            swap(m[1], owner(m[3]))
        elif re.fullmatch(r".+ wanted to trade with .+, but .+ refused|.+很喜欢.+", op):
            pass  # changes nothing
        else:
            raise AssertionError(f"unknown exchange sentence: {op}")
    return owns


def stored(after: str) -> dict[str, str]:
    return dict(re.findall(r"\('(.+?)','(.+?)'\)(?=,\(|\)$)", after))


@pytest.mark.parametrize("row,pz", row_params("goods_exchange"))
def test_rows_final_ownership_follows_from_the_exchanges(row, pz):
    meta = pz.metadata
    assert sorted(meta["owns_before"]) == sorted(meta["names"])
    assert sorted(meta["owns_before"].values()) == sorted(meta["objects"])
    assert replay(meta["owns_before"], meta["operations"]) == stored(meta["owns_after"])
    assert pz.answer == meta["owns_after"]
    for op in meta["operations"]:
        assert op in row["question"]
    assert_replies_scored(lambda reply: verify(pz, reply), row["_right"], row["_wrong"])


P = Puzzle(
    "goods_exchange",
    "q",
    "",
    1,
    {"names": ["Ann", "Bo"], "owns_after": "(('Ann','red hat'),('Bo','blue cup'))"},
)


def block(text: str) -> str:
    return f"Swapping twice returns... no, once.\n```python\n{text}\n```"


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("(('Ann','red hat'),('Bo','blue cup'))", 1.0),
        ("(('Bo', 'Blue Cup'), ('ann', 'red  hat'))", 1.0),  # order, case, spaces
        ('[["Ann", "red hat"], ["Bo", "blue cup"]]', 1.0),
        ("((Ann, red hat), (Bo, blue cup))", 1.0),  # unquoted
        ("(('Ann','blue cup'),('Bo','red hat'))", 0.0),
        ("(('Ann','red hat'),)", 0.0),
        ("(('Ann','red hat'),('Bo','blue cup'),('Cy','green pen'))", 0.0),
        ("(('Ann','red hat'),('Ann','red hat'),('Bo','blue cup'))", 0.0),  # Ann twice
        ("(('Ann','red hat'),('ann','blue cup'))", 0.0),
        ("(('Ann','red hat'),('Bo','blue cup')) or (('Ann','blue cup'),('Bo','red hat'))", 0.0),
        ("(('Ann','red hat','x'),('Bo','blue cup'))", 0.0),
        ("{'Ann': 'red hat', 'Bo': 'blue cup'}", 0.0),
        ("__import__('os').system('echo hi')", 0.0),
        ("", 0.0),
        ("(" * 5000, 0.0),
    ],
)
def test_answer_forms(text, score):
    assert verify(P, block(text)) == score


def test_python_block_or_answer_tags():
    right = "(('Ann','red hat'),('Bo','blue cup'))"
    wrong = "(('Ann','blue cup'),('Bo','red hat'))"
    assert verify(P, right) == 0.0  # no block at all
    assert verify(P, block(wrong) + "\n" + block(right)) == 1.0  # the last block
    assert verify(P, block(right) + f"\n<answer>{wrong}</answer>") == 0.0  # tags win
    assert verify(P, f"<answer>{right}</answer>") == 1.0


def test_stored_answer_with_an_apostrophe_name():
    p = Puzzle(
        "goods_exchange",
        "q",
        "",
        1,
        {"names": ["O'Neil", "Sam"], "owns_after": "(('O'Neil','gray hat'),('Sam','black pen'))"},
    )
    goods_exchange.check(p)
    assert verify(p, block('(("O\'Neil", "gray hat"), ("Sam", "black pen"))')) == 1.0
    assert verify(p, block('(("O\'Neil", "black pen"), ("Sam", "gray hat"))')) == 0.0


test_check_rejects_broken_rows = broken_metadata_test(
    goods_exchange.check,
    "goods_exchange",
    [
        {},
        {"owns_after": ""},
        {"owns_after": "nothing"},
        {"owns_after": "(('Ann','red hat'),('Ann','blue cup'))"},
        {"owns_after": "(('Ann','red hat'),('Bo','blue cup'))", "names": ["Ann", "Cy"]},
        {"owns_after": 5},
    ],
)
