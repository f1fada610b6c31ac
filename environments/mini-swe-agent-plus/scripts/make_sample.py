"""Writes mini_swe_agent_plus/data/sample.jsonl: five small self-written Python repositories,
each with a real bug, the issue text, visible tests, hidden tests and the gold fix.

Run from the package folder: `python scripts/make_sample.py`. The test suite checks every task
(hidden FAIL_TO_PASS tests fail on the buggy code and pass with the gold edits; PASS_TO_PASS
tests pass on both), so an edit here that breaks a task fails the tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "mini_swe_agent_plus" / "data" / "sample.jsonl"


def src(text: str) -> str:
    return dedent(text).lstrip("\n")


TASKS: list[dict[str, Any]] = []

# -- 1. numkit.clamp: the upper bound is treated as exclusive ---------------------------------
TASKS.append(
    {
        "instance_id": "numkit__clamp-upper-bound",
        "repo_name": "numkit",
        "problem_statement": src("""
            `numkit.clamp(value, low, high)` is documented as clamping into the closed interval
            [low, high], but values at or above `high` come back one less than `high`:

            >>> from numkit import clamp
            >>> clamp(10, 0, 10)
            9
            >>> clamp(2.5, 0.0, 1.5)
            0.5

            Expected `10` and `1.5`. Values inside the interval and below `low` are fine.
            """),
        "repo_files": {
            "README.md": "# numkit\n\nSmall numeric helpers: clamp, lerp, mean.\n",
            "numkit/__init__.py": src("""
                from numkit.core import clamp, lerp, mean

                __all__ = ["clamp", "lerp", "mean"]
                """),
            "numkit/core.py": src('''
                """Numeric helpers."""


                def clamp(value, low, high):
                    """Clamp `value` into the closed interval [low, high]."""
                    if low > high:
                        raise ValueError(f"empty interval: low={low!r} > high={high!r}")
                    if value < low:
                        return low
                    if value >= high:
                        return high - 1
                    return value


                def lerp(a, b, t):
                    """Linear interpolation: a at t=0, b at t=1."""
                    return a + (b - a) * t


                def mean(values):
                    """Arithmetic mean of a non-empty sequence."""
                    values = list(values)
                    if not values:
                        raise ValueError("mean of an empty sequence")
                    return sum(values) / len(values)
                '''),
            "tests/test_basics.py": src("""
                from numkit import clamp, lerp


                def test_clamp_inside():
                    assert clamp(5, 0, 10) == 5


                def test_lerp_midpoint():
                    assert lerp(2, 4, 0.5) == 3
                """),
        },
        "hidden_tests": {
            "tests/test_clamp_bounds.py": src("""
                import pytest

                from numkit import clamp, mean


                def test_clamp_upper_is_inclusive():
                    assert clamp(10, 0, 10) == 10
                    assert clamp(11, 0, 10) == 10


                def test_clamp_float_upper():
                    assert clamp(2.5, 0.0, 1.5) == 1.5


                def test_clamp_below():
                    assert clamp(-3, 0, 10) == 0


                def test_clamp_rejects_empty_interval():
                    with pytest.raises(ValueError):
                        clamp(1, 5, 2)


                def test_mean():
                    assert mean([1, 2, 3, 4]) == 2.5
                """),
        },
        "FAIL_TO_PASS": [
            "tests/test_clamp_bounds.py::test_clamp_upper_is_inclusive",
            "tests/test_clamp_bounds.py::test_clamp_float_upper",
        ],
        "PASS_TO_PASS": [
            "tests/test_clamp_bounds.py::test_clamp_below",
            "tests/test_clamp_bounds.py::test_clamp_rejects_empty_interval",
            "tests/test_clamp_bounds.py::test_mean",
        ],
        "gold_edits": [
            {
                "path": "numkit/core.py",
                "old_str": "    if value >= high:\n        return high - 1\n",
                "new_str": "    if value > high:\n        return high\n",
            }
        ],
    }
)

# -- 2. headline.title_case: the first word stays lower case; the naive fix is wrong ----------
TASKS.append(
    {
        "instance_id": "headline__title-first-word",
        "repo_name": "headline",
        "problem_statement": src("""
            `headline.title_case` keeps short words ("a", "of", "the", ...) in lower case, which
            is right in the middle of a title but not at its start:

            >>> from headline import title_case
            >>> title_case("the wind in the willows")
            'the Wind in the Willows'

            The first word of a title must always be capitalised: 'The Wind in the Willows'.
            """),
        "repo_files": {
            "README.md": "# headline\n\nTitle-casing for English headlines.\n",
            "headline/__init__.py": "from headline.case import title_case\n\n__all__ = ['title_case']\n",
            "headline/case.py": src('''
                """Title case with the usual English exceptions for short words."""

                SMALL_WORDS = frozenset(
                    {"a", "an", "and", "as", "at", "but", "by", "for", "in", "of", "on", "or",
                     "the", "to"}
                )


                def _capitalise(word):
                    return word[:1].upper() + word[1:]


                def title_case(text):
                    """Capitalise every word except short ones such as 'of' and 'the'."""
                    words = text.split()
                    out = []
                    for word in words:
                        if word.lower() in SMALL_WORDS:
                            out.append(word.lower())
                        else:
                            out.append(_capitalise(word))
                    return " ".join(out)
                '''),
            "tests/test_case.py": src("""
                from headline import title_case


                def test_plain_words():
                    assert title_case("quiet harbour") == "Quiet Harbour"
                """),
        },
        "hidden_tests": {
            "tests/test_title_rules.py": src("""
                from headline import title_case


                def test_first_word_capitalised():
                    assert title_case("the wind in the willows") == "The Wind in the Willows"


                def test_single_small_word():
                    assert title_case("of") == "Of"


                def test_small_words_inside_stay_lower():
                    assert title_case("war and peace") == "War and Peace"


                def test_keeps_inner_capitals():
                    assert title_case("a tale of McDonald") == "A Tale of McDonald"
                """),
        },
        "FAIL_TO_PASS": [
            "tests/test_title_rules.py::test_first_word_capitalised",
            "tests/test_title_rules.py::test_single_small_word",
            "tests/test_title_rules.py::test_keeps_inner_capitals",
        ],
        "PASS_TO_PASS": [
            "tests/test_title_rules.py::test_small_words_inside_stay_lower",
        ],
        "gold_edits": [
            {
                "path": "headline/case.py",
                "old_str": "    for word in words:\n        if word.lower() in SMALL_WORDS:",
                "new_str": "    for i, word in enumerate(words):\n        if i > 0 and word.lower() in SMALL_WORDS:",
            }
        ],
        # capitalising every word fixes the reported case but breaks "War and Peace"
        "naive_edits": [
            {
                "path": "headline/case.py",
                "old_str": "        if word.lower() in SMALL_WORDS:\n            out.append(word.lower())\n        else:\n            out.append(_capitalise(word))",
                "new_str": "        out.append(_capitalise(word))",
            }
        ],
    }
)

# -- 3. stockroom.Inventory: removing every unit leaves an empty entry -----------------------
TASKS.append(
    {
        "instance_id": "stockroom__remove-last-unit",
        "repo_name": "stockroom",
        "problem_statement": src("""
            After removing every unit of an item from a `stockroom.Inventory`, the item is still
            listed: `len(inv)` counts it and `"bolt" in inv` is still True.

                inv = Inventory()
                inv.add("bolt", 3)
                inv.remove("bolt", 3)
                len(inv)          # 1, expected 0
                "bolt" in inv     # True, expected False

            An item whose quantity drops to zero should disappear from the inventory.
            """),
        "repo_files": {
            "README.md": "# stockroom\n\nA tiny in-memory inventory.\n",
            "stockroom/__init__.py": "from stockroom.inventory import Inventory\n\n__all__ = ['Inventory']\n",
            "stockroom/inventory.py": src('''
                """Item counts keyed by name."""


                class Inventory:
                    def __init__(self):
                        self._counts = {}

                    def add(self, name, qty=1):
                        if qty <= 0:
                            raise ValueError("quantity must be positive")
                        self._counts[name] = self._counts.get(name, 0) + qty

                    def remove(self, name, qty=1):
                        have = self._counts.get(name, 0)
                        if qty <= 0:
                            raise ValueError("quantity must be positive")
                        if qty > have:
                            raise KeyError(f"only {have} of {name!r} in stock")
                        self._counts[name] = have - qty

                    def count(self, name):
                        return self._counts.get(name, 0)

                    def items(self):
                        return sorted(self._counts.items())

                    def __len__(self):
                        return len(self._counts)

                    def __contains__(self, name):
                        return name in self._counts
                '''),
            "tests/test_inventory.py": src("""
                from stockroom import Inventory


                def test_add_accumulates():
                    inv = Inventory()
                    inv.add("nut", 2)
                    inv.add("nut", 5)
                    assert inv.count("nut") == 7
                """),
        },
        "hidden_tests": {
            "tests/test_removal.py": src("""
                import pytest

                from stockroom import Inventory


                def test_remove_all_drops_item():
                    inv = Inventory()
                    inv.add("bolt", 3)
                    inv.remove("bolt", 3)
                    assert len(inv) == 0
                    assert "bolt" not in inv
                    assert inv.items() == []


                def test_remove_partial_keeps_item():
                    inv = Inventory()
                    inv.add("bolt", 3)
                    inv.remove("bolt", 1)
                    assert inv.items() == [("bolt", 2)]


                def test_remove_too_many_raises():
                    inv = Inventory()
                    inv.add("bolt", 1)
                    with pytest.raises(KeyError):
                        inv.remove("bolt", 2)
                    assert inv.count("bolt") == 1
                """),
        },
        "FAIL_TO_PASS": ["tests/test_removal.py::test_remove_all_drops_item"],
        "PASS_TO_PASS": [
            "tests/test_removal.py::test_remove_partial_keeps_item",
            "tests/test_removal.py::test_remove_too_many_raises",
        ],
        "gold_edits": [
            {
                "path": "stockroom/inventory.py",
                "old_str": "        self._counts[name] = have - qty\n",
                "new_str": "        if qty == have:\n            del self._counts[name]\n        else:\n            self._counts[name] = have - qty\n",
            }
        ],
    }
)

# -- 4. spans.parse_duration: multi-digit amounts lose their leading digits -------------------
TASKS.append(
    {
        "instance_id": "spans__multi-digit-durations",
        "repo_name": "spans",
        "problem_statement": src("""
            `spans.parse_duration` reads amounts of more than one digit wrongly:

            >>> from spans import parse_duration
            >>> parse_duration("12m")
            120
            >>> parse_duration("1h30m")
            3600

            Expected 720 and 5400 seconds. Single-digit amounts such as "5s" or "2h" work.
            """),
        "repo_files": {
            "README.md": "# spans\n\nParse durations like '1h30m15s' into seconds.\n",
            "spans/__init__.py": "from spans.duration import parse_duration\n\n__all__ = ['parse_duration']\n",
            "spans/duration.py": src('''
                """Durations written as amounts with units: 1h30m, 45s, 2h."""

                import re

                UNITS = {"h": 3600, "m": 60, "s": 1}
                _PART = re.compile(r"(\\d)([hms])")


                def parse_duration(text):
                    """Seconds in `text`, e.g. '1h30m' -> 5400. Raises ValueError on junk."""
                    text = text.strip().lower()
                    if not text:
                        raise ValueError("empty duration")
                    total = 0
                    pos = 0
                    for match in _PART.finditer(text):
                        if match.start() != pos and text[pos:match.start()].strip("0123456789"):
                            raise ValueError(f"cannot parse duration {text!r}")
                        total += int(match.group(1)) * UNITS[match.group(2)]
                        pos = match.end()
                    if pos != len(text) or total == 0 and "0" not in text:
                        raise ValueError(f"cannot parse duration {text!r}")
                    return total
                '''),
            "tests/test_duration.py": src("""
                from spans import parse_duration


                def test_single_unit():
                    assert parse_duration("5s") == 5
                    assert parse_duration("2h") == 7200
                """),
        },
        "hidden_tests": {
            "tests/test_duration_parts.py": src("""
                import pytest

                from spans import parse_duration


                def test_multi_digit_minutes():
                    assert parse_duration("12m") == 720


                def test_combined_units():
                    assert parse_duration("1h30m") == 5400
                    assert parse_duration("10h5m15s") == 36315


                def test_single_digits():
                    assert parse_duration("1h2m3s") == 3723


                @pytest.mark.parametrize("junk", ["", "h", "5x", "abc"])
                def test_rejects_junk(junk):
                    with pytest.raises(ValueError):
                        parse_duration(junk)
                """),
        },
        "FAIL_TO_PASS": [
            "tests/test_duration_parts.py::test_multi_digit_minutes",
            "tests/test_duration_parts.py::test_combined_units",
        ],
        "PASS_TO_PASS": [
            "tests/test_duration_parts.py::test_single_digits",
            "tests/test_duration_parts.py::test_rejects_junk[]",
            "tests/test_duration_parts.py::test_rejects_junk[h]",
            "tests/test_duration_parts.py::test_rejects_junk[5x]",
            "tests/test_duration_parts.py::test_rejects_junk[abc]",
        ],
        "gold_edits": [
            {
                "path": "spans/duration.py",
                "old_str": '_PART = re.compile(r"(\\d)([hms])")',
                "new_str": '_PART = re.compile(r"(\\d+)([hms])")',
            }
        ],
    }
)

# -- 5. tally.stats.median: the data is never sorted ----------------------------------------
TASKS.append(
    {
        "instance_id": "tally__median-unsorted",
        "repo_name": "tally",
        "problem_statement": src("""
            `tally.stats.median` gives wrong answers for data that is not already sorted:

            >>> from tally.stats import median
            >>> median([3, 1, 2])
            1
            >>> median([4, 1, 3, 2])
            2.0

            Expected 2 and 2.5. The function should not modify the caller's list either.
            """),
        "repo_files": {
            "README.md": "# tally\n\nDescriptive statistics and a CSV column reader.\n",
            "tally/__init__.py": "",
            "tally/stats.py": src('''
                """Descriptive statistics over sequences of numbers."""


                def mean(values):
                    values = list(values)
                    if not values:
                        raise ValueError("mean of no values")
                    return sum(values) / len(values)


                def median(values):
                    """Middle value; the mean of the two middle values for even counts."""
                    data = list(values)
                    if not data:
                        raise ValueError("median of no values")
                    mid = len(data) // 2
                    if len(data) % 2:
                        return data[mid]
                    return (data[mid - 1] + data[mid]) / 2
                '''),
            "tally/columns.py": src('''
                """Read one numeric column of a CSV text."""

                import csv
                import io


                def column(text, name):
                    reader = csv.DictReader(io.StringIO(text))
                    if reader.fieldnames is None or name not in reader.fieldnames:
                        raise KeyError(name)
                    return [float(row[name]) for row in reader if row[name].strip()]
                '''),
            "tests/test_stats.py": src("""
                from tally.stats import mean, median


                def test_mean():
                    assert mean([1, 2, 3]) == 2


                def test_median_sorted():
                    assert median([1, 2, 3]) == 2
                """),
        },
        "hidden_tests": {
            "tests/test_median_more.py": src("""
                from tally.columns import column
                from tally.stats import median


                def test_median_unsorted_odd():
                    assert median([3, 1, 2]) == 2


                def test_median_unsorted_even():
                    assert median([4, 1, 3, 2]) == 2.5


                def test_median_leaves_input_alone():
                    data = [5, 3, 9]
                    median(data)
                    assert data == [5, 3, 9]


                def test_median_sorted_even():
                    assert median([1, 2, 3, 4]) == 2.5


                def test_column_skips_blanks():
                    text = "a,b\\n1,2\\n,3\\n4,5\\n"
                    assert column(text, "a") == [1.0, 4.0]
                """),
        },
        "FAIL_TO_PASS": [
            "tests/test_median_more.py::test_median_unsorted_odd",
            "tests/test_median_more.py::test_median_unsorted_even",
        ],
        "PASS_TO_PASS": [
            "tests/test_median_more.py::test_median_leaves_input_alone",
            "tests/test_median_more.py::test_median_sorted_even",
            "tests/test_median_more.py::test_column_skips_blanks",
        ],
        "gold_edits": [
            {
                "path": "tally/stats.py",
                "old_str": "    data = list(values)\n",
                "new_str": "    data = sorted(values)\n",
            }
        ],
    }
)


def as_file_list(files: dict[str, str]) -> list[dict[str, str]]:
    """File maps are stored as [{path, content}] so that Arrow keeps one schema for all rows."""
    return [{"path": p, "content": c} for p, c in sorted(files.items())]


def render() -> str:
    """The sample file's exact text."""
    lines = []
    for task in TASKS:
        row = dict(task)
        row["repo_files"] = as_file_list(task["repo_files"])
        row["hidden_tests"] = as_file_list(task["hidden_tests"])
        row.setdefault("naive_edits", [])
        lines.append(json.dumps(row, sort_keys=True) + "\n")
    return "".join(lines)


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(render())
    print(f"wrote {len(TASKS)} tasks to {OUT}")


if __name__ == "__main__":
    main()
