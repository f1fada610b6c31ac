"""The grading worker's entry point: `grade_math_answer` (math-verify with the exact layer)
and `warm_up`, the work `MathRubric`'s pool runs in its worker processes.

A worker unpickles its calls by module path, so this module is what every worker (and the
forkserver they are forked from) imports: it pulls in math-verify (on first grading) and the
exact layer (`verifiers.utils.exact_answers`), nothing of the SDK's API (the lazy
``verifiers`` package imports no submodule of its own), so a grading process starts in the
time math-verify takes to import, not the whole SDK's.
"""

from __future__ import annotations

import time
from itertools import product
from typing import Any

__all__ = ["grade_math_answer", "warm_up"]


def grade_math_answer(
    gold: str,
    response: str,
    timeout_s: int,
    rel_tol: float = 0.0,
    question: str = "",
    strict_units: bool = False,
    time_limit: float | None = None,
) -> tuple[float, bool]:
    """``(score, timed_out)`` for ``response`` against ``gold``; runs in a pool worker.

    math-verify's ``verify(parse(gold), parse(response))`` with both wrapped in ``\\boxed{}``
    (gold first: verify is not symmetric), each pair compared separately so that a timeout
    can be told apart from a wrong answer, and the exact layer
    (`verifiers.utils.exact_answers`) deciding first the cases math-verify gets wrong.
    ``rel_tol`` is the relative tolerance within which a decimal matches a non-integer gold
    (0: exactly); ``question`` tells whether a percentage is asked for; ``strict_units``
    makes different units that the layer cannot convert wrong rather than math-verify's call.
    ``time_limit``: a grading that used more CPU seconds than this scores 0 as timed out, as
    in upstream (a grading must finish within the rubric's ``timeout_seconds``, also below
    the whole second math-verify's alarms count in); CPU, so that a loaded machine's waits
    do not turn a right answer into a timeout.
    """
    from math_verify import parse, verify
    from math_verify.errors import TimeoutException

    from verifiers.utils.answer_reading import trig_in_degrees
    from verifiers.utils.exact_answers import (
        ExactChecker,
        LayerTimeout,
        normalize_latex,
        percent_question,
    )

    started = time.process_time()
    timed_out = False
    parsed: dict[str, list[Any]] = {}

    def parse_boxed(text: str) -> list[Any]:
        nonlocal timed_out
        if text in parsed:
            return parsed[text]
        result: list[Any] = []
        try:
            result = parse("\\boxed{" + text + "}", parsing_timeout=timeout_s, raise_on_error=True)
        except TimeoutException:  # a BaseException: math-verify's alarm fired
            timed_out = True
        except Exception:
            pass  # unparseable counts as no answer, as with raise_on_error=False
        parsed[text] = result
        return result

    in_degrees: dict[str, list[Any]] = {}

    def parse_degrees(text: str) -> list[Any]:
        """math-verify's reading, except that in a trigonometric function an argument in
        degrees is one (``\\sin 60^\\circ`` is sin(pi/3); math-verify drops the sign and
        takes sin(60 radians)): latex2sympy's own ``convert_degrees``, which math-verify
        turns off, applied to the LaTeX math-verify extracted and normalised."""
        nonlocal timed_out
        plain = parse_boxed(text)
        if not trig_in_degrees(text) or not plain:
            return plain
        if text not in in_degrees:
            from latex2sympy2_extended.latex2sympy2 import latex2sympy
            from math_verify.grader import should_treat_as_complex
            from math_verify.utils import timeout

            latex, result = plain[-1], plain
            if isinstance(latex, str):
                try:
                    expr = timeout(timeout_s)(latex2sympy)(
                        latex,
                        is_real=not should_treat_as_complex(latex),
                        convert_degrees=True,
                        normalization_config=None,
                    )
                    result = [expr, latex]
                except TimeoutException:
                    timed_out = True
                except Exception:
                    pass  # keep math-verify's own reading
            in_degrees[text] = result
        return in_degrees[text]

    def verified(golds: list[Any], targets: list[Any]) -> bool:
        nonlocal timed_out
        for g, t in product(golds, targets):
            try:
                if verify(g, t, timeout_seconds=timeout_s, raise_on_error=True):
                    return True
            except TimeoutException:
                timed_out = True
            except Exception:
                pass
        return False

    def math_verify(g_text: str, r_text: str) -> bool:
        golds = parse_boxed(g_text)
        if verified(golds, parse_boxed(r_text) if golds else []):
            return True  # as math-verify reads it (a dropped degree sign is accepted there)
        if not (trig_in_degrees(g_text) or trig_in_degrees(r_text)):
            return False
        golds = parse_degrees(g_text)
        return verified(golds, parse_degrees(r_text) if golds else [])

    # The layer parses only what it needs (answers it reads as plain numbers, words or
    # structures need no math-verify at all); where it decides nothing, math-verify's verdict
    # stands, and an answer math-verify cannot parse scores 0 there.
    g_text, r_text = normalize_latex(gold), normalize_latex(response)
    checker = ExactChecker(
        parse_degrees,
        math_verify,
        rel_tol=rel_tol,
        strict_units=strict_units,
        percent_question=percent_question(question),
        time_limit=float(timeout_s),
    )
    try:
        decided = checker.verdict(g_text, r_text)
    except LayerTimeout:
        decided = None  # the layer ran out of time: math-verify's verdict stands
    except ValueError:
        # a number past Python's int-string limit (4,300 digits) cannot be read exactly:
        # math-verify's verdict stands (upstream's own timeout test grades a 100,000-digit one)
        decided = None
    if decided is None:
        decided = math_verify(g_text, r_text)
    if time_limit is not None and time.process_time() - started > time_limit:
        return 0.0, True
    return (1.0 if decided else 0.0), timed_out


_warm = False  # this process paid warm_up (a worker forked from a warm forkserver inherits it)


def warm_up() -> None:
    """Worker initializer: pay math-verify's lazy imports and caches before the first call,
    so a cold worker does not run a real grading into its (small) signal timeout. Once per
    process: workers forked from the grading forkserver, which ran it at start
    (`verifiers.utils.math_warm`), start warm and skip it."""
    global _warm
    if _warm:
        return
    grade_math_answer("\\frac{1}{2}", "0.5", 30)
    grade_math_answer("x^2+2x+1", "(x+1)^2", 30)
    grade_math_answer("\\{1,2\\}", "\\{2,1\\}", 30)
    # the exact layer's sympy paths: evalf/simplify, degrees, an inequality's solution set
    grade_math_answer("\\frac{\\pi}{2}", "1.5707963", 30)
    grade_math_answer("30^\\circ", "\\frac{\\pi}{6}", 30)
    grade_math_answer("\\frac{1}{2}", "\\sin 30^\\circ", 30)
    grade_math_answer("(0,\\infty)", "x>0", 30)
    _warm = True
