"""i3-math: INTELLECT-3 style single-turn math with ``\\boxed{}`` answers.

The model gets one user message (an instruction, a blank line, the problem) and answers once.
Its final ``\\boxed{}`` answer is graded against the gold answer with math-verify; an optional
LLM judge grades what math-verify rejects. See README.md for the exact reward.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import verifiers as vf

from . import grading
from .grading import *  # noqa: F403 - grading's names are this package's (see __all__)
from .grading import JUDGE_PROMPT, HybridMathRubric

#: grading's names (its rubric, judge prompts and verdict reader) and the task's
__all__ = [*grading.__all__, "INSTRUCTION_PROMPT", "TASK", "load_environment"]

#: i3-math's rows and words (task.toml), rubric and judge prompt; ``TASK.official_instruction``
#: is upstream's INTELLECT-3 line (``instruction_prompt="official"``).
TASK = vf.JudgedBoxedTask.from_toml(
    Path(__file__).with_name("task.toml"), rubric=HybridMathRubric, judge_prompt=JUDGE_PROMPT
)


@TASK.loader
def load_environment(**arguments: Any) -> vf.Environment:
    """Build the i3-math environment: `vf.JudgedBoxedTask.build` with i3-math's rows, words
    and rubric (its docstring and README.md describe every argument).

    Here ``instruction_prompt`` None is ours (`INSTRUCTION_PROMPT`) and ``"official"`` is
    upstream's INTELLECT-3 line (``TASK.official_instruction``); ``judge_prompt`` defaults to
    ours (`JUDGE_PROMPT`) and ``"official"`` is CompassVerifier's chain-of-thought prompt
    (`COMPASS_VERIFIER_COT`), both fetched at load time and cached on disk. ``numeric_rel_tol``
    is the relative tolerance within which a decimal answer matches a non-integer gold
    (default 0: only exactly, so 1.5707963 is not pi/2).
    """
    return TASK.build(**arguments)


#: The instruction put before each problem, in our words (task.toml).
INSTRUCTION_PROMPT = TASK.instruction
