"""cipher: expected text from KOR's [[...]] answer, literal-only reading, no eval."""

from __future__ import annotations

import re

from i3_logic import Puzzle, puzzle_from_info, verify
from i3_logic.families import cipher
from i3_logic_testkit import broken_answers_test, real_rows, replies_test


def caesar(text: str, k: int) -> str:
    return "".join(chr((ord(c) - 65 + k) % 26 + 65) for c in text)


def mirror(text: str) -> str:
    return "".join("ZYXWVUTSRQPONMLKJIHGFEDCBA"[ord(c) - 65] for c in text)


def solve(question: str) -> str:
    """Each row states one of two rules; apply it to the text the question gives."""
    (text,) = re.findall(r"(?:Plaintext|Ciphertext): ([A-Z]+)", question)
    if "3 places later" in question:
        return caesar(text, 3)
    assert "mirror" in question
    return mirror(text)


def test_rows_answers_are_the_solved_text():
    for row in real_rows("cipher"):
        p = puzzle_from_info(row["info"])
        assert p.answer == f"[[{solve(row['question'])}]]"


P = Puzzle("cipher", "q", "[[KHOOR]]", 1, {})


test_answer_forms = replies_test(
    P,
    [
        ('```python\n[["KHOOR"]]\n```', 1.0),
        ("```python\n[['KHOOR']]\n```", 1.0),
        ('[["KHOOR"]]', 1.0),  # a whole reply that is the list (upstream evaluated it whole)
        ("<answer>[[KHOOR]]</answer>", 1.0),  # KOR's own unquoted form
        ("<answer>KHOOR</answer>", 1.0),
        ('```python\n[["KHOOR "]]\n```', 1.0),
        ('```python\n[["KHOOS"]]\n```', 0.0),
        ('```python\n[["khoor"]]\n```', 0.0),
        ('```python\n[["KHOOR", "KHOOS"]]\n```', 0.0),
        ('```python\n[["KHOOR"], ["KHOOS"]]\n```', 0.0),
        ("<answer>[[KHOOR]] or [[KHOOS]]</answer>", 0.0),
        ("The ciphertext is KHOOR", 0.0),  # prose, no answer block
        ("", 0.0),
        ('```python\n[["KH" + "OOR"]]\n```', 0.0),  # an expression is not evaluated
        ('```python\n[["".join(["KHOOR"])]]\n```', 0.0),
        ("```python\n__import__('os').system('echo hacked')\n```", 0.0),
        ("```python\n" + "[" * 200 + "]" * 200 + "\n```", 0.0),
        ('```python\n[["' + "K" * 5000 + '"]]\n```', 0.0),
    ],
)


def test_expected_text_from_the_answer():
    assert cipher.expected(P) == "KHOOR"
    assert cipher.expected(Puzzle("cipher", "q", "[[12,5,33]]", 1, {})) == "12,5,33"
    # Upstream cut two characters off each end of any answer; one not in [[...]] is taken whole.
    assert cipher.expected(Puzzle("cipher", "q", "HELLO", 1, {})) == "HELLO"
    numbers = Puzzle("cipher", "q", "[[12,5,33]]", 1, {})
    assert verify(numbers, '```python\n[["12,5,33"]]\n```') == 1.0
    assert verify(numbers, "<answer>[[12,5,33]]</answer>") == 1.0


test_an_answer_without_text_is_rejected = broken_answers_test(
    cipher.check, "cipher", ["", "  ", "[[]]", "[[ ]]"]
)
