"""instruction_prompt="official": the upstream environment's instruction (boxed) and MMLU-Pro's
own chain-of-thought prompt (answer_is: introduction, layout, worked examples), loaded at run
time. A loopback HTTP server stands in for the two publications, in their layouts, with
placeholder wording written for this test."""

from __future__ import annotations

import dataclasses

import mmlu_pro
import pytest

import verifiers as vf
from verifiers import ConfigError
from verifiers.testing import published_files

UPSTREAM_ENV = """\
import verifiers as vf
from datasets import load_dataset

INSTRUCTION_PROMPT = "PLACEHOLDER: box the letter."
"""
INTRO = "PLACEHOLDER introduction about {$}; examples of {$} follow."


@pytest.fixture
def published(tmp_path, monkeypatch):
    files = {
        "environments/mmlu_pro/mmlu_pro.py": UPSTREAM_ENV,
        "cot_prompt_lib/initial_prompt.txt": INTRO,
    }
    with published_files(tmp_path, monkeypatch, files) as site:
        base = f"{site}/"
        moved = {
            "boxed": [
                dataclasses.replace(s, url=base + "environments/mmlu_pro/mmlu_pro.py")
                for s in mmlu_pro.OFFICIAL_INSTRUCTIONS["boxed"]
            ],
            "answer_is": [
                dataclasses.replace(s, url=base + "cot_prompt_lib/initial_prompt.txt")
                for s in mmlu_pro.OFFICIAL_INSTRUCTIONS["answer_is"]
            ],
        }
        monkeypatch.setattr(mmlu_pro, "OFFICIAL_INSTRUCTIONS", moved)
        yield base


def test_official_sources_are_the_publications():
    (boxed,) = mmlu_pro.OFFICIAL_INSTRUCTIONS["boxed"]
    assert "PrimeIntellect-ai/research-environments/" in boxed.url
    assert boxed.url.endswith("/environments/mmlu_pro/mmlu_pro.py")
    assert boxed.name == "INSTRUCTION_PROMPT"
    (cot,) = mmlu_pro.OFFICIAL_INSTRUCTIONS["answer_is"]
    assert cot.url.startswith("https://raw.githubusercontent.com/TIGER-AI-Lab/MMLU-Pro/")
    assert cot.url.endswith("/cot_prompt_lib/initial_prompt.txt") and cot.name is None


def test_official_boxed_instruction(published):
    env = mmlu_pro.load_environment(source="sample", instruction_prompt="official")
    assert env.dataset["question"][0].startswith("PLACEHOLDER: box the letter.\n\n")


def test_official_cot_prompt_layout_and_fewshot(published):
    env = mmlu_pro.load_environment(
        source="sample", answer_format="answer_is", instruction_prompt="official"
    )
    rows = {r["info"]["category"]: r["question"] for r in env.dataset}
    chem = rows["chemistry"]
    intro = "PLACEHOLDER introduction about chemistry; examples of chemistry follow.\n"
    assert chem.startswith(intro + "Question:\nWhich gas makes up the largest share")
    # the worked example, its "A: " cue rewritten, then the question with the open cue
    assert "Options:\nA. Oxygen\nB. Carbon dioxide\nC. Nitrogen\n" in chem
    assert "Answer: Let's think step by step. Dry air is about 78% nitrogen." in chem
    assert chem.count("Question:\n") == 2 and chem.endswith("Answer: Let's think step by step.")
    assert "A: Let's think" not in chem
    # a subject without validation examples gets none; k=0 shows none anywhere
    assert rows["history"].count("Question:\n") == 1
    zero = mmlu_pro.load_environment(
        source="sample", answer_format="answer_is", instruction_prompt="official", num_fewshot=0
    )
    assert all(q.count("Question:\n") == 1 for q in zero.dataset["question"])
    # graded with the "the answer is (X)" extraction
    assert env.parser.parse_answer("... so the answer is (C).") == "C"


def test_fewshot_examples_never_include_the_question_itself(published):
    val = mmlu_pro.load_environment(
        source="sample",
        dataset_split="validation",
        answer_format="answer_is",
        instruction_prompt="official",
    )
    assert all(q.count("Question:\n") == 1 for q in val.dataset["question"])


def test_num_fewshot_needs_the_official_cot_prompt():
    with pytest.raises(ConfigError, match="num_fewshot needs MMLU-Pro's own prompt"):
        mmlu_pro.load_environment(source="sample", answer_format="answer_is", num_fewshot=5)
    with pytest.raises(ConfigError, match="num_fewshot must be an integer"):
        mmlu_pro.load_environment(source="sample", num_fewshot=-1)


def test_unreachable_publication_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.setenv("VF_PROMPT_CACHE", str(tmp_path / "empty"))
    dead = {
        k: [dataclasses.replace(s, url="http://127.0.0.1:9/x.txt") for s in v]
        for k, v in mmlu_pro.OFFICIAL_INSTRUCTIONS.items()
    }
    monkeypatch.setattr(mmlu_pro, "OFFICIAL_INSTRUCTIONS", dead)
    with pytest.raises(vf.ConfigError, match="allow network access, or pass the template text"):
        mmlu_pro.load_environment(source="sample", instruction_prompt="official")


def test_default_instruction_is_our_wording():
    env = mmlu_pro.load_environment(source="sample")
    assert env.dataset["question"][0].startswith(mmlu_pro.ANSWER_FORMATS["boxed"] + "\n\n")
    assert "Please reason" not in mmlu_pro.ANSWER_FORMATS["boxed"]
