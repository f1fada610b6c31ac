"""Grading tables for every i3-logic family, each verdict confirmed by a solver written here.

Every row is (puzzle, response, meaning, verdict): ``response`` is what a model writes inside
its answer tags, ``meaning`` is what that response says, read by hand (``HEDGE`` when it offers
several candidates or no single answer), and ``verdict`` the reward it must get. Two checks per
row: the independent judge below (brute force or a separate implementation of the rules, never
the package's verifier) agrees with ``verdict`` on ``meaning``, and ``i3_logic.verify`` agrees
with ``verdict`` on ``response``.

Then, for generated puzzles (the prompts as the model sees them), the reference solution
confirmed by the judge is written in every accepted form (each must score 1), a corruption the
judge rejects in the same forms (each 0), and hedges that put the right answer beside a wrong
one (each 0).
"""

from __future__ import annotations

import ast
import itertools
import operator
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pytest
from i3_logic import FAMILIES, GENERATED, Puzzle, generate, verify
from i3_logic_testkit import ARITHMETIC, COMPARISONS, MINES, metadata_puzzle

HEDGE = object()  # the response does not commit to exactly one answer


def tagged(text: str) -> str:
    return f"<answer>{text}</answer>"


# -- independent judges: is ``meaning`` a correct answer to ``puzzle``? -------------------------
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}


_MATCHED_PAIR = re.compile(r"\(\)|\[\]|\{\}|<>")


def _reduce(seq: str) -> str:
    """Strip adjacent matched pairs with a regular expression until it no longer changes the
    string (neither the package's stack nor the family tests' pair loop)."""
    while (shorter := _MATCHED_PAIR.sub("", seq)) != seq:
        seq = shorter
    return seq


def dyck_completions(prefix: str) -> set[str]:
    """All shortest closing strings, by depth-first search over closers (pruned when the
    extended prefix can no longer be balanced)."""
    need = len(_reduce(prefix))
    found: set[str] = set()

    def extend(tail: str) -> None:
        if not all(ch in _PAIRS for ch in _reduce(prefix + tail)):
            return
        if len(tail) == need:
            if not _reduce(prefix + tail):
                found.add(tail)
            return
        for closer in _PAIRS.values():
            extend(tail + closer)

    extend("")
    return found


def judge_dyck(p: Puzzle, meaning: str) -> bool:
    prefix = p.metadata["question_sequence"]
    return any(meaning in (c, prefix + c) for c in dyck_completions(prefix))


_BOOL_OPS = {ast.And: all, ast.Or: any}


