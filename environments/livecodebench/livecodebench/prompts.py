"""LiveCodeBench's prompts: our wording by default, the benchmark's published ones on request.

The published texts (LiveCodeBench's ``PromptConstants``) are loaded at run time with
`vf.load_published_prompt` and never stored here.
"""

from __future__ import annotations

import verifiers as vf

__all__ = [
    "OFFICIAL_PROMPTS",
    "STARTER_FORMAT",
    "STDIN_FORMAT",
    "SYSTEM_PROMPT",
    "build_prompt",
    "official_formats",
]

SYSTEM_PROMPT = (
    "You are an expert Python programmer. Given a programming problem, you write a correct "
    "Python program that satisfies the specification and passes all of its tests."
)
STDIN_FORMAT = (
    "### Format: Your program must read the input from standard input and write the answer to "
    "standard output (do not hard-code the sample inputs). Put the complete program in one "
    "block:\n```python\n# YOUR CODE HERE\n```"
)
STARTER_FORMAT = (
    "### Format: Complete the starter code below and put the full solution in one block:\n"
    "```python\n{starter}\n```"
)


def build_prompt(question: str, starter_code: str, official: dict[str, str] | None = None) -> str:
    """The user message: ours, or with ``official`` (LiveCodeBench's two formatting messages,
    loaded) the benchmark's generic chat layout around them."""
    if official is not None:
        if starter_code:
            fmt = f"{official['with_starter']}\n```python\n{starter_code}\n```"
        else:
            fmt = f"{official['without_starter']}\n```python\n# YOUR CODE HERE\n```"
        return (
            f"### Question:\n{question}\n\n### Format: {fmt}\n\n"
            "### Answer: (use the provided format with backticks)\n\n"
        )
    fmt = STARTER_FORMAT.format(starter=starter_code.strip()) if starter_code else STDIN_FORMAT
    return f"### Question:\n{question}\n\n{fmt}\n\n### Answer: (use the format above)\n\n"


# -- the published prompts (loaded at run time, never stored here) ---------------------------
_LCB = (
    "https://raw.githubusercontent.com/LiveCodeBench/LiveCodeBench/"
    "28fef95ea8c9f7a547c8329f2cd3d32b92c1fa24/lcb_runner/prompts/code_generation.py"
)
#: LiveCodeBench's code-generation prompts (``PromptConstants`` of
#: ``lcb_runner/prompts/code_generation.py``, at the commit the upstream environment cites):
#: the system message and the formatting messages with and without starter code. Read with
#: ``ast``: importing ``lcb_runner`` opens data files relative to the working directory.
OFFICIAL_PROMPTS: dict[str, vf.PromptSource] = {
    "system": vf.PromptSource(url=_LCB, name="PromptConstants.SYSTEM_MESSAGE_GENERIC"),
    "with_starter": vf.PromptSource(
        url=_LCB, name="PromptConstants.FORMATTING_MESSAGE_WITH_STARTER_CODE"
    ),
    "without_starter": vf.PromptSource(
        url=_LCB, name="PromptConstants.FORMATTING_WITHOUT_STARTER_CODE"
    ),
}


def _official(part: str) -> str:
    # looked up at call time, so a test (or a mirror) can point OFFICIAL_PROMPTS elsewhere
    return vf.load_published_prompt(
        OFFICIAL_PROMPTS[part],
        what=f"LiveCodeBench {part} prompt",
        instead="leave the prompt arguments at their defaults (our wording)",
    )


def official_formats() -> dict[str, str]:
    """LiveCodeBench's formatting messages, with and without starter code (loaded)."""
    return {part: _official(part) for part in ("with_starter", "without_starter")}
