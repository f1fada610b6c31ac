"""time_sequence: each row's stored answer recomputed from its raw schedules and rules (SynLogic's
rule semantics, written separately here); answer forms, hedges and broken rows."""

from __future__ import annotations

import json

import pytest
from i3_logic import Puzzle, verify
from i3_logic.families import time_sequence
from i3_logic_testkit import broken_metadata_test, replies_test, row_params

from verifiers.testing import assert_replies_scored

DAYS = "一二三四五"
SLOTS = 96  # 5-minute slots from 9:00 to 17:00


def busy_slots(kind: str, spans: list[list[int]]) -> set[int]:
    inside = {t for s, e in spans for t in range(max(0, s), min(e, SLOTS))}
    if kind == "占用":
        return inside
    # A free list: busy everywhere except inside the spans (span ends are free-list edges).
    return set(range(SLOTS)) - inside


def person_busy(raw: dict, rule: str) -> dict[str, set[int]]:
    """Busy slots per day for one person, their rule applied (the rules the rows use)."""
    out = {}
    for day in DAYS:
        kind, spans = raw[day]
        if kind == "空闲":
            # SynLogic turns a free list into busy spans first; rules then act on those spans.
            edges = [0] + [x for s, e in spans for x in (s, e)] + [SLOTS]
            spans, kind = [[edges[i], edges[i + 1]] for i in range(0, len(edges), 2)], "占用"
        if rule == "会议后的空闲时间限制":
            spans = [[s - 2, e] for s, e in spans]  # 10 minutes more around each busy span
        slots = busy_slots(kind, spans)
        if rule == "结束时间限制":
            slots |= set(range(84, SLOTS))  # nothing after 16:00
        if rule == "时间偏好二四" and day in "一三五":
            slots = set(range(SLOTS))
        out[day] = slots
    return out


def recompute(records: dict) -> tuple[int, int]:
    rules = records["rules"]
    limit = 60 if "时间偏好二四" in rules.values() else 480
    everyone = [person_busy(records["raw_schedule"][n], rules[n]) for n in records["raw_schedule"]]
    lengths = []
    for day in DAYS:
        busy = set().union(*(p[day] for p in everyone))
        for start in range(0, SLOTS, 6):  # on the hour or half hour
            if start in busy:
                continue
            end = start
            while end < SLOTS and end not in busy and (end - start) * 5 < limit:
                end += 1
            lengths.append((end - start) * 5)
    best = max(lengths, default=0)
    return best, sum(1 for n in lengths if n == best) if best else 0


@pytest.mark.parametrize("row,pz", row_params("time_sequence"))
def test_rows_answers_follow_from_the_schedules(row, pz):
    records = pz.metadata["records"]
    answers = records["answers"]
    assert recompute(records) == (answers["answer_maxLen"], answers["answer_nums"])
    assert json.loads(pz.answer) == [answers["answer_maxLen"], answers["answer_nums"]]
    assert_replies_scored(lambda reply: verify(pz, reply), row["_right"], row["_wrong"])


P = Puzzle(
    "time_sequence",
    "q",
    "[60, 2]",
    1,
    {"records": {"answers": {"answer_maxLen": 60, "answer_nums": 2, "answer_record": []}}},
)


test_answer_forms = replies_test(
    P,
    [
        ("Merging the calendars...\n[60, 2]", 1.0),
        ("[60,2]", 1.0),
        ("[60，2]", 1.0),
        ("[60.0, 2]", 1.0),
        ("The free blocks are [0, 12] and [30, 36].\nSo:\n[60, 2]", 1.0),  # the last list counts
        ("\\boxed{[60, 2]}", 1.0),
        ("<answer>[60, 2]</answer>", 1.0),
        ("<answer>60, 2</answer>", 1.0),
        ("[60, 2] is my answer", 1.0),
        ("[2, 60]", 0.0),
        ("[60, 3]", 0.0),
        ("[60, 2, 5]", 0.0),  # upstream read only the first two items
        ("[60]", 0.0),
        ("[60, 2] or [30, 4]", 0.0),  # hedge on one line
        ("[30, 4] or [60, 2]", 0.0),
        ("[sixty, two]", 0.0),
        ("[-60, 2]", 0.0),
        ("60 minutes, 2 options", 0.0),  # no list, no answer block
        ("[60, 2]\n<answer>[30, 4]</answer>", 0.0),  # tags win
        ("[" + "6" * 5000 + ", 2]", 0.0),
        ("", 0.0),
    ],
)


def test_no_meeting_possible_is_zero_zero():
    p = Puzzle(
        "time_sequence",
        "q",
        "",
        1,
        {"records": {"answers": {"answer_maxLen": 0, "answer_nums": 0}}},
    )
    assert verify(p, "Nobody is ever free.\n[0, 0]") == 1.0
    assert verify(p, "[0, 1]") == 0.0


test_check_rejects_broken_rows = broken_metadata_test(
    time_sequence.check,
    "time_sequence",
    [
        {},
        {"records": []},
        {"records": {}},
        {"records": {"answers": {"answer_maxLen": 60}}},
        {"records": {"answers": {"answer_maxLen": "60", "answer_nums": 2}}},
        {"records": {"answers": {"answer_maxLen": 60, "answer_nums": True}}},
        {"records": {"answers": {"answer_maxLen": -5, "answer_nums": 2}}},
    ],
)
