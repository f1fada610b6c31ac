"""system_prompt="official" / prompt_template="official": LiveCodeBench's published prompts,
loaded at run time. A loopback HTTP server stands in for ``lcb_runner/prompts/
code_generation.py`` in its layout (a ``PromptConstants`` class of f-string constants, imports
and file reads at module level that must never run) with placeholder wording written here."""

from __future__ import annotations

import dataclasses

import livecodebench
import pytest
from livecodebench import load_environment

import verifiers as vf
from verifiers.testing import published_files

PUBLISHED = """\
import json

from lcb_runner.lm_styles import LMStyle


class PromptConstants:
    SYSTEM_MESSAGE_GENERIC = f"PLACEHOLDER SYSTEM: write a program."

    SYSTEM_MESSAGE_OTHER = f"not this one"

    FORMATTING_MESSAGE_WITH_STARTER_CODE = "PLACEHOLDER: use the starter code."

    FORMATTING_WITHOUT_STARTER_CODE = "PLACEHOLDER: read stdin, write stdout."


with open("lcb_runner/prompts/few_shot_examples/generation/func.json") as f:
    func = json.load(f)
"""


@pytest.fixture
def published(tmp_path, monkeypatch):
    path = "lcb_runner/prompts/code_generation.py"
    with published_files(tmp_path, monkeypatch, {path: PUBLISHED}) as site:
        url = f"{site}/{path}"
        moved = {
            k: dataclasses.replace(v, url=url) for k, v in livecodebench.OFFICIAL_PROMPTS.items()
        }
        monkeypatch.setattr(livecodebench.prompts, "OFFICIAL_PROMPTS", moved)
        yield url


def test_official_sources_are_lcbs_prompt_constants():
    srcs = livecodebench.OFFICIAL_PROMPTS
    assert {s.url for s in srcs.values()} == {
        "https://raw.githubusercontent.com/LiveCodeBench/LiveCodeBench/"
        "28fef95ea8c9f7a547c8329f2cd3d32b92c1fa24/lcb_runner/prompts/code_generation.py"
    }
    assert srcs["system"].name == "PromptConstants.SYSTEM_MESSAGE_GENERIC"
    assert srcs["with_starter"].name == "PromptConstants.FORMATTING_MESSAGE_WITH_STARTER_CODE"
    assert srcs["without_starter"].name == "PromptConstants.FORMATTING_WITHOUT_STARTER_CODE"


def test_official_prompts_in_lcbs_layout(published):
    env = load_environment(source="sample", system_prompt="official", prompt_template="official")
    assert env.system_prompt == "PLACEHOLDER SYSTEM: write a program."
    questions = env.eval_dataset["question"]
    starter = [q for q in questions if "use the starter code" in q]
    stdin = [q for q in questions if "read stdin, write stdout" in q]
    assert starter and stdin and len(starter) + len(stdin) == len(questions)
    for q in questions:
        assert q.startswith("### Question:\n")
        assert q.endswith("### Answer: (use the provided format with backticks)\n\n")
    assert all(
        "### Format: PLACEHOLDER: read stdin, write stdout.\n```python\n# YOUR CODE HERE\n```" in q
        for q in stdin
    )
    assert all("### Format: PLACEHOLDER: use the starter code.\n```python\n" in q for q in starter)


def test_defaults_stay_ours_and_mixing_is_allowed(published):
    ours = load_environment(source="sample")
    assert ours.system_prompt == livecodebench.SYSTEM_PROMPT
    assert all("PLACEHOLDER" not in q for q in ours.eval_dataset["question"])
    mixed = load_environment(source="sample", prompt_template="official", system_prompt=None)
    assert mixed.system_prompt is None
    assert all(len(p) == 1 and p[0]["role"] == "user" for p in mixed.eval_dataset["prompt"])
    with pytest.raises(vf.ConfigError, match="prompt_template must be None or 'official'"):
        load_environment(source="sample", prompt_template="lcb")


def test_unreachable_publication_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.setenv("VF_PROMPT_CACHE", str(tmp_path / "empty"))
    dead = {
        k: dataclasses.replace(v, url="http://127.0.0.1:9/code_generation.py")
        for k, v in livecodebench.OFFICIAL_PROMPTS.items()
    }
    monkeypatch.setattr(livecodebench.prompts, "OFFICIAL_PROMPTS", dead)
    with pytest.raises(vf.ConfigError, match="allow network access, or leave the prompt"):
        load_environment(source="sample", prompt_template="official")
    with pytest.raises(vf.ConfigError, match="pass the template text as system_prompt"):
        load_environment(source="sample", system_prompt="official")
