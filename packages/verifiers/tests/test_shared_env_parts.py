"""What environments share, moved into the SDK (issue 29 item 5): `vf.JudgedBoxedTask` (i3-math
and i3-science's builder), `vf.letter_rubric` / `vf.name_list` (gpqa, mmlu-pro, hle) and
`vf.with_prelude` (i3-code, livecodebench). The environments' own suites test them in place;
these pin the shared behaviour once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import verifiers as vf

ROWS = [
    {"question": "What is 2+2?", "answer": "4", "rate": 0.9},
    {"question": "What is 3*3?", "answer": "9", "rate": 0.2},
    {"question": "Unrated?", "answer": "1", "rate": None},
]


def make_task(**changes) -> vf.JudgedBoxedTask:
    fields = dict(
        name="toy-math",
        dataset_name="owner/toy",
        sample=Path("toy.jsonl"),
        instruction="Solve it.",
        official_instruction=vf.PromptSource(url="file:///nowhere/prompt.py", name="X"),
        judge_prompt=vf.grade_judge_prompt(
            subject="a toy problem", item="problem", correct="Same.", incorrect="Different."
        ),
        rubric=vf.MathVerifyJudgeRubric,
    )
    return vf.JudgedBoxedTask(**{**fields, **changes})


BUILT: list[vf.SingleTurnEnv] = []


@pytest.fixture(autouse=True, scope="module")
def _stop_grading_pools():
    """The built rubrics share one math-verify pool; it stops with the last of them."""
    yield
    for env in BUILT:
        asyncio.run(env.rubric.teardown())


def build(task: vf.JudgedBoxedTask, **args) -> vf.SingleTurnEnv:
    base = dict(
        source=ROWS,
        dataset_name="owner/toy",
        dataset_subset="s",
        difficulty_key=None,
        math_verify_workers=1,
    )
    env = task.build(**{**base, **args})
    BUILT.append(env)
    return env


def state_for(text: str, answer: str, info: dict | None = None) -> vf.State:
    prompt = [{"role": "user", "content": "Q"}]
    return vf.State(
        input={"prompt": prompt, "answer": answer, "example_id": 0},
        prompt=prompt,
        completion=[{"role": "assistant", "content": text}],
        answer=answer,
        info=info or {},
        task=None,
        example_id=0,
        trajectory=[{"reward": None, "advantage": None}],
        metrics={},
        error=None,
    )


def test_judged_task_builds_rows_parser_and_rubric():
    env = build(make_task())
    assert env.dataset["question"] == [f"Solve it.\n\n{r['question']}" for r in ROWS]
    assert set(env.dataset["task"]) == {"toy-math"}
    assert isinstance(env.rubric, vf.MathVerifyJudgeRubric) and env.rubric.judge_rubric is None
    assert env.parser.parse_answer([{"role": "assistant", "content": "\\boxed{7}"}]) == "7"


def test_judged_task_filters_by_pass_rate_and_shuffles_with_the_seed():
    task = make_task()
    hard = build(task, difficulty_key="rate", max_avg_reward=0.5)
    assert hard.dataset["answer"] == ["9"]
    kept = build(task, difficulty_key="rate", max_avg_reward=0.5, keep_unrated=True)
    assert kept.dataset["answer"] == ["9", "1"]
    one = build(task, dataset_shuffle=True, seed=3).dataset["answer"]
    assert one == build(task, dataset_shuffle=True, seed=3).dataset["answer"]
    assert sorted(one) == sorted(r["answer"] for r in ROWS)


def test_judged_task_prepare_dataset_defaults_to_its_instruction_and_difficulty_key():
    """i3-math's and i3-science's `prepare_dataset` leave both out; None is a value (no filter)."""
    from datasets import Dataset

    rows = Dataset.from_list(ROWS)
    task = make_task(difficulty_key="rate")
    hard = task.prepare_dataset(rows, max_avg_reward=0.5)
    assert hard["question"] == ["Solve it.\n\nWhat is 3*3?"]
    assert len(task.prepare_dataset(rows, difficulty_key=None)) == len(ROWS)
    assert task.prepare_dataset(rows, instruction_prompt="Ours.")["question"][0].startswith("Ours.")
    with pytest.raises(vf.ConfigError):  # a window on an unrated dataset is refused
        make_task().prepare_dataset(rows, difficulty_key="missing", max_avg_reward=0.5)


def test_intellect3_instruction_names_upstreams_module_at_the_pinned_commit():
    source = vf.JudgedBoxedTask.intellect3_instruction("i3_math")
    assert source.name == "INSTRUCTION_PROMPT"
    assert source.url.endswith(
        "/b9cb04acef3b5608a0e05883af7f329c0c69dbaa/environments/i3_math/i3_math.py"
    )


def test_judged_task_judge_prompt_and_instruction_arguments():
    task = make_task()
    judged = build(task, judge_model="j", judge_base_url="http://127.0.0.1:9/v1")
    assert judged.rubric.judge_rubric is not None
    assert judged.rubric.judge_rubric.judge_prompt == task.judge_prompt
    mine = "Q {question} A {answer} R {response}"
    own = build(task, judge_model="j", judge_base_url="http://127.0.0.1:9/v1", judge_prompt=mine)
    assert own.rubric.judge_rubric.judge_prompt == mine
    assert build(task, instruction_prompt="Ours.").dataset["question"][0].startswith("Ours.\n\n")
    with pytest.raises(vf.ConfigError):  # the official source cannot be fetched
        build(task, instruction_prompt="official")


def test_judged_task_refuses_bad_rows_and_tolerances_naming_them():
    with pytest.raises(vf.ConfigError):
        build(make_task(), source=[{"question": "no answer"}])
    with pytest.raises(vf.ConfigError, match="numeric_rel_tol"):
        build(make_task(), numeric_rel_tol=1.5)


def test_grade_judge_prompt_has_the_three_grades_and_the_fields():
    prompt = vf.grade_judge_prompt(
        subject="a riddle", item="riddle", correct="C1.", incorrect="I1."
    )
    assert "final answer to a riddle against" in prompt and "solve the riddle again" in prompt
    assert "A: CORRECT. C1.\nB: INCORRECT. I1.\nC: INVALID." in prompt
    assert prompt.endswith("Final Judgment: \\boxed{X}\nwhere X is A, B or C.")
    for field in ("question", "answer", "response"):  # each in its own <<< >>> block
        assert prompt.count(f"<<<\n{{{field}}}\n>>>") == 1


@pytest.mark.parametrize(
    "text, answer, reward, answered",
    [("\\boxed{B}", "B", 1.0, 1.0), ("\\boxed{C}", "B", 0.0, 1.0), ("no letter", "B", 0.0, 0.0)],
)
async def test_letter_rubric_scores_the_letter_and_whether_there_was_one(
    text, answer, reward, answered
):
    parser = vf.Parser(extract_fn=vf.strict_boxed_answer)
    state = state_for(text, answer)
    await vf.letter_rubric(parser).score_rollout(state)
    assert state["reward"] == reward
    assert state["metrics"] == {"correct_letter": reward, "answered": answered}


async def test_letter_rubric_reads_with_the_rows_info():
    """A custom reader sees the row's info (e.g. how many options it has)."""

    def letter(completion, info):
        text = completion[-1]["content"]
        return text if text in "ABCD"[: info["options"]] else ""

    rubric = vf.letter_rubric(vf.Parser(), letter)
    in_range, out_of_range = (
        state_for("B", "B", {"options": 2}),
        state_for("C", "C", {"options": 2}),
    )
    await rubric.score_rollout(in_range)
    await rubric.score_rollout(out_of_range)
    assert (in_range["reward"], out_of_range["reward"]) == (1.0, 0.0)
    assert out_of_range["metrics"]["answered"] == 0.0


