from verifiers.rubrics.judge_fallback_rubric import COMPASS_VERIFIER_COT, JudgeFallbackRubric
from verifiers.rubrics.judge_rubric import DEFAULT_JUDGE_PROMPT, JudgeError, JudgeRubric
from verifiers.rubrics.math_rubric import MathRubric
from verifiers.rubrics.rubric import Rubric
from verifiers.rubrics.rubric_group import RubricGroup
from verifiers.rubrics.tool_rubric import ToolRubric

__all__ = [
    "COMPASS_VERIFIER_COT",
    "DEFAULT_JUDGE_PROMPT",
    "JudgeError",
    "JudgeFallbackRubric",
    "JudgeRubric",
    "MathRubric",
    "Rubric",
    "RubricGroup",
    "ToolRubric",
]
