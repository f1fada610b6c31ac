"""The exact checking layer around math-verify: decide with exact arithmetic (sympy) and
explicit rules the cases math-verify is known to get wrong, and leave it every other case.

`ExactChecker.verdict` returns True or False where a rule decides and None where it does not
(math-verify's verdict then stands). Every rule is justified by rows of the grading table
(``packages/verifiers/tests/data/grading_table.jsonl``):

* **structure**: a set (or bare list of answers) is not a bracketed pair/tuple/interval, nor the
  reverse (math-verify equates ``\\{1,2\\}`` with ``(1,2)``); items are compared one by one when
  they carry decimals, percentages, degrees or units.
* **decimals**: a decimal equals a value only exactly (``0.5`` = ``\\frac12``), or within the
  relative tolerance the environment states (``rel_tol``; never for an integer gold) —
  never by rounding to 6 places (math-verify accepts ``0.3333333`` for ``\\frac13``).
* **percentages**: ``25\\%`` is 0.25, and is a count of 25 only when the question asks for a
  percentage; a bare ``25`` answers a gold ``25\\%``.
* **degrees**: ``30^\\circ`` equals ``\\frac{\\pi}{6}`` and ``\\arcsin\\frac12`` (radians) and
  ``30`` (official graders drop the sign). In a trigonometric function an argument in degrees
  is one: ``\\sin 60^\\circ`` equals ``\\frac{\\sqrt3}{2}`` and ``\\cos 30^\\circ``, and is not
  an angle of 60 (the grading worker parses such answers with degrees converted; a match as
  math-verify reads them, the sign dropped, still counts).
* **units**: known units convert exactly (``1 m`` = ``100 cm``); other dimensions are wrong;
  different unknown units are wrong with ``strict_units``, else left to math-verify.
* **text**: word answers compare as words (math-verify reads ``NaCl`` as ``a·c·l·n``).
* **inequalities**: an interval equals the inequality that describes it (``(0,\\infty)`` =
  ``x>0``), which math-verify misses.

It runs in the grading worker (`verifiers.rubrics.math_rubric.grade_math_answer`); sympy work
is bounded by an interval timer so a pathological answer cannot stall it.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

from verifiers.utils.answer_reading import (
    Reading,
    normalize_latex,
    read_answer,
    read_shape,
    unit_scale,
)

__all__ = ["ExactChecker", "LayerTimeout", "normalize_latex", "percent_question"]

_PERCENT_WORDS = re.compile(r"percent|%", re.I)
_WRAPPED_TEXT = re.compile(r"^\\(?:text|textbf|textrm|mathrm|mbox)\s*\{([^{}]*)\}$")
_WORDS = re.compile(r"[A-Za-z][A-Za-z' -]*")
# |difference| below this, relative to the values, is "numerically zero" (then sympy decides
# or the case goes back to math-verify); above it the values differ for certain at 60 digits
_ZERO = 1e-40


class LayerTimeout(BaseException):
    """The layer's own time bound fired (the caller falls back to math-verify's verdict).
    A BaseException so that no ``except Exception`` in sympy swallows it."""


def percent_question(question: str) -> bool:
    """The question asks for a percentage (so a percent answer may stand for its number)."""
    return bool(_PERCENT_WORDS.search(question or ""))


@contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """Raise `LayerTimeout` after ``seconds`` (interval timer; main thread only, where the
    grading workers run: elsewhere unbounded, the pool's hard kill is the limit)."""
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def fire(signum: int, frame: Any) -> None:
        raise LayerTimeout

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _text_answer(text: str) -> str | None:
    """The words of a word answer (``\\text{Tuesday}``, ``NaCl``), casefolded; else None.
    Bare lower-case words of three letters or fewer stay maths (``xyz`` is a product)."""
    t = text.strip()
    m = _WRAPPED_TEXT.match(t)
    inner = m.group(1).strip() if m else t
    if not _WORDS.fullmatch(inner):
        return None
    if not m and len(inner) < 4 and not any(c.isupper() for c in inner[1:]):
        return None
    return " ".join(inner.casefold().replace("-", " ").split()).rstrip(".")


class ExactChecker:
    """Exact verdicts for one grading. ``parse(text)`` is math-verify's parse of a normalised
    answer (cached by the caller, its own timeout inside); ``verify(g, r)`` math-verify's
    verdict for two normalised answers (for items no rule decides)."""

    def __init__(
        self,
        parse: Callable[[str], Sequence[Any]],
        verify: Callable[[str, str], bool],
        *,
        rel_tol: float = 0.0,
        strict_units: bool = False,
        percent_question: bool = False,
        time_limit: float = 0.0,
    ) -> None:
        self.parse = parse
        self.verify = verify
        self.rel_tol = rel_tol
        self.strict_units = strict_units
        self.percent_question = percent_question
        self.time_limit = time_limit

    def verdict(self, gold: str, response: str) -> bool | None:
        """True/False where a rule decides, None to keep math-verify's verdict."""
        g_text, r_text = _text_answer(gold), _text_answer(response)
        if g_text is not None and r_text is not None:
            return g_text == r_text
        gs, rs = read_shape(gold), read_shape(response)
        if gs.kind != "scalar" or rs.kind != "scalar":
            decided = self._structure(gs, rs)
            return decided if decided is not None else self._set_against_relation(gold, response)
        return self._scalar(gold, response)

    # -- structure ------------------------------------------------------------------------------
    def _structure(self, gs: Any, rs: Any) -> bool | None:
        if gs.kind == "set" and len(gs.items) >= 2 and rs.kind == "bracket":
            return False  # a pair, tuple or interval is not a set
        if gs.kind == "list" and rs.kind == "bracket" and rs.delimiters == "()":
            # "2, 3" may be a point as well as two answers: (2,3) is accepted, but only in
            # that order (math-verify reads both as sets and accepts (3,2)); "y=4, x=3" is the
            # point (3,4), its coordinates in the order of their variables' names
            golds = _coordinates(gs.items)
            if golds is None or len(golds) != len(rs.items):
                return None
            return self._items(golds, rs.items, ordered=True)
        if gs.kind == "bracket" and rs.kind == "set" and len(rs.items) >= 2:
            return False  # a set is not a pair, tuple or interval
        if gs.kind == "bracket" and len(gs.items) >= 3 and rs.kind in ("list", "set"):
            # a tuple: math-verify equates (1,2,3) with {3,2,1}; a bare list keeps its order
            if rs.kind == "set" or len(rs.items) != len(gs.items):
                return False
            return self._items(gs.items, rs.items, ordered=True)
        if gs.kind != rs.kind or len(gs.items) != len(rs.items) or gs.kind == "scalar":
            return None
        if gs.kind == "bracket" and gs.delimiters != rs.delimiters:
            return None  # [0,1) against (0,1]: math-verify compares intervals correctly
        if not any(read_answer(t).marked for t in (*gs.items, *rs.items)):
            return None  # nothing math-verify rounds or drops: its verdict stands
        return self._items(gs.items, rs.items, ordered=gs.kind == "bracket")

    def _items(self, golds: Sequence[str], responses: Sequence[str], ordered: bool) -> bool:
        if ordered:
            return all(self._same(g, r) for g, r in zip(golds, responses, strict=True))
        left = list(responses)
        for g in golds:
            match = next((r for r in left if self._same(g, r)), None)
            if match is None:
                return False
            left.remove(match)
        return True

    def _same(self, gold: str, response: str) -> bool:
        decided = self.verdict(gold, response)
        return self.verify(gold, response) if decided is None else decided

    # -- single values ---------------------------------------------------------------------------
    def _scalar(self, gold: str, response: str) -> bool | None:
        ga, ra = read_answer(gold), read_answer(response)
        if not (ga.marked or ra.marked):
            return self._set_against_relation(gold, response)
        gv, rv = self._value(ga), self._value(ra)
        if gv is None or rv is None:
            return None
        with bounded(self.time_limit):
            return self._compare(ga, ra, gv, rv)

    def _value(self, reading: Reading) -> Any:
        """The exact sympy value of a reading's body, or None (symbols, sets, unparseable)."""
        import sympy

        if reading.literal is not None:
            return reading.literal  # a Fraction: two written numbers never touch sympy
        # decimals written as exact fractions before parsing: sympy evaluates e^{0.5} to a
        # float, whose digits are no longer the ones written
        for candidate in self.parse(_DECIMAL_LITERAL.sub(_as_fraction, reading.body)):
            if isinstance(candidate, sympy.Eq) and candidate.lhs.is_Symbol:
                candidate = candidate.rhs  # x = 0.5: the value is 0.5
            if isinstance(candidate, sympy.Expr) and not candidate.free_symbols:
                return None if candidate.atoms(sympy.Float) else candidate
            break
        return None

    def _compare(self, ga: Reading, ra: Reading, gv: Any, rv: Any) -> bool | None:
        import sympy

        if isinstance(gv, Fraction) != isinstance(rv, Fraction):  # one exact expression
            gv, rv = _sympy(gv), _sympy(rv)
        if ga.unit and ra.unit and ga.unit != ra.unit:
            g_scale, r_scale = unit_scale(ga.unit), unit_scale(ra.unit)
            if g_scale is None or r_scale is None:
                return False if self.strict_units else None
            if g_scale[0] != r_scale[0]:
                return False  # another dimension: 5 dollars is not 5 cents
            ratio = r_scale[1] / g_scale[1]
            rv = rv * (ratio if isinstance(rv, Fraction) else _sympy(ratio))
        if ga.degree != ra.degree and not isinstance(gv, Fraction):
            radians = rv if ga.degree else gv
            # a value in radians: a multiple of pi, or an inverse trigonometric function's
            # (\arcsin\frac12 answers 30^\circ)
            if radians.has(sympy.pi, sympy.asin, sympy.acos, sympy.atan, sympy.acot):
                if ga.degree:
                    gv = gv * sympy.pi / 180
                else:
                    rv = rv * sympy.pi / 180
        gv = gv / 100 if ga.percent else gv  # 25% is 0.25
        rv = rv / 100 if ra.percent else rv
        candidates = [rv]
        if ga.percent and not ra.percent:
            candidates.append(rv / 100)  # "25" for a gold 25%: the percentage's number
        elif ra.percent and not ga.percent and self.percent_question:
            candidates.append(rv * 100)  # "25%" for a gold 25 when a percentage is asked
        tolerant = (ga.decimal or ra.decimal) and not ga.integer_literal and self.rel_tol > 0
        outcomes = [_same_number(gv, c, self.rel_tol if tolerant else 0.0) for c in candidates]
        if True in outcomes:
            return True
        return None if None in outcomes else False

    def _set_against_relation(self, gold: str, response: str) -> bool | None:
        """An interval against the inequality that describes it, either way round."""
        import sympy

        g, r = self.parse(gold)[:1], self.parse(response)[:1]
        if not g or not r:
            return None
        pair = (g[0], r[0])
        sets = [p for p in pair if isinstance(p, sympy.Interval | sympy.Union)]
        rels = [p for p in pair if isinstance(p, sympy.core.relational.Relational | sympy.And)]
        if len(sets) != 1 or len(rels) != 1 or len(rels[0].free_symbols) != 1:
            return None
        with bounded(self.time_limit):
            try:
                return bool(rels[0].as_set() == sets[0])
            except Exception:  # sympy cannot solve it: leave it to math-verify
                return None


_COORDINATE = re.compile(r"\s*([A-Za-z])\s*=\s*(\S.*)")


def _coordinates(items: Sequence[str]) -> list[str] | None:
    """Items as the coordinates of a point: as written, or, when every item is ``v = value``
    with a one-letter variable, the values ordered by variable (x, y, z); None when mixed."""
    matches = [_COORDINATE.fullmatch(t) for t in items]
    if all(m is None for m in matches):
        return None if _has_equations(items) else list(items)
    found = [m for m in matches if m is not None]
    if len(found) != len(matches) or len({m.group(1) for m in found}) != len(found):
        return None
    return [m.group(2) for m in sorted(found, key=lambda m: m.group(1))]


def _has_equations(items: Sequence[str]) -> bool:
    return any(
        "=" in t or "\\text" in t or "\\le" in t or "\\ge" in t or "<" in t or ">" in t
        for t in items
    )


def _sympy(value: Any) -> Any:
    import sympy

    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    return value


_DECIMAL_LITERAL = re.compile(r"(?<![\d.])(\d*)\.(\d+)(?![\d.])")


def _as_fraction(m: re.Match[str]) -> str:
    digits = m.group(1) + m.group(2)
    return f"(\\frac{{{int(digits)}}}{{{10 ** len(m.group(2))}}})"  # not {}: a set


def _same_number(g: Any, r: Any, rel_tol: float) -> bool | None:
    """Exactly equal (or within ``rel_tol`` of ``g``): True/False, None when undecided."""
    import sympy

    if isinstance(g, Fraction) or (g.is_Rational and r.is_Rational):  # no evalf needed
        g, r = Fraction(str(g)), Fraction(str(r))
        diff = abs(g - r)
        return diff == 0 or (rel_tol > 0 and diff <= Fraction(rel_tol) * abs(g))
    try:
        diff = sympy.simplify(g - r) if (g - r).has(sympy.Symbol) else g - r
        if diff == 0:
            return True
        size = abs(complex(diff.evalf(60)))
        scale = max(abs(complex(g.evalf(60))), abs(complex(r.evalf(60))), 1.0)
    except (TypeError, ValueError, OverflowError, ZeroDivisionError, AttributeError):
        return None
    if rel_tol > 0:
        return size <= rel_tol * abs(complex(g.evalf(60))) or _zero(diff, size, scale)
    if size > _ZERO * scale:
        return False
    return _zero(diff, size, scale)


def _zero(diff: Any, size: float, scale: float) -> bool | None:
    if size > _ZERO * scale:
        return False
    import sympy

    return True if sympy.simplify(diff) == 0 else None
