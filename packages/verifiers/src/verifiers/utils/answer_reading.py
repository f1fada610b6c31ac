"""How a final answer is written, read from its LaTeX before any grading: its outer structure
(a set, a bracketed tuple or interval, a bare list), and for a single number whether it was
written as a decimal, a percentage, an angle in degrees or a quantity with a unit.

math-verify throws most of this away (``25\\%`` and ``25`` both become numbers that it rounds,
``5\\text{ cm}`` becomes ``5``, ``(1,2)`` becomes an interval equal to ``\\{1,2\\}``), which is
where its false verdicts come from. `verifiers.utils.exact_answers` decides with it.
Pure string work: no sympy import here, so reading costs microseconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

__all__ = [
    "Reading",
    "Shape",
    "normalize_latex",
    "read_answer",
    "read_shape",
    "trig_in_degrees",
    "unit_scale",
]

# -- normalisation (also what math-verify is given) ---------------------------------------------
_FULL_STOP = re.compile(r"(?<=[\d})])\s*\.$")  # "120." ends a sentence: the answer is 120
_MATH_DOLLAR = re.compile(r"(?<!\\)\$")  # $...$ math delimiters, not an escaped \$ (dollars)
_NOISE = re.compile(r"\\displaystyle|\\left(?![a-zA-Z])|\\right(?![a-zA-Z])|\\!")
_DEGREE_SIGN = re.compile(r"\s*(?:\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree|°)")
# 6.02e23 / 1.5E-3 as a whole number (math-verify reads the e as Euler's number)
_E_NOTATION = re.compile(r"^([-+]?\d+(?:\.\d+)?)[eE]([-+]?\d+)(?![\d.])")
# 2\frac{1}{3} as a whole answer is the mixed number 7/3 (math-verify multiplies: 2/3)
_MIXED = re.compile(r"^([-+]?)(\d+)\s*\\[dt]?frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}$")
# digit grouping with thin spaces (1\,000\,000) and a braced decimal point (0{.}5)
_GROUPING = re.compile(r"(?<=\d)(?:\\[,;: ]|~)(?=\d{3}(?!\d))")
# (?<!\d): a match starts where a run of digits does (the same matches), not at each digit of
# it, which made a 100,000-digit answer quadratic (minutes)
_REPEATING = re.compile(r"(?<!\d)(\d*)\.(\d*)\\overline\s*\{\s*(\d+)\s*\}")


# a trigonometric function (not \arcsin, not \sinh), whose argument a degree sign may mark
_TRIG = re.compile(r"\\(?:sin|cos|tan|cot|sec|csc)(?![a-zA-Z])")


def trig_in_degrees(text: str) -> bool:
    """A normalised answer with a trigonometric function and a degree sign (``\\sin 60^\\circ``,
    ``2\\cos 80^\\circ``): its degrees are the function's argument, not the whole answer's."""
    return "^\\circ" in text and _TRIG.search(text) is not None


def _repeating_to_fraction(m: re.Match[str]) -> str:
    whole, fixed, period = m.group(1) or "0", m.group(2), m.group(3)
    # x = whole.fixed(period)...: exact value whole + (fixed·(10^p − 1) + period) / (10^f·(10^p − 1))
    nines = 10 ** len(period) - 1
    value = int(whole) + Fraction(int(fixed or "0") * nines + int(period), 10 ** len(fixed) * nines)
    return f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


@lru_cache(maxsize=8192)  # pure: the same gold is read for every rollout of its group
def normalize_latex(text: str) -> str:
    """LaTeX with spacing noise removed and notations math-verify misreads rewritten to
    equivalent ones it reads: ``6.02e23`` → ``6.02\\times10^{23}``, ``45°``/``45^{\\circ}`` →
    ``45^\\circ``, ``0.\\overline{36}`` → ``\\frac{4}{11}`` (exact)."""
    text = _NOISE.sub("", _MATH_DOLLAR.sub("", text)).strip()
    text = _FULL_STOP.sub("", text)
    text = _DEGREE_SIGN.sub("^\\\\circ", text)
    text = _GROUPING.sub("", text.replace("{.}", "."))
    text = _REPEATING.sub(_repeating_to_fraction, text)
    mixed = _MIXED.match(text)
    if mixed and int(mixed.group(3)) < int(mixed.group(4)):
        sign, whole, num, den = mixed.groups()
        text = f"{sign}\\frac{{{int(whole) * int(den) + int(num)}}}{{{den}}}"
    return _E_NOTATION.sub(r"\1\\times10^{\2}", text)


# -- outer structure ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Shape:
    """``kind``: "set" (``\\{..\\}``), "bracket" (``(..)``/``[..]`` with a top-level comma: a
    tuple or an interval), "list" (top-level commas, no brackets) or "scalar"."""

    kind: str
    items: tuple[str, ...] = ()
    delimiters: str = ""


_OPEN, _CLOSE = "([{", ")]}"
_THOUSANDS = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def _split_top(text: str) -> list[str] | None:
    """Top-level comma-separated parts (None when brackets do not balance)."""
    parts, depth, start = [], 0, 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":  # \{ \} count as brackets; \, \; \[ and other escapes are skipped
            if text[i + 1 : i + 2] in ("{", "}"):
                depth += 1 if text[i + 1] == "{" else -1
            i += 2
            continue
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    if depth != 0:
        return None
    parts.append(text[start:].strip())
    return parts


def _encloses(text: str, opener: str, closer: str) -> bool:
    """The opening delimiter at the start is closed exactly at the end."""
    if not (text.startswith(opener) and text.endswith(closer)) or len(text) < 2 + len(opener):
        return False
    inner = text[len(opener) : len(text) - len(closer)]
    return _split_top(inner) is not None and _balanced_prefixes(inner)


def _balanced_prefixes(inner: str) -> bool:
    """No prefix of ``inner`` closes more than it opens (so the outer pair really matches)."""
    depth = 0
    i = 0
    while i < len(inner):
        if inner[i] == "\\":
            if inner[i + 1 : i + 2] in ("{", "}"):
                depth += 1 if inner[i + 1] == "{" else -1
            i += 2
            continue
        if inner[i] in _OPEN:
            depth += 1
        elif inner[i] in _CLOSE:
            depth -= 1
        if depth < 0:
            return False
        i += 1
    return True


@lru_cache(maxsize=8192)  # pure: the same gold is read for every rollout of its group
def read_shape(text: str) -> Shape:
    """The outer structure of a normalised answer (see `Shape`)."""
    t = text.strip()
    if "\\begin" in t or "&" in t or _THOUSANDS.fullmatch(t):
        return Shape("scalar")
    if _encloses(t, "\\{", "\\}"):
        parts = _split_top(t[2:-2]) or []
        return Shape("set", tuple(parts), "{}")
    if t[:1] in "([" and t[-1:] in ")]" and _encloses(t, t[0], t[-1]):
        parts = _split_top(t[1:-1]) or []
        if len(parts) >= 2:
            return Shape("bracket", tuple(parts), t[0] + t[-1])
    top = _split_top(t)
    if top is not None and len(top) >= 2:
        return Shape("list", tuple(top))
    return Shape("scalar")


# -- numbers, percentages, degrees, units ---------------------------------------------------------
_NUMBER = re.compile(
    r"""^(?P<currency>\\\$\s*)?(?P<sign>[-+−]?)\s*
        (?P<mantissa>\d{1,3}(?:(?:\{,\}|,)\d{3})+(?:\.\d*)?|\d+(?:\.\d*)?|\.\d+)
        (?:\s*(?:\\times|\\cdot|×)\s*10\s*\^\s*(?:\{\s*(?P<exp1>[-+−]?\d+)\s*\}|(?P<exp2>[-+−]?\d)))?
        \s*(?P<rest>.*)$""",
    re.X | re.S,
)
# 1\times10^{999999999} is not computed here (math-verify's own timeout handles it)
MAX_EXPONENT = 400
_DECIMAL = re.compile(r"\d\.\d|(?<![\d.])\.\d|\\times\s*10\s*\^|\\cdot\s*10\s*\^")
_WRAPPED = re.compile(r"\\(?:text|textrm|mathrm|mbox|textnormal|operatorname)\s*\{([^{}]*)\}")
_SPACING = re.compile(r"\\[,;: ]|\\quad|\\qquad|~")
_TRAILING_UNIT = re.compile(
    r"^(?P<body>.*?\S)\s*(?:\\[,;: ]|~|\s)*"
    r"\\(?:text|textrm|mathrm|mbox)\s*\{\s*(?P<unit>[^{}]*?)\s*\}\s*(?P<power>\^\s*\{?\s*[23]\s*\}?)?$",
    re.S,
)
_PERCENT = re.compile(r"^(?P<body>.*?)\s*(?:\\%|%|\\text\s*\{\s*percent\s*\})$", re.S)

# unit name -> (dimension, exact scale in the dimension's base unit)
_LENGTH = {
    "mm": Fraction(1, 1000),
    "cm": Fraction(1, 100),
    "m": Fraction(1),
    "km": Fraction(1000),
    "in": Fraction(254, 10000),
    "ft": Fraction(3048, 10000),
    "yd": Fraction(9144, 10000),
    "mi": Fraction(1609344, 1000),
}
_MASS = {"mg": Fraction(1, 1000), "g": Fraction(1), "kg": Fraction(1000)}
_TIME = {"s": Fraction(1), "min": Fraction(60), "h": Fraction(3600), "day": Fraction(86400)}
_MONEY = {"dollar": Fraction(1), "cent": Fraction(1, 100)}
_ALIASES = {
    "millimeter": "mm", "millimetre": "mm", "centimeter": "cm", "centimetre": "cm",
    "meter": "m", "metre": "m", "kilometer": "km", "kilometre": "km", "inch": "in",
    "inche": "in", "foot": "ft", "feet": "ft", "yard": "yd", "mile": "mi",
    "milligram": "mg", "gram": "g", "kilogram": "kg", "sec": "s", "second": "s",
    "minute": "min", "hour": "h", "hr": "h", "days": "day", "\\$": "dollar", "$": "dollar",
    "usd": "dollar", "cents": "cent", "¢": "cent",
}  # fmt: skip
_UNITS = {
    **{u: ("length", s) for u, s in _LENGTH.items()},
    **{u: ("mass", s) for u, s in _MASS.items()},
    **{u: ("time", s) for u, s in _TIME.items()},
    **{u: ("money", s) for u, s in _MONEY.items()},
}
# compound units written out after a number (m/s^2, km/h, N·m): a letter unit, then / · or *
_COMPOUND = re.compile(
    r"[A-Za-zµΩ]+(?:\^\{?-?\d\}?)?(?:\s*(?:/|·|\*|\\cdot)\s*[A-Za-zµΩ]+(?:\^\{?-?\d\}?)?)+"
)
# bare unit words accepted after a number without \text{}: never single letters (5m, 3s, 2g
# are as often products with a variable)
_BARE_UNITS = re.compile(
    r"(?:mm|cm|km|ft|in|yd|mi|kg|mg|min|hr|sec|cents?|dollars?|meters?|metres?|inch(?:es)?|feet"
    r"|miles?|hours?|minutes?|seconds?|days?|grams?|kilograms?|units?|degrees?)"
    r"(?:\s*\^\s*\{?\s*[23]\s*\}?)?"
)


def _canonical_unit(unit: str) -> str:
    u = _SPACING.sub(" ", _WRAPPED.sub(r"\1", unit)).replace("{", "").replace("}", "")
    u = " ".join(u.replace("\\cdot", "·").split()).casefold().rstrip(".")
    if "/" in u or "·" in u or "*" in u:
        return u.replace(" ", "")  # a compound unit: compared as written
    power = ""
    m = re.fullmatch(r"(?:square|sq\.?)\s+(.+)", u)
    if m:
        u, power = m.group(1), "^2"
    m = re.fullmatch(r"(?:cubic|cu\.?)\s+(.+)", u)
    if m:
        u, power = m.group(1), "^3"
    m = re.fullmatch(r"(.+?)\s*\^\s*([23])", u)
    if m:
        u, power = m.group(1), "^" + m.group(2)
    if u not in _UNITS and u.endswith("s") and (u[:-1] in _UNITS or u[:-1] in _ALIASES):
        u = u[:-1]  # plurals
    u = _ALIASES.get(u, u)
    return u + power


def unit_scale(unit: str) -> tuple[str, Fraction] | None:
    """``(dimension, scale)`` of a canonical unit we know (``cm^2`` → ``("length^2", 1/10000)``);
    None for units we do not know."""
    base, _, power = unit.partition("^")
    known = _UNITS.get(base)
    if known is None:
        return None
    dim, scale = known
    n = int(power or 1)
    return (dim if n == 1 else f"{dim}^{n}"), scale**n


@dataclass(frozen=True, slots=True)
class Reading:
    """A single answer as written. ``body`` is the LaTeX of its value (percent sign, degree
    sign and unit removed); ``literal`` its exact value when ``body`` is a plain number
    (``\\frac`` and friends are left to math-verify's parser)."""

    body: str
    literal: Fraction | None = None
    decimal: bool = False  # written with a decimal point or a power of ten
    integer_literal: bool = False  # a plain integer: compared exactly, never with a tolerance
    percent: bool = False
    degree: bool = False
    unit: str = ""  # canonical unit ("cm", "dollar", "cm^2", or unknown text as written)

    @property
    def marked(self) -> bool:
        """Anything math-verify would silently drop or round."""
        return self.decimal or self.percent or self.degree or bool(self.unit)


def _literal(m: re.Match[str]) -> Fraction:
    mantissa = m.group("mantissa").replace("{,}", "").replace(",", "")
    value = Fraction(mantissa if not mantissa.endswith(".") else mantissa[:-1])
    exponent = m.group("exp1") or m.group("exp2")
    if exponent is not None:
        value *= Fraction(10) ** int(exponent.replace("−", "-"))  # |exponent| <= MAX_EXPONENT
    return -value if m.group("sign") in ("-", "−") else value


@lru_cache(maxsize=8192)  # pure: the same gold is read for every rollout of its group
def read_answer(text: str) -> Reading:
    """Read one normalised scalar answer (see `Reading`)."""
    body = text.strip()
    percent = degree = False
    unit = ""
    m = _PERCENT.match(body)
    if m and m.group("body"):
        body, percent = m.group("body").strip(), True
    if body.endswith("^\\circ") and not trig_in_degrees(body):  # not \sin 60^\circ
        body, degree = body[: -len("^\\circ")].strip(), True
    m = _TRAILING_UNIT.match(body)
    if m and not percent and not degree:
        word = _canonical_unit(m.group("unit") + (m.group("power") or "").replace(" ", ""))
        if word in ("degree", "degrees", "°"):
            degree = True
        elif word in ("percent", "%"):
            percent = True
        elif word:
            unit = word
        body = m.group("body").strip()
    number = _NUMBER.match(body)
    literal = None
    if number is not None:
        rest = number.group("rest").strip()
        if number.group("currency"):
            unit = unit or "dollar"
        bare = _BARE_UNITS.fullmatch(rest) or _COMPOUND.fullmatch(rest)
        if rest and not percent and not degree and not unit and bare:
            word = _canonical_unit(rest)
            if word.startswith("degree"):
                degree = True
            else:
                unit = word
            rest = ""
        exponent = number.group("exp1") or number.group("exp2") or "0"
        if not rest and abs(int(exponent.replace("−", "-"))) <= MAX_EXPONENT:
            literal = _literal(number)
            body = body[: number.start("rest")].strip()
            if number.group("currency"):
                body = body[number.end("currency") :].strip()
    integer_literal = (
        literal is not None and number is not None and not _DECIMAL.search(number.group(0))
    )
    return Reading(
        body=body,
        literal=literal,
        decimal=bool(_DECIMAL.search(body)),
        integer_literal=integer_literal,
        percent=percent,
        degree=degree,
        unit=unit,
    )
