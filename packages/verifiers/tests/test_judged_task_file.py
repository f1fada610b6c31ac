"""`vf.JudgedBoxedTask.from_toml` and `JudgedBoxedTask.loader` (issue 29 item 5): a judged
environment is its data file plus its rubric, and its ``load_environment`` signature is written
once, in the SDK, yet reads as i3-math's and i3-science's written-out ones did (upstream's tests
read their defaults with ``inspect.signature``). The environments' own suites run the same
checks on the real packages (`verifiers.testing.JUDGED_TASK_CHECKS`)."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

import verifiers as vf

JUDGE_PROMPT = vf.grade_judge_prompt(
    subject="a toy problem", item="problem", correct="Same.", incorrect="Different."
)
TOY = """\
name = "toy-math"
dataset_name = "owner/toy"
sample = "data/toy.jsonl"
difficulty_key = "rate"
instruction = "Solve it, then box the answer: \\\\boxed{}."
intellect3_module = "toy_math"

[load_environment]
dataset_subset = "easy"
numeric_rel_tol = 0.25
"""


def toy_task(tmp_path: Path, text: str = TOY) -> vf.JudgedBoxedTask:
    path = tmp_path / "task.toml"
    path.write_text(text)
    return vf.JudgedBoxedTask.from_toml(
        path, rubric=vf.MathVerifyJudgeRubric, judge_prompt=JUDGE_PROMPT
    )


def test_from_toml_reads_every_field_relative_to_the_file(tmp_path):
    task = toy_task(tmp_path)
    assert (task.name, task.dataset_name, task.difficulty_key) == ("toy-math", "owner/toy", "rate")
    assert task.sample == tmp_path / "data" / "toy.jsonl"
    assert task.instruction == "Solve it, then box the answer: \\boxed{}."
    assert task.official_instruction == vf.JudgedBoxedTask.intellect3_instruction("toy_math")
    assert task.official_judge_prompts == [vf.COMPASS_VERIFIER_COT]
    assert (task.judge_prompt, task.rubric) == (JUDGE_PROMPT, vf.MathVerifyJudgeRubric)
    assert dict(task.defaults) == {"dataset_subset": "easy", "numeric_rel_tol": 0.25}
    unrated = toy_task(tmp_path, TOY.replace('difficulty_key = "rate"', "difficulty_key = false"))
    assert unrated.difficulty_key is None


@pytest.mark.parametrize(
    "change, message",
    [
        (('name = "toy-math"\n', ""), "missing ['name'], unknown none"),
        (("[load_environment]", 'flavour = "x"\n[load_environment]'), "unknown ['flavour']"),
        (("numeric_rel_tol", "diamond"), "JudgedBoxedTask.build takes no 'diamond'"),
        (('dataset_name = "owner/toy"', "dataset_name = "), "task.toml: "),  # not TOML
    ],
    ids=["missing-field", "unknown-field", "unknown-default", "bad-toml"],
)
def test_from_toml_refuses_a_file_naming_what_is_wrong(tmp_path, change, message):
    with pytest.raises(vf.ConfigError) as caught:
        toy_task(tmp_path, TOY.replace(*change))
    assert message in str(caught.value)


def test_loader_gives_builds_arguments_with_the_tasks_defaults(tmp_path):
    task = toy_task(tmp_path)
    calls: list[dict[str, Any]] = []

    @task.loader
    def load_environment(**arguments: Any) -> vf.Environment:
        """The toy's loader."""
        calls.append(arguments)
        return "built"  # type: ignore[return-value]

    params = inspect.signature(load_environment).parameters
    build = inspect.signature(vf.JudgedBoxedTask.build).parameters
    assert list(params) == [name for name in build if name != "self"]
    defaults = {name: p.default for name, p in params.items()}
    assert defaults["dataset_name"] == "owner/toy" and defaults["difficulty_key"] == "rate"
    assert (defaults["dataset_subset"], defaults["numeric_rel_tol"]) == ("easy", 0.25)
    assert defaults["judge_prompt"] == JUDGE_PROMPT and defaults["judge_timeout"] == 1200.0
    assert inspect.signature(load_environment).return_annotation == "vf.Environment"
    assert load_environment.__doc__ == "The toy's loader." and load_environment.__name__ == (
        "load_environment"
    )

    assert load_environment("sample", seed=7) == "built"
    assert calls[0] == {**defaults, "source": "sample", "seed": 7}  # every argument, bound
    with pytest.raises(TypeError, match=r"load_environment\(\) got an unexpected keyword"):
        load_environment(diamond=True)
    assert len(calls) == 1  # refused before the body ran


def test_loader_needs_a_default_for_every_argument_build_requires(tmp_path):
    task = toy_task(tmp_path, TOY.replace('dataset_subset = "easy"\n', ""))
    with pytest.raises(vf.ConfigError, match="needs its own default for dataset_subset"):
        task.loader(lambda **arguments: None)
