"""Imported by the grading forkserver only (`MathRubric`'s pool lists it in its preload):
importing it grades a few answers, so that math-verify's imports and lazy caches are paid
once, in the process every grading worker is forked from, and each worker starts warm. It
imports the grading entry point (`verifiers.utils.math_grading`), not the SDK.

Nothing else imports it. A failure here must not take the forkserver down (it would fail
every worker start): the workers then warm themselves up in their initializer instead.
"""

from __future__ import annotations


def _warm_forkserver() -> None:
    try:
        from verifiers.utils.math_grading import warm_up

        warm_up()
    except Exception:  # the workers' own initializer tries again and reports it
        pass


_warm_forkserver()