@pytest.mark.parametrize(
    "value, expected", [(None, None), ("law", ["law"]), (["a", "b"], ["a", "b"]), (("a",), ["a"])]
)
def test_name_list_reads_a_name_or_names(value, expected):
    assert vf.name_list(value, "category") == expected


@pytest.mark.parametrize("value", [[], {"law": 1}, 3, ""[:0] or ()])
def test_name_list_refuses_anything_else_naming_the_argument(value):
    with pytest.raises(vf.ConfigError, match="category must be a name or a list of names"):
        vf.name_list(value, "category")


def test_with_prelude_keeps_future_imports_first_and_the_program_runs():
    program = (
        "from __future__ import annotations\ndef f(x: Later) -> int:\n    return 2\nprint(f(1))"
    )
    text = vf.with_prelude(program, lambda body: "import sys" if "print" in body else "")
    lines = text.splitlines()
    assert lines[0] == "from __future__ import annotations" and lines[1] == "import sys"
    assert text.count("from __future__") == 1
    compile(text, "<program>", "exec")  # a __future__ import after the prelude would not


def test_with_prelude_without_future_imports_puts_the_prelude_first():
    assert vf.with_prelude("print(1)", lambda body: "import os") == "import os\nprint(1)"


def test_assert_scored_fails_on_an_error_or_another_reward():
    """The attack tables' verdict (verifiers.testing.assert_scored) can fail both ways."""
    from verifiers.testing import assert_scored

    assert_scored({"reward": 1.0, "error": None}, 1.0, "ok")
    with pytest.raises(AssertionError):
        assert_scored({"reward": 1.0, "error": {"error": "SandboxError"}}, 1.0, "errored")
    with pytest.raises(AssertionError):
        assert_scored({"reward": 0.0}, 1.0, "wrong")


def test_serve_folder_serves_files_then_closes_its_port(tmp_path):
    """verifiers.testing.serve_folder: the environments' stand-in for a published file."""
    import socket
    import urllib.error
    import urllib.request

    from verifiers.testing import serve_folder

    (tmp_path / "pub").mkdir()
    (tmp_path / "pub" / "prompt.py").write_text('PROMPT = "x"\n')
    with serve_folder(tmp_path) as base:
        assert base.startswith("http://127.0.0.1:")
        assert urllib.request.urlopen(f"{base}/pub/prompt.py").read() == b'PROMPT = "x"\n'
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"{base}/pub/missing.py")
    port = int(base.rsplit(":", 1)[1])
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


def test_write_jsonl_writes_what_jsonl_rows_reads_making_the_folder(tmp_path):
    """The make_sample.py scripts of i3-code and livecodebench write their samples with it."""
    from verifiers.testing import jsonl_rows, write_jsonl

    rows = [{"question": "ü?", "rate": 0.5}, {"question": "", "rate": None}]
    path = tmp_path / "data" / "sample.jsonl"
    write_jsonl(path, rows)
    assert jsonl_rows(path) == rows
    assert path.read_text().count("\n") == len(rows)