def _bool(node: ast.AST) -> Any:
    """Python's own parser (not > and > or), walked over constants, comparisons, + - * /."""
    if isinstance(node, ast.Constant) and type(node.value) in (bool, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _bool(node.operand)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_bool(node.operand)
    if isinstance(node, ast.BoolOp):
        return _BOOL_OPS[type(node.op)](_bool(v) for v in node.values)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return COMPARISONS[type(node.ops[0])](_bool(node.left), _bool(node.comparators[0]))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return Fraction(_bool(node.left)) / _bool(node.right)
    if isinstance(node, ast.BinOp):
        return ARITHMETIC[type(node.op)](_bool(node.left), _bool(node.right))
    raise ValueError(ast.dump(node))


def true_options(p: Puzzle) -> tuple[str, ...]:
    """The labels of the prompt's options ("A. <expression>" lines) that evaluate to True."""
    options = re.findall(r"^([A-H])\. (.+)$", p.question, re.MULTILINE)
    assert options, "no options in the prompt"
    return tuple(lab for lab, e in options if _bool(ast.parse(e, mode="eval").body) is True)


def judge_boolean(p: Puzzle, meaning: tuple[str, ...]) -> bool:
    """``meaning``: the labels named, in order (a repeated label is not a clean answer)."""
    labels = [m.upper() for m in meaning]
    return len(set(labels)) == len(labels) and set(labels) == set(true_options(p))


_LOWER = "abcdefghijklmnopqrstuvwxyz"


def new_alphabet_key(p: Puzzle) -> Callable[[str], str]:
    """The word spelt in the usual alphabet's letters at the new alphabet's ranks: Python's own
    string order then is the new alphabet's (the front letters of ``metadata`` first)."""
    front = p.metadata["front_letters"].split(",")
    alphabet = "".join(front) + "".join(c for c in _LOWER if c not in front)
    table = str.maketrans(alphabet, _LOWER)
    return lambda w: w.casefold().translate(table)


def judge_words(p: Puzzle, meaning: list[str]) -> bool:
    words = [w.casefold() for w in p.metadata["words"]]
    given = [w.casefold() for w in meaning]
    key = new_alphabet_key(p)
    pairs = itertools.pairwise(map(key, given))
    if p.metadata["order"] == 1:
        in_order = all(a <= b for a, b in pairs)
    else:
        in_order = all(a >= b for a, b in pairs)
    return Counter(given) == Counter(words) and in_order


def lies_solution(p: Puzzle) -> list[str]:
    """Brute force over the clue text: every honesty assignment consistent with the clues
    ("X is at the Y.", "REF tells the truth / lies.", "REF says REF tells the truth / lies.",
    where REF is a name or "the person at the Y"); one yes/no per question, in order."""
    clues, questions = p.question.split("Clues: ")[1].split("\nQuestions: ")
    where = dict(re.findall(r"(\w+) is at the ([a-z ]+?)\.", clues))
    person = {**{n: n for n in where}, **{f"the person at the {y}": n for n, y in where.items()}}
    ref = "|".join(sorted(map(re.escape, person), key=len, reverse=True))

    def who(text: str) -> str:
        return person[text[0].lower() + text[1:] if text.startswith("The ") else text]

    claim = r"(tells the truth|lies)"
    says = [
        (who(a), person[b], c == "tells the truth")
        for a, b, c in re.findall(rf"(?i:({ref})) says ({ref}) {claim}\.", clues)
    ]
    stated = [
        (who(a), c == "tells the truth")
        for a, c in re.findall(rf"(?:^|\. )(?i:({ref})) {claim}\.", clues)
    ]
    asked = [who(q) for q in re.findall(r"Does (.+?) tell the truth\?", questions)]
    names = sorted(where)
    answers = set()
    for values in itertools.product((True, False), repeat=len(names)):
        h = dict(zip(names, values, strict=True))
        if all(h[a] == c for a, c in stated) and all(h[a] == (h[b] == c) for a, b, c in says):
            answers.add(tuple("yes" if h[q] else "no" for q in asked))
    assert len(answers) == 1, answers  # the clues fix everyone asked about
    return list(answers.pop())


def judge_lies(p: Puzzle, meaning: list[str]) -> bool:
    return [m.lower() for m in meaning] == lies_solution(p)


_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def _value(node: ast.AST, numbers: list[int]) -> Fraction:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        numbers.append(node.value)
        return Fraction(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _value(node.left, numbers) / _value(node.right, numbers)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        return _ARITH[type(node.op)](_value(node.left, numbers), _value(node.right, numbers))
    raise ValueError(ast.dump(node))


def judge_24(p: Puzzle, meaning: list[str]) -> bool:
    """``meaning``: the sides of what was written (Python syntax); all must equal the target
    and one must use exactly the given numbers."""
    target, uses = Fraction(p.metadata["result"]), []
    for side in meaning:
        numbers: list[int] = []
        try:
            value = _value(ast.parse(side, mode="eval").body, numbers)
        except ZeroDivisionError:
            return False
        if value != target:
            return False
        uses.append(sorted(numbers) == sorted(p.metadata["numbers"]))
    return any(uses)


def judge_crypt(p: Puzzle, meaning: list[str]) -> bool:
    words = p.metadata["letter_words"]
    assert set(p.metadata["operators"]) == {"+"}  # the tables hold additions only
    if len(meaning) != len(words):
        return False
    mapping: dict[str, str] = {}
    for word, number in zip(words, meaning, strict=True):
        if len(word) != len(number) or (len(number) > 1 and number.startswith("0")):
            return False
        mapping.update(zip(word, number, strict=True))
    spelled = ["".join(mapping[ch] for ch in word) for word in words]
    injective = len(set(mapping.values())) == len(mapping)
    return injective and spelled == meaning and sum(map(int, meaning[:-1])) == int(meaning[-1])


def _around(r: int, c: int) -> set[tuple[int, int]]:
    return {(r + dr, c + dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1)} - {(r, c)}


def _mine_constraints(grid: list[list[str]]) -> list[tuple[int, set[tuple[int, int]]]]:
    n = len(grid)
    inside = {(r, c) for r in range(n) for c in range(n)}
    return [
        (int(v), {q for q in _around(r, c) & inside if grid[q[0]][q[1]] == "X"})
        for r, row in enumerate(grid)
        for c, v in enumerate(row)
        if v != "X"
    ]


def judge_mines(p: Puzzle, meaning: list[tuple[int, int]]) -> bool:
    """SynLogic's answer (its one-rule deduction, recomputed here as a fixpoint over sets), or
    the exact set of cells that are mines in every placement (brute force, small boards)."""
    grid = p.metadata["revealed_grid"]
    given = set(meaning)
    if len(given) != len(meaning):
        return False
    constraints = _mine_constraints(grid)
    known: set[tuple[int, int]] = set()
    while True:
        grown = set(known)
        for want, hidden in constraints:
            if hidden - known and len(hidden) == want:
                grown |= hidden
        if grown == known:
            break
        known = grown
    if given == known:
        return True
    frontier = sorted(set().union(*(h for _, h in constraints)))
    if len(frontier) > 14:
        return False  # too many placements to enumerate here
    always: set[tuple[int, int]] | None = None
    for bits in itertools.product((0, 1), repeat=len(frontier)):
        mines = {q for q, b in zip(frontier, bits, strict=True) if b}
        if all(len(h & mines) == want for want, h in constraints):
            always = mines if always is None else always & mines
    return always is not None and given == always


def judge_stars(p: Puzzle, meaning: list[tuple[int, int]]) -> bool:
    regions = p.metadata["region_grid"]
    assert p.metadata["k"] == 1  # the judge handles one star per row, column and region
    n = len(regions)
    stars = [(r - 1, c - 1) for r, c in meaning]
    if len(stars) != n or not all(0 <= r < n and 0 <= c < n for r, c in stars):
        return False
    apart = all(
        max(abs(a - c), abs(b - d)) > 1 for (a, b), (c, d) in itertools.combinations(stars, 2)
    )
    return (
        sorted(r for r, _ in stars) == list(range(n))
        and sorted(c for _, c in stars) == list(range(n))
        and len({regions[r][c] for r, c in stars}) == n
        and apart
    )


def _square(g: list[list[int]], n: int) -> bool:
    return len(g) == n and all(len(row) == n for row in g)


def _latin(g: list[list[int]], n: int) -> bool:
    lines = [*g, *zip(*g, strict=True)]
    return all(sorted(line) == list(range(1, n + 1)) for line in lines)


def judge_sudoku(p: Puzzle, g: list[list[int]]) -> bool:
    given = p.metadata["original_sudoku"]
    n = len(given)
    br, bc = {4: (2, 2), 6: (2, 3), 9: (3, 3)}[n]
    if not _square(g, n):
        return False
    boxes = [
        [g[r][c] for r in range(R, R + br) for c in range(C, C + bc)]
        for R in range(0, n, br)
        for C in range(0, n, bc)
    ]
    blank = (0, "X", "x")  # SynLogic writes "X"
    kept = all(v in blank or v == g[r][c] for r, row in enumerate(given) for c, v in enumerate(row))
    return _latin(g, n) and kept and all(sorted(b) == list(range(1, n + 1)) for b in boxes)


def judge_futoshiki(p: Puzzle, g: list[list[int]]) -> bool:
    # SynLogic's layout: prefilled values only in the question's grid, under "Current puzzle:".
    m = p.metadata
    n = m["grid_size"]
    if not _square(g, n):
        return False
    shown = p.question.split("Current puzzle:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    kept = all(shown[r].split()[c] == str(g[r][c]) for r, c in m["prefilled_coords"])
    compare = {"<": operator.lt, ">": operator.gt}
    holds = all(compare[s](g[a][b], g[c][d]) for (a, b), (c, d), s in m["constraints"])
    return _latin(g, n) and kept and holds


def _seen(line: list[int]) -> int:
    # Visible buildings = distinct values of the running maximum.
    return len(set(itertools.accumulate(line, max)))


def judge_sky(p: Puzzle, g: list[list[int]]) -> bool:
    m = p.metadata
    if not _square(g, m["n"]):
        return False
    cols = [list(c) for c in zip(*g, strict=True)]
    views = {
        "left": [_seen(r) for r in g],
        "right": [_seen(r[::-1]) for r in g],
        "top": [_seen(c) for c in cols],
        "bottom": [_seen(c[::-1]) for c in cols],
    }
    clues_hold = all(
        want == got for side, seen in views.items() for want, got in zip(m[side], seen, strict=True)
    )
    return _latin(g, m["n"]) and clues_hold


def judge_kukurasu(p: Puzzle, g: list[list[int]]) -> bool:
    rows, cols = p.metadata["row_sums"], p.metadata["col_sums"]
    if len(g) != len(rows) or any(len(r) != len(cols) or set(r) - {0, 1} for r in g):
        return False
    weighted_rows = [sum(j for j, v in enumerate(r, 1) if v) for r in g]
    weighted_cols = [sum(i for i, r in enumerate(g, 1) if r[c]) for c in range(len(cols))]
    return weighted_rows == rows and weighted_cols == cols


JUDGES: dict[str, Callable[[Puzzle, Any], bool]] = {
    "dyck_language": judge_dyck,
    "boolean_expressions": judge_boolean,
    "word_sorting": judge_words,
    "web_of_lies": judge_lies,
    "game_of_24": judge_24,
    "mathador": judge_24,
    "cryptarithm": judge_crypt,
    "minesweeper": judge_mines,
    "star_placement_puzzle": judge_stars,
    "sudoku": judge_sudoku,
    "futoshiki": judge_futoshiki,
    "skyscraper_puzzle": judge_sky,
    "kukurasu": judge_kukurasu,
}


def judge(p: Puzzle, meaning: Any) -> bool:
    return meaning is not HEDGE and JUDGES[p.task](p, meaning)


# -- the tables ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    puzzle: Puzzle
    response: str
    meaning: Any
    verdict: float

    def __repr__(self) -> str:
        return f"{self.puzzle.task}:{self.response!r}"


def rows(p: Puzzle, *table: tuple[str, Any, float]) -> list[Row]:
    return [Row(p, response, meaning, verdict) for response, meaning, verdict in table]


def dyck_pz(prefix: str) -> Puzzle:
    (closing,) = dyck_completions(prefix)
    return metadata_puzzle(
        "dyck_language", question_sequence=prefix, full_sequence=prefix + closing
    )


DYCK = dyck_pz("([{}(<")  # still open: ( [ ( <
DYCK_B = dyck_pz("{(<>[")
DYCK_C = dyck_pz("({")
FULL = "([{}(<>)])"
TABLE = (
    rows(
        DYCK,
        ("> ) ] )", ">)])", 1),  # the brackets to append, as asked
        (">)])", ">)])", 1),
        ("( [ { } ( < > ) ] )", FULL, 1),  # the whole completed sequence
        ("([{}(<>)])", FULL, 1),
        ('[">", ")", "]", ")"]', ">)])", 1),
        (">, ), ], )", ">)])", 1),
        ("`> ) ] )`.", ">)])", 1),
        ("&gt; ) ] )", ">)])", 1),
        ("\\rangle ) ] )", ">)])", 1),
        ("Answer: > ) ] )", ">)])", 1),
        ("> ) ]", ">)]", 0),
        ("> ) ] ) )", ">)]))", 0),
        (") ] ) >", ")])>", 0),
        ("( [ { } ( < > ) ] ) )", FULL + ")", 0),
        ("( [ { } ( < > ) ] ) ( )", FULL + "()", 0),  # balanced but not the shortest
        ("( [ { } ( <", "([{}(<", 0),  # the prefix alone
        ("( [ { } ( < **> ) ] )**", FULL, 1),  # the appended part in bold
        ("> ) ] ) or ) ] ) >", HEDGE, 0),
        ("> ) ] ), > ) ]", ">)])>)]", 0),  # right answer beside a wrong one
    )
    + rows(
        DYCK_B,
        ("] ) }", "])}", 1),
        ("{ ( < > [ ] ) }", "{(<>[])}", 1),
        ("] } )", "]})", 0),
        ("} ) ]", "})]", 0),
    )
    + rows(
        DYCK_C,
        ("\\boxed{\\} )}", "})", 1),  # LaTeX needs \} inside \boxed
        ("\\{ ( \\} )", "{(})", 0),  # LaTeX braces read as braces: a wrong sequence
        ("( { } )", "({})", 1),
        (") }", ")}", 0),
    )
)

# SynLogic's boolean_expressions: labelled options, the answer names the true ones.
BOOL = Puzzle(
    "boolean_expressions",
    "Which of these are true?\n\nA. not ((True) and (False))\nB. ((2 * 3) > (7)) or (False)\n"
    "C. ((5 - 9) < (-3)) and (True)\nD. not not (False)\n",
    "A,C",
    1,
    {},
)
BOOL_DIV = Puzzle(
    "boolean_expressions",
    "Which of these are true?\n\nA. (7 - (6 / 4)) > (5)\nB. (3 / 2) == (1)\n",
    "A",
    1,
    {},
)
AC = ("A", "C")
TABLE += rows(
    BOOL,
    ("A,C", AC, 1),
    ("A, C", AC, 1),
    ("C, A", ("C", "A"), 1),
    ("a,c", ("a", "c"), 1),
    ("**A, C**", AC, 1),
    ("$\\boxed{\\text{A,C}}$", AC, 1),
    ("[A, C]", AC, 1),
    ("['A', 'C']", AC, 1),
    ("A; C", AC, 1),
    ("A", ("A",), 0),
    ("A,C,D", ("A", "C", "D"), 0),
    ("A,A,C", ("A", "A", "C"), 0),  # upstream's letter-set comparison accepted this
    ("AC", HEDGE, 0),  # and this
    ("A and C", HEDGE, 0),
    ("A, C or D", HEDGE, 0),
    ("all but B and D", HEDGE, 0),
) + rows(BOOL_DIV, ("A", ("A",), 1), ("B", ("B",), 0), ("A, B", ("A", "B"), 0))


def words_pz(words: list[str], front: str = "x", order: int = 1) -> Puzzle:
    p = metadata_puzzle("word_sorting", words=words, front_letters=front, order=order)
    p.metadata["sorted_words"] = sorted(words, key=new_alphabet_key(p))
    return p


WORDS = words_pz(["pear", "apple", "fig", "banana"])  # x is in no word: the usual order
CAR = words_pz(["carpet", "Card", "car", "cart"])
NEW = words_pz(["apple", "river", "ant", "violin"], front="r,v", order=-1)
SORTED = ["apple", "banana", "fig", "pear"]
TABLE += (
    rows(
        WORDS,
        ("apple banana fig pear", SORTED, 1),
        ("apple, banana, fig, pear", SORTED, 1),
        ("Apple Banana Fig Pear", SORTED, 1),
        ("['apple', 'banana', 'fig', 'pear']", SORTED, 1),
        ('["apple", "banana", "fig", "pear"]', SORTED, 1),
        ("[apple, banana, fig, pear]", SORTED, 1),
        ("1. apple\n2. banana\n3. fig\n4. pear", SORTED, 1),
        ("- apple\n- banana\n- fig\n- pear", SORTED, 1),
        ("apple\nbanana\nfig\npear", SORTED, 1),
        ("apple, banana, fig, and pear.", SORTED, 1),
        ("apple < banana < fig < pear", SORTED, 1),
        ("apple fig banana pear", ["apple", "fig", "banana", "pear"], 0),
        ("apple banana fig", ["apple", "banana", "fig"], 0),
        ("apple banana fig pear pear", [*SORTED, "pear"], 0),
        ("apple banana fig pear or apple fig banana pear", HEDGE, 0),
    )
    + rows(
        CAR,
        ("car card carpet cart", ["car", "card", "carpet", "cart"], 1),
        ("car, Card, carpet, cart", ["car", "Card", "carpet", "cart"], 1),
        ("car cart card carpet", ["car", "cart", "card", "carpet"], 0),
    )
    + rows(
        NEW,  # r and v first, decreasing: apple > ant > violin > river
        ("\\boxed{apple,ant,violin,river}", ["apple", "ant", "violin", "river"], 1),
        ("apple, ant, violin, river", ["apple", "ant", "violin", "river"], 1),
        ("river violin ant apple", ["river", "violin", "ant", "apple"], 0),  # increasing
        ("violin river apple ant", ["violin", "river", "apple", "ant"], 0),  # the usual alphabet
    )
)

# SynLogic's web_of_lies: several questions, one yes/no each, in order. Amara is honest, so
# Bruno (who calls her a liar) lies, Celia (who backs Bruno) lies, Dario (who calls Celia a
# liar) tells the truth.
LIES = Puzzle(
    "web_of_lies",
    "Everyone always tells the truth or always lies.\nClues: Amara is at the bakery. Bruno is "
    "at the pier. Celia is at the orchard. Dario is at the harbor. The person at the bakery "
    "tells the truth. Bruno says the person at the bakery lies. The person at the orchard says "
    "Bruno tells the truth. Dario says Celia lies.\nQuestions: Does Celia tell the truth? Does "
    "the person at the pier tell the truth? Does the person at the harbor tell the truth?",
    "no, no, yes",
    1,
    {},
)
NNY = ["no", "no", "yes"]
TABLE += rows(
    LIES,
    ("no, no, yes", NNY, 1),
    ("No, No, Yes", NNY, 1),
    ("**no, no, yes**", NNY, 1),
    ("no no yes", NNY, 1),
    ("\\boxed{no, no, yes}", NNY, 1),
    ("false, false, true", NNY, 1),  # upstream read true/false as yes/no
    ("no, no, no", ["no", "no", "no"], 0),
    ("yes, no, yes", ["yes", "no", "yes"], 0),
    ("no, no", ["no", "no"], 0),
    ("no, no, yes, yes", ["no", "no", "yes", "yes"], 0),
    ("no, no, maybe", HEDGE, 0),
    ("no, no, yes or no", HEDGE, 0),
    ("Celia lies", HEDGE, 0),
)

G24 = metadata_puzzle("game_of_24", numbers=[5, 7, 8, 9], result=24, operators=["+", "-", "*", "/"])
G24_DIV = metadata_puzzle("mathador", numbers=[3, 3, 8, 8], result=24)
G31 = metadata_puzzle("game_of_24", numbers=[1, 3, 5, 9], result=31)
E = "8 * (5 + 7 - 9)"
TABLE += (
    rows(
        G24,
        (E, [E], 1),
        ("8 × (5 + 7 − 9)", [E], 1),
        ("8 \\times [5 + 7 - 9]", [E], 1),
        ("$8 \\cdot (5+7-9)$.", [E], 1),
        ("8(5 + 7 - 9)", [E], 1),  # juxtaposition is multiplication
        (f"{E} = 24", [E, "24"], 1),
        (f"24 = {E}", ["24", E], 1),
        (f"{E} = 8 * 3 = 24", [E, "8 * 3", "24"], 1),
        ("(5 + 7) * (9 - 8)", ["(5 + 7) * (9 - 8)"], 0),  # value 12
        ("(5 + 7) * (9 - 8) = 24", ["(5 + 7) * (9 - 8)", "24"], 0),
        (f"{E} = 25", [E, "25"], 0),
        ("8 * 3", ["8 * 3"], 0),  # not the given numbers
        ("(9 - 7) * 8 + 8", ["(9 - 7) * 8 + 8"], 0),
        ("24", ["24"], 0),
        (f"{E} or (5 + 7) * (9 - 8)", HEDGE, 0),
        (f"(5 + 7) * (9 - 8), {E}", HEDGE, 0),
    )
    + rows(
        G24_DIV,
        ("8 / (3 - 8 / 3)", ["8 / (3 - 8 / 3)"], 1),
        ("\\frac{8}{3 - \\frac{8}{3}}", ["8 / (3 - 8 / 3)"], 1),
        ("8 / 3 - 8 / 3 + 24", ["8 / 3 - 8 / 3 + 24"], 0),
    )
    + rows(
        G31,
        ("(9 - 3) * 5 + 1", ["(9 - 3) * 5 + 1"], 1),
        ("9 * 3 + 5 - 1 = 31", ["9 * 3 + 5 - 1", "31"], 1),
        ("(9 - 3) * 5 + 1 = 24", ["(9 - 3) * 5 + 1", "24"], 0),
    )
)

SEND = metadata_puzzle("cryptarithm", letter_words=["SEND", "MORE", "MONEY"], operators=["+"])
ABCD = metadata_puzzle("cryptarithm", letter_words=["AB", "CD", "EF"], operators=["+"])
MONEY = ["9567", "1085", "10652"]
TABLE += rows(
    SEND,
    ("9567 + 1085 = 10652", MONEY, 1),
    ("9567+1085=10652", MONEY, 1),
    ("$9567 + 1085 = 10652$.", MONEY, 1),
    ("  9567\n+ 1085\n------\n 10652", MONEY, 1),  # set out in columns
    ("S=9, E=5, N=6, D=7, M=1, O=0, R=8, Y=2", MONEY, 1),  # the assignment itself
    ("D = 7; E = 5; M = 1; N = 6; O = 0; R = 8; S = 9; Y = 2", MONEY, 1),
    ("9567 + 1085 = 10652 (S=9, E=5, N=6, D=7, M=1, O=0, R=8, Y=2)", MONEY, 1),  # both, agreeing
    ("S=9, E=5, N=6, D=7, M=1, O=0, R=8, Y=2\n9567 + 1085 = 10652", MONEY, 1),
    ("9567 + 1085 = 10652 (S=9, E=5, N=6, D=7, M=1, O=0, R=8, Y=3)", HEDGE, 0),  # disagreeing
    ("9567 + 1085 = 10653", ["9567", "1085", "10653"], 0),
    ("9567 + 1085 = 10662", ["9567", "1085", "10662"], 0),  # E would be 5 and 6
    ("9567+1085", HEDGE, 0),  # no sum
    ("S=9, E=5, N=6, D=7, M=1, O=0, R=8", HEDGE, 0),  # Y missing
    ("S=9, E=5, N=6, D=7, M=1, O=0, R=8, Y=2, Y=3", HEDGE, 0),
    ("9567 + 1085 = 10652 or 9567 + 1085 = 10653", HEDGE, 0),
) + rows(
    ABCD,
    ("18 + 25 = 43", ["18", "25", "43"], 1),
    ("23 + 45 = 68", ["23", "45", "68"], 1),  # any valid assignment
    ("08 + 15 = 23", ["08", "15", "23"], 0),  # leading zero
    ("18 + 28 = 46", ["18", "28", "46"], 0),  # B and D both 8
    ("13 + \u06614 = 27", ["13", "14", "27"], 0),  # A and C both 1, one in Arabic-Indic digits
)

MINES_2 = metadata_puzzle(
    "minesweeper",
    revealed_grid=[["X", "1", "0"], ["1", "2", "1"], ["0", "1", "X"]],
    current_mines=[[0, 0], [2, 2]],
)
# The one-rule deduction finds (1, 0) and (1, 1); all the numbers together also force (3, 1).
MINES_MORE = metadata_puzzle(
    "minesweeper",
    revealed_grid=[
        ["2", "2", "1", "X"],
        ["X", "X", "1", "X"],
        ["X", "X", "2", "X"],
        ["X", "X", "X", "0"],
    ],
    current_mines=[[1, 0], [1, 1]],
)
TABLE += (
    rows(
        MINES,
        ("(0, 0)", [(0, 0)], 1),
        ("[(0, 0)]", [(0, 0)], 1),
        ("[[0, 0]]", [(0, 0)], 1),
        ("{(0, 0)}", [(0, 0)], 1),
        ("(0,0).", [(0, 0)], 1),
        ("R0C0", [(0, 0)], 1),
        ("(2, 2)", [(2, 2)], 0),
        ("(0, 0), (2, 2)", [(0, 0), (2, 2)], 0),
        ("(0, 0), (0, 0)", [(0, 0), (0, 0)], 0),
        ("(0, 1)", [(0, 1)], 0),  # a revealed cell
        ("(1, 1)", [(1, 1)], 0),  # counted from 1
        ("(0, 0) or (2, 2)", HEDGE, 0),
        ("(0, 0) maybe", HEDGE, 0),
    )
    + rows(
        MINES_2,
        ("(0, 0), (2, 2)", [(0, 0), (2, 2)], 1),
        ("(2, 2) and (0, 0)", [(2, 2), (0, 0)], 1),
        ("[(0, 0), (2, 2)]", [(0, 0), (2, 2)], 1),
        ("(0, 0); (2, 2)", [(0, 0), (2, 2)], 1),
        ("(0, 0)", [(0, 0)], 0),
    )
    + rows(
        MINES_MORE,
        ("[(1, 0), (1, 1)]", [(1, 0), (1, 1)], 1),  # SynLogic's stored answer
        ("[(1, 0), (1, 1), (3, 1)]", [(1, 0), (1, 1), (3, 1)], 1),  # every forced mine
        ("[(1, 0), (1, 1), (3, 2)]", [(1, 0), (1, 1), (3, 2)], 0),
        ("[(1, 0), (3, 1)]", [(1, 0), (3, 1)], 0),
    )
)

STARS = metadata_puzzle(
    "star_placement_puzzle", n=4, k=1, region_grid=[list(r) for r in "AABB AABB CCDD CCDD".split()]
)
STARS_BAD = metadata_puzzle(
    "star_placement_puzzle", n=4, k=1, region_grid=[list(r) for r in "AAAA AAAA BBCC BDDD".split()]
)
ONE = [(1, 2), (2, 4), (3, 1), (4, 3)]
OTHER = [(1, 3), (2, 1), (3, 4), (4, 2)]
TABLE += (
    rows(
        STARS,
        ("(1, 2), (2, 4), (3, 1), (4, 3)", ONE, 1),
        ("[[1, 3], [2, 1], [3, 4], [4, 2]]", OTHER, 1),  # the other valid placement
        ("(1,2),(2,4),(3,1),(4,3).", ONE, 1),
        ("R1C2, R2C4, R3C1, R4C3", ONE, 1),
        ("{(4, 3), (3, 1), (2, 4), (1, 2)}", ONE[::-1], 1),
        ("(1, 2)\n(2, 4)\n(3, 1)\n(4, 3)", ONE, 1),
        ("(1, 2), (2, 3), (3, 1), (4, 4)", [(1, 2), (2, 3), (3, 1), (4, 4)], 0),  # touching
        ("(1, 2), (2, 4), (3, 1)", ONE[:3], 0),
        ("(1, 2), (1, 4), (3, 1), (4, 3)", [(1, 2), (1, 4), (3, 1), (4, 3)], 0),
        ("(1, 2), (2, 4), (3, 1), (5, 3)", [(1, 2), (2, 4), (3, 1), (5, 3)], 0),
        (
            "(1, 2), (2, 4), (3, 1), (4, 3) or (1, 3), (2, 1), (3, 4), (4, 2)",
            HEDGE,
            0,
        ),
        ("(1, 2), (2, 4), (3, 1), (4, 3), (1, 3), (2, 1), (3, 4), (4, 2)", ONE + OTHER, 0),
    )
    + rows(STARS_BAD, ("(1, 2), (2, 4), (3, 1), (4, 3)", ONE, 0))
)  # two stars in region A

SUDOKU = metadata_puzzle("sudoku", original_sudoku=[[1, 0, 0, 0], [0] * 4, [0] * 4, [0] * 4])
S = [[1, 2, 3, 4], [3, 4, 1, 2], [2, 1, 4, 3], [4, 3, 2, 1]]
S_TEXT = "1 2 3 4\n3 4 1 2\n2 1 4 3\n4 3 2 1"
TABLE += rows(
    SUDOKU,
    (S_TEXT, S, 1),
    (str(S), S, 1),
    ("1234\n3412\n2143\n4321", S, 1),
    ("1,2,3,4\n3,4,1,2\n2,1,4,3\n4,3,2,1", S, 1),
    ("[1, 2, 3, 4]\n[3, 4, 1, 2]\n[2, 1, 4, 3]\n[4, 3, 2, 1]", S, 1),
    ("1 2 | 3 4\n3 4 | 1 2\n----+----\n2 1 | 4 3\n4 3 | 2 1", S, 1),
    ("Row 1: 1 2 3 4\nRow 2: 3 4 1 2\nRow 3: 2 1 4 3\nRow 4: 4 3 2 1", S, 1),
    (
        "| 1 | 2 | 3 | 4 |\n|---|---|---|---|\n| 3 | 4 | 1 | 2 |\n| 2 | 1 | 4 | 3 |\n| 4 | 3 | 2 | 1 |",
        S,
        1,
    ),
    (f"```\n{S_TEXT}\n```", S, 1),
    ("1 2 3 4; 3 4 1 2; 2 1 4 3; 4 3 2 1", S, 1),
    (
        "2 1 3 4\n3 4 2 1\n1 2 4 3\n4 3 1 2",
        [[2, 1, 3, 4], [3, 4, 2, 1], [1, 2, 4, 3], [4, 3, 1, 2]],
        0,
    ),
    (
        "1 2 3 4\n3 4 2 1\n2 1 4 3\n4 3 2 1",
        [[1, 2, 3, 4], [3, 4, 2, 1], [2, 1, 4, 3], [4, 3, 2, 1]],
        0,
    ),
    (
        "1 2 3 4\n2 3 4 1\n3 4 1 2\n4 1 2 3",
        [[1, 2, 3, 4], [2, 3, 4, 1], [3, 4, 1, 2], [4, 1, 2, 3]],
        0,
    ),
    ("1 2 3 4 3 4 1 2 2 1 4 3 4 3 2 1", HEDGE, 0),  # one flat line: no rows
    (f"{S_TEXT}\n\nor\n\n2 1 4 3\n4 3 2 1\n1 2 3 4\n3 4 1 2", HEDGE, 0),
)

FUTO = metadata_puzzle(
    "futoshiki",
    "Current puzzle:\n1 X X\nX X X\nX X X\n\nInequality constraints:\n(1,2) < (1,3)",
    grid_size=3,
    prefilled_coords=[[0, 0]],
    constraints=[[[0, 1], [0, 2], "<"]],
)
LA = [[1, 2, 3], [2, 3, 1], [3, 1, 2]]
LB = [[1, 3, 2], [3, 2, 1], [2, 1, 3]]
LA_TEXT, LB_TEXT = "1 2 3\n2 3 1\n3 1 2", "1 3 2\n3 2 1\n2 1 3"
GRID_FORMS = [
    (LA_TEXT, LA),
    ("123\n231\n312", LA),
    ("[[1, 2, 3], [2, 3, 1], [3, 1, 2]]", LA),
    ("1, 2, 3\n2, 3, 1\n3, 1, 2", LA),
    ("Row 1: 1 2 3\nRow 2: 2 3 1\nRow 3: 3 1 2", LA),
    ("**1 2 3\n2 3 1\n3 1 2**", LA),
]
TABLE += rows(
    FUTO,
    *[(text, grid, 1) for text, grid in GRID_FORMS],
    (LB_TEXT, LB, 0),  # Latin, keeps the clue, breaks R1C2 < R1C3
    ("1 2 3\n2 3 1\n3 2 1", [[1, 2, 3], [2, 3, 1], [3, 2, 1]], 0),
    ("2 3 1\n3 1 2\n1 2 3", [[2, 3, 1], [3, 1, 2], [1, 2, 3]], 0),  # clue lost
    ("1 2 3\n2 3 1", HEDGE, 0),
    (f"{LA_TEXT}\nor\n{LB_TEXT}", HEDGE, 0),
)

SKY = metadata_puzzle(
    "skyscraper_puzzle", n=3, top=[3, 2, 1], bottom=[1, 2, 2], left=[3, 2, 1], right=[1, 2, 2]
)
SKY_ONE = metadata_puzzle(  # the clues of LB (SynLogic gives every clue)
    "skyscraper_puzzle", n=3, top=[2, 1, 2], bottom=[2, 3, 1], left=[2, 1, 2], right=[2, 3, 1]
)
TABLE += rows(
    SKY,
    *[(text, grid, 1) for text, grid in GRID_FORMS],
    (LB_TEXT, LB, 0),
    ("3 1 2\n1 2 3\n2 3 1", [[3, 1, 2], [1, 2, 3], [2, 3, 1]], 0),
    (f"{LA_TEXT}\n\n{LB_TEXT}", HEDGE, 0),
) + rows(
    SKY_ONE,
    (LB_TEXT, LB, 1),
    (f"```python\n{LB}\n```", LB, 1),
    ("2 3 1\n3 1 2\n1 2 3", [[2, 3, 1], [3, 1, 2], [1, 2, 3]], 0),
    (LA_TEXT, LA, 0),
)

KUKU = metadata_puzzle("kukurasu", row_sums=[4, 2], col_sums=[1, 2, 1])
K = [[1, 0, 1], [0, 1, 0]]
TABLE += rows(
    KUKU,
    ("1 0 1\n0 1 0", K, 1),
    ("101\n010", K, 1),
    ("[[1, 0, 1], [0, 1, 0]]", K, 1),
    ("1,0,1\n0,1,0", K, 1),
    ('[["1", "0", "1"], ["0", "1", "0"]]', K, 1),
    ("Row 1: 1 0 1\nRow 2: 0 1 0", K, 1),
    ("1 0 1; 0 1 0", K, 1),
    ("```\n1 0 1\n0 1 0\n```", K, 1),
    ("1 0 1\n1 1 0", [[1, 0, 1], [1, 1, 0]], 0),
    ("1 0 1\n0 2 0", [[1, 0, 1], [0, 2, 0]], 0),
    ("0 1 0\n1 0 1", [[0, 1, 0], [1, 0, 1]], 0),
    ("1 0 1", HEDGE, 0),
    ("1 0 1 0 1 0", HEDGE, 0),
    ("1 0 1\n0 1 0\nor\n1 0 1\n1 1 0", HEDGE, 0),
)


@pytest.mark.parametrize("row", TABLE, ids=repr)
def test_table_row(row: Row):
    assert judge(row.puzzle, row.meaning) == bool(row.verdict), "the table's verdict is wrong"
    assert verify(row.puzzle, tagged(row.response)) == row.verdict


def test_every_family_has_ten_rows_with_both_verdicts():
    count = Counter(FAMILIES_OF[r.puzzle.task] for r in TABLE)
    assert set(count) == set(GENERATED)  # the other families: tests/rows, tests/families
    assert min(count.values()) >= 10, count
    for family in GENERATED:
        verdicts = {r.verdict for r in TABLE if FAMILIES_OF[r.puzzle.task] == family}
        assert verdicts == {0, 1}, family


FAMILIES_OF = {"mathador": "game_of_24", **{name: name for name in FAMILIES}}


# -- generated puzzles: every accepted form of the right answer, and of wrong ones ----------------
def _false_option(p: Puzzle, labels: tuple[str, ...]) -> str:
    return next(lab for lab in re.findall(r"^([A-H])\. ", p.question, re.M) if lab not in labels)


def _lies_forms(p: Puzzle, a: list[str]) -> list[str]:
    words = ", ".join(a)
    return [
        words,
        words.upper(),
        " ".join(a),
        f"**{words}**",
        ",".join(a),
        ", ".join("true" if w == "yes" else "false" for w in a),
        f"\\boxed{{{words}}}",
    ]


def _grid_forms(g: list[list[int]]) -> list[str]:
    lines = [" ".join(map(str, r)) for r in g]
    table = [f"| {' | '.join(map(str, r))} |" for r in g]
    return [
        "\n".join(lines),
        str(g),
        "\n".join("".join(map(str, r)) for r in g),
        "\n".join(", ".join(map(str, r)) for r in g),
        "\n".join(str(r) for r in g),
        "\n".join(f"Row {i}: {line}" for i, line in enumerate(lines, 1)),
        "\n".join([table[0], "|" + "---|" * len(g[0]), *table[1:]]),
        "```\n" + "\n".join(lines) + "\n```",
        "; ".join(lines),
    ]


def reference_grid(p: Puzzle) -> list[list[int]]:
    """A generated grid puzzle's solution as integers (SynLogic stores each family's its own
    way: Sudoku's complete_sudoku, Futoshiki's answer [[1 2,2 1]], Kukurasu's "1"/"X" cells)."""
    if p.task == "sudoku":
        return p.metadata["complete_sudoku"]
    if p.task == "futoshiki":
        return [[int(v) for v in row.split()] for row in p.answer.strip("[]").split(",")]
    if p.task == "kukurasu":
        return [[int(v == "1") for v in row] for row in p.metadata["solution"]]
    if p.task == "skyscraper_puzzle":
        return p.metadata["solved_grid"]
    return p.metadata["solution"]


def _cells_forms(cells: list[tuple[int, int]]) -> list[str]:
    pairs = [f"({r}, {c})" for r, c in cells]
    return [
        ", ".join(pairs),
        str([[r, c] for r, c in cells]),
        str(cells),
        "{" + ", ".join(pairs) + "}",
        ", ".join(f"R{r}C{c}" for r, c in cells),
        "; ".join(pairs),
        " and ".join(pairs),
        "\n".join(pairs),
        ",".join(f"({r},{c})" for r, c in cells) + ".",
    ]


def _swap_first_difference(g: list[list[int]]) -> list[list[int]]:
    g = [row[:] for row in g]
    for row in g:
        if len(set(row)) > 1:
            j = next(j for j in range(1, len(row)) if row[j] != row[0])
            row[0], row[j] = row[j], row[0]
            return g
    raise AssertionError("grid has no two different cells in a row")


def _crypt_numbers(p: Puzzle) -> list[str]:
    return [str(n) for n in p.metadata["numbers"]]


def _mapping(p: Puzzle, numbers: list[str], sep: str) -> str:
    words = p.metadata["letter_words"]
    digit = dict(zip("".join(words), "".join(numbers), strict=True))
    return sep.join(f"{letter}={d}" for letter, d in sorted(digit.items()))


@dataclass(frozen=True)
class Forms:
    """How one family's answers are written: the reference answer of a generated puzzle (as
    the judge reads it), the ways to write an answer, corruptions, and the judge's meaning."""

    reference: Callable[[Puzzle], Any]
    write: Callable[[Puzzle, Any], list[str]]
    corrupt: Callable[[Puzzle, Any], list[Any]]
    meaning: Callable[[Any], Any] = lambda answer: answer
    write_right_only: Callable[[Puzzle, Any], list[str]] = lambda p, answer: []


def _dyck_forms(p: Puzzle, closing: str) -> list[str]:
    spaced, seq = " ".join(closing), " ".join(p.metadata["question_sequence"])
    return [
        spaced,
        closing,
        f"{seq} {spaced}",  # the whole completed sequence
        seq.replace(" ", "") + closing,
        str(list(closing)),
        ", ".join(closing),
        "\\boxed{" + spaced.replace("}", "\\}") + "}",
        spaced.replace(">", "\\rangle"),
        f"Answer: {spaced}.",
    ]


def _choice_forms(word: str) -> list[str]:
    return [
        word,
        word.lower() + ".",
        word.upper(),
        f"**{word}**",
        f"\\boxed{{\\text{{{word}}}}}",
        f"Answer: {word}",
        f"`{word}`",
        f"'{word}'",
    ]


def _g24_forms(p: Puzzle, e: str) -> list[str]:
    t = p.metadata["result"]
    return [
        e,
        f"{e} = {t}",
        f"{t} = {e}",
        e.replace("*", "×").replace("/", "÷").replace("-", "−"),
        "$" + e.replace("*", " \\times ").replace("/", " \\div ") + "$",
        f"{e}.",
        "\\boxed{" + e + "}",
    ]


def _crypt_forms(p: Puzzle, numbers: list[str]) -> list[str]:
    *addends, total = numbers
    width = len(total) + 2
    column = [a.rjust(width) for a in addends[:-1]] + ["+ " + addends[-1].rjust(width - 2)]
    return [
        f"{' + '.join(addends)} = {total}",
        f"{'+'.join(addends)}={total}",
        f"${' + '.join(addends)} = {total}$.",
        "\n".join([*column, "-" * width, total.rjust(width)]),
    ]


FORMS: dict[str, Forms] = {
    "dyck_language": Forms(
        lambda p: dyck_completions(p.metadata["question_sequence"]).pop(),
        _dyck_forms,
        lambda p, c: [c[:-1], c + c[-1], c[::-1]],
    ),
    "boolean_expressions": Forms(
        true_options,
        lambda p, labels: [
            ",".join(labels),
            ", ".join(labels),
            " ".join(labels),
            ", ".join(labels[::-1]),
            ",".join(labels).lower(),
            f"\\boxed{{{','.join(labels)}}}",
            str(list(labels)),
            "[" + ", ".join(labels) + "]",
        ],
        lambda p, labels: [
            labels[1:] or (_false_option(p, labels),),
            (*labels, _false_option(p, labels)),
            (*labels, labels[0]),
        ],
    ),
    "web_of_lies": Forms(
        lies_solution,
        _lies_forms,
        lambda p, a: [[{"yes": "no", "no": "yes"}[a[0]], *a[1:]], a[:-1], [*a, a[0]]],
    ),
    "word_sorting": Forms(
        lambda p: sorted(p.metadata["words"], key=new_alphabet_key(p))[:: p.metadata["order"]],
        lambda p, ws: [
            " ".join(ws),
            ", ".join(ws),
            "\n".join(ws),
            "\n".join(f"{i}. {w}" for i, w in enumerate(ws, 1)),
            "\n".join(f"- {w}" for w in ws),
            str(ws),
            '["' + '", "'.join(ws) + '"]',
            ", ".join(ws[:-1]) + f", and {ws[-1]}.",
            " ".join(w.capitalize() for w in ws),
            " < ".join(ws),
        ],
        lambda p, ws: [[ws[1], ws[0], *ws[2:]], ws[:-1], [*ws, ws[0]]],
    ),
    "game_of_24": Forms(
        lambda p: p.metadata["solutions"][0],
        _g24_forms,
        lambda p, e: [f"{e} + 1", f"({e}) * 2", f"{e} - {e}"],
        meaning=lambda e: [e],
    ),
    "cryptarithm": Forms(
        _crypt_numbers,
        _crypt_forms,
        lambda p, ns: [[*ns[:-1], str(int(ns[-1]) + 1)], [*ns[:-1], ns[-1][::-1]]],
        write_right_only=lambda p, ns: [
            _mapping(p, ns, ", "),
            _mapping(p, ns, "; "),
            f"{_crypt_forms(p, ns)[0]} ({_mapping(p, ns, ', ')})",
        ],
    ),
    "minesweeper": Forms(
        lambda p: [(r, c) for r, c in p.metadata["current_mines"]],
        lambda p, cells: _cells_forms(cells),
        lambda p, cells: [cells[:-1], [*cells, cells[0]], [(r, c + 100) for r, c in cells]],
    ),
    "star_placement_puzzle": Forms(
        lambda p: [(int(r), int(c)) for r, c in re.findall(r"\((\d+), (\d+)\)", p.answer)],
        lambda p, cells: _cells_forms(cells),
        lambda p, cells: [cells[:-1], [(c, r) for r, c in cells], [(r, r) for r, _ in cells]],
    ),
    **{
        name: Forms(
            lambda p: reference_grid(p),
            lambda p, g: _grid_forms(g),
            lambda p, g: [_swap_first_difference(g), g[:-1]],
        )
        for name in ("sudoku", "futoshiki", "skyscraper_puzzle", "kukurasu")
    },
}


@pytest.mark.parametrize("family", sorted(GENERATED))
def test_generated_puzzles_every_form_right_and_wrong(family):
    forms = FORMS[family]
    checked = 0
    for level in (1, 2, 3):
        for index in range(2):
            p = generate(family, 19, level, index)
            right = forms.reference(p)
            assert judge(p, forms.meaning(right)), "the reference solution is wrong"
            for text in forms.write(p, right) + forms.write_right_only(p, right):
                assert verify(p, tagged(text)) == 1.0, (level, text)
                checked += 1
            wrongs = 0
            for other in forms.corrupt(p, right):
                if other == right or other in ("", []):  # nothing to write
                    continue
                # A corruption can happen to be another solution (rule-checked families
                # accept any): the judge decides, and the grader must agree in every form.
                expected = 1.0 if judge(p, forms.meaning(other)) else 0.0
                for text in forms.write(p, other):
                    assert verify(p, tagged(text)) == expected, (level, text)
                if expected:
                    continue
                wrong, wrongs = other, wrongs + 1
                # Hedges: the right answer beside a wrong one is not an answer.
                r0, w0 = forms.write(p, right)[0], forms.write(p, wrong)[0]
                for text in (f"{r0} or {w0}", f"{w0}\n{r0}", f"{r0}\n\nor\n\n{w0}"):
                    assert verify(p, tagged(text)) == 0.0, (level, text)
                checked += 1
            assert wrongs, f"no corruption of level {level} puzzle {index} is wrong"
    assert checked >= 30


# -- differential: random near-miss candidates, grader against judge ------------------------------
def _near(rng: random.Random, p: Puzzle, right: Any) -> Any:
    """A random candidate close to the right answer (often wrong, sometimes another solution)."""
    family = p.task
    if family == "dyck_language":
        return "".join(rng.choice(")]}>") if rng.random() < 0.3 else ch for ch in right)
    if family in ("boolean_expressions",):
        options = re.findall(r"^([A-H])\. ", p.question, re.M)
        return tuple(sorted(rng.sample(options, rng.randint(1, len(options)))))
    if family == "web_of_lies":
        return [rng.choice(("yes", "no")) for _ in right]
    if family == "word_sorting":
        words = right[:]
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
        return words if rng.random() < 0.8 else right
    if family == "game_of_24":
        numbers = re.findall(r"\d+", right)
        rng.shuffle(numbers)
        it = iter(numbers)
        return re.sub(r"\d+", lambda m: next(it), right)
    if family == "cryptarithm":
        addends = right[:-1]
        i = rng.randrange(len(addends))
        digits = list(addends[i])
        j = rng.randrange(len(digits))
        digits[j] = str(rng.randrange(10))
        addends[i] = "".join(digits)
        return [*addends, str(sum(map(int, addends)))]
    if family == "minesweeper":
        hidden = [
            (r, c)
            for r, row in enumerate(p.metadata["revealed_grid"])
            for c, v in enumerate(row)
            if v == "X"
        ]
        cells = right[:]
        cells[rng.randrange(len(cells))] = rng.choice(hidden)
        return cells
    if family == "star_placement_puzzle":
        cols = [c for _, c in right]
        i, j = rng.sample(range(len(cols)), 2)
        cols[i], cols[j] = cols[j], cols[i]
        return [(r, c) for (r, _), c in zip(right, cols, strict=True)]
    grid = [row[:] for row in right]  # grids: change one cell
    r, c = rng.randrange(len(grid)), rng.randrange(len(grid[0]))
    grid[r][c] = rng.choice([v for v in {*grid[r], 0, 1} if v != grid[r][c]] or [grid[r][c]])
    return grid


@pytest.mark.parametrize("family", sorted(GENERATED))
def test_grader_agrees_with_the_judge_on_random_near_misses(family):
    rng = random.Random(f"near-miss:{family}")
    forms = FORMS[family]
    verdicts = Counter()
    for level in (1, 2, 3):
        for index in range(4):
            p = generate(family, 23, level, index)
            right = forms.reference(p)
            for _ in range(8):
                candidate = _near(rng, p, right)
                expected = 1.0 if judge(p, forms.meaning(candidate)) else 0.0
                written = forms.write(p, candidate)
                for text in (written[0], rng.choice(written)):
                    assert verify(p, tagged(text)) == expected, (level, text)
                verdicts[expected] += 1
    assert verdicts[0.0] >= 20  # the candidates do probe wrong answers
