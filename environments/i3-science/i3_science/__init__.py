"""i3-science: INTELLECT-3 style single-turn science questions with ``\\boxed{}`` answers.

The model gets one user message (an instruction, a blank line, the question) and answers once.
Its final ``\\boxed{}`` answer is checked against the gold answer by rules (option letters,
numbers with units, text) and math-verify (formulas); an optional LLM judge grades what the
rules do not accept. See README.md for the exact reward.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import verifiers as vf

from . import grading
from .answers import check_answer
from .grading import *  # noqa: F403 - grading's names are this package's (see __all__)
from .grading import JUDGE_PROMPT, HybridScienceRubric

#: grading's names (its rubric, judge prompts and verdict reader) and the task's
__all__ = [*grading.__all__, "INSTRUCTION_PROMPT", "TASK", "check_answer", "load_environment"]

#: i3-science's rows and words (task.toml), rubric and judge prompt;
#: ``TASK.official_instruction`` is upstream's INTELLECT-3 line (``instruction_prompt="official"``).
TASK = vf.JudgedBoxedTask.from_toml(
    Path(__file__).with_name("task.toml"), rubric=HybridScienceRubric, judge_prompt=JUDGE_PROMPT
)


@TASK.loader
def load_environment(**arguments: Any) -> vf.Environment:
    """Build the i3-science environment: `vf.JudgedBoxedTask.build` with i3-science's rows
    (``info`` may carry ``{domain}``), words and rubric (its docstring and README.md describe
    every argument).

    Here ``instruction_prompt`` None is ours (`INSTRUCTION_PROMPT`), ``"official"`` upstream's
    INTELLECT-3 line (``TASK.official_instruction``); the judge's prompt is ours
    (`JUDGE_PROMPT`) or, with ``"official"``, CompassVerifier's (`COMPASS_VERIFIER_COT`), each
    fetched when loaded and cached on disk. ``numeric_rel_tol`` applies to gold numbers written
    with a decimal point or a power of ten (integers are compared exactly).
    """
    return TASK.build(**arguments)


#: The instruction put before each question, in our words (task.toml).
INSTRUCTION_PROMPT = TASK.instruction
