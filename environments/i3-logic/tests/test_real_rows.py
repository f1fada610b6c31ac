"""Real-format rows of every task upstream verifies, scored through the environment.

``tests/rows/<family>.jsonl`` holds rows in the INTELLECT-3-RL ``logic`` format (``question``,
``info`` as a JSON string with ``task`` and ``game_data_str`` in SynLogic's metadata layout) and
two test-only keys: ``_right`` (replies that must score 1.0) and ``_wrong`` (replies that must
score 0.0). The bundled sample is these rows without the test-only keys.

The task list is upstream's: ``verifier_classes`` in ``environments/i3_logic/i3_logic/
task2verifier.py`` of research-environments at its initial commit (b9cb04a, 2025-11-29), the
i3-logic the INTELLECT-3 run used.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import i3_logic
import pytest
from i3_logic import DIFFICULTY_KEY, FAMILIES, TASKS, load_environment

import verifiers as vf
from verifiers.testing import jsonl_rows

HERE = Path(__file__).parent
ROWS = HERE / "rows"
PACKAGE = Path(i3_logic.__file__).parent

UPSTREAM_NATIVE = (
    "arc_agi arc_agi_2 arrow_maze boolean_expressions buggy_tables calcudoko campsite cipher "
    "cryptarithm dyck_language dyck_language_errors dyck_language_reasoning_errors futoshiki "
    "goods_exchange gpqa_diamond kukurasu math_path mathador minesweeper norinori number_wall "
    "numbrix object_counting object_properties operation skyscraper_puzzle space_reasoning "
    "space_reasoning_tree star_placement_puzzle sudoku survo time_sequence web_of_lies "
    "word_sorting word_sorting_mistake wordscapes zebra_puzzle"
).split()
UPSTREAM_BBH = [
    f"bbh_{name}"
    for name in (
        "boolean_expressions causal_judgement date_understanding disambiguation_qa dyck_languages "
        "formal_fallacies geometric_shapes hyperbaton logical_deduction_five_objects "
        "logical_deduction_seven_objects logical_deduction_three_objects movie_recommendation "
        "multistep_arithmetic_two navigate object_counting penguins_in_a_table "
        "reasoning_about_colored_objects ruin_names salient_translation_error_detection snarks "
        "sports_understanding temporal_sequences tracking_shuffled_objects_five_objects "
        "tracking_shuffled_objects_seven_objects tracking_shuffled_objects_three_objects "
        "web_of_lies word_sorting"
    ).split()
]
UPSTREAM_BBEH = [
    f"bbeh_{name}"
    for name in (
        "boardgame_qa boolean_expressions buggy_tables causal_understanding disambiguation_qa "
        "dyck_languages geometric_shapes hyperbaton linguini movie_recommendation "
        "multistep_arithmetic nycc object_counting object_properties sarc_triples "
        "shuffled_objects spatial_reasoning sportqa temporal_sequence time_arithmetic web_of_lies "
        "word_sorting zebra_puzzles"
    ).split()
]
UPSTREAM_TASKS = UPSTREAM_NATIVE + UPSTREAM_BBH + UPSTREAM_BBEH


FILES = sorted(ROWS.glob("*.jsonl"))
ALL_ROWS = [(path.stem, i, row) for path in FILES for i, row in enumerate(jsonl_rows(path))]


def task_of(row: dict) -> str:
    return json.loads(row["info"])["task"]


def public(row: dict) -> dict:
    return {k: v for k, v in row.items() if not k.startswith("_")}


def test_upstream_task_list_is_complete():
    assert len(UPSTREAM_NATIVE) == 37 and len(UPSTREAM_BBH) == 27 and len(UPSTREAM_BBEH) == 23
    assert len(set(UPSTREAM_TASKS)) == 87


@pytest.mark.parametrize("task", UPSTREAM_TASKS)
def test_every_upstream_task_has_a_verifier_and_real_format_rows(task):
    assert task in TASKS, f"no family verifies upstream task {task!r}"
    rows = [row for _, _, row in ALL_ROWS if task_of(row) == task]
    assert rows, f"tests/rows has no row of task {task!r}"


def test_every_family_has_a_rows_file_with_two_rows():
    assert {path.stem for path in FILES} == set(FAMILIES)
    for path in FILES:
        rows = jsonl_rows(path)
        assert len(rows) >= 2, path.name
        for row in rows:
            assert TASKS[task_of(row)].name == path.stem, (path.name, task_of(row))


@pytest.mark.parametrize(
    "family,index,row", ALL_ROWS, ids=[f"{f}-{i}" for f, i, _ in ALL_ROWS] or None
)
def test_row_is_in_the_real_format(family, index, row):
    assert isinstance(row["question"], str) and row["question"].strip()
    assert isinstance(row["info"], str), "info is a JSON string in INTELLECT-3-RL"
    info = json.loads(row["info"])
    assert set(info) >= {"task", "game_data_str"}
    data = json.loads(info["game_data_str"])
    assert set(data) >= {"question", "answer", "difficulty", "metadata"}
    assert isinstance(data["metadata"], dict)
    assert isinstance(row.get(DIFFICULTY_KEY), float)
    assert len(row["_right"]) >= 1 and len(row["_wrong"]) >= 2
    i3_logic.puzzle_from_info(row["info"])  # the family's metadata check accepts it


async def score(env: vf.Environment, row: dict, reply: str) -> float:
    state = {
        "prompt": row["prompt"],
        "completion": [{"role": "assistant", "content": reply}],
        "info": json.loads(row["info"]) if isinstance(row["info"], str) else row["info"],
        "answer": row.get("answer", ""),
        "task": row.get("task", "default"),
    }
    await env.rubric.score_rollout(state)
    assert state.get("error") is None, state["error"]
    return state["reward"]


@pytest.mark.parametrize("family", sorted(p.stem for p in FILES))
async def test_right_replies_score_one_and_wrong_ones_zero(family):
    rows = jsonl_rows(ROWS / f"{family}.jsonl")
    env = load_environment(source=[public(r) for r in rows], tasks_to_skip=[])
    assert len(env.dataset) == len(rows)
    for loaded, row in zip(env.dataset, rows, strict=True):
        assert loaded["question"] == row["question"]
        for reply in row["_right"]:
            assert await score(env, loaded, reply) == 1.0, (task_of(row), reply[-300:])
        for reply in row["_wrong"]:
            assert await score(env, loaded, reply) == 0.0, (task_of(row), reply[-300:])


def test_shipped_sample_is_what_the_script_writes():
    script = PACKAGE.parent / "scripts" / "make_sample.py"
    spec = importlib.util.spec_from_file_location("i3_logic_make_sample", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (PACKAGE / "data" / "sample.jsonl").read_bytes() == module.render()


def test_default_source_offline_is_the_bundled_sample(monkeypatch, caplog):
    import datasets.config
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", "/nonexistent-hf-home")  # no cached copy either
    # what a process started offline has: datasets and huggingface_hub read the variable when
    # imported (earlier tests imported them), else each load tries the network (15 s here)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    sample = load_environment(source="sample", tasks_to_skip=[])
    default = load_environment(tasks_to_skip=[])
    assert default.dataset["question"] == sample.dataset["question"]
    assert "bundled sample" in caplog.text
    skipped = load_environment()  # upstream's default tasks_to_skip
    tasks = {json.loads(i)["task"] for i in skipped.dataset["info"]}
    assert tasks.isdisjoint(i3_logic.TASKS_TO_SKIP) and len(tasks) > 80


def test_vf_eval_over_the_default_rows_scores_the_scripted_replies(tmp_path, monkeypatch):
    """The default source through vf-eval: every row answered right or wrong by a script."""
    from verifiers.testing import run_vf_eval, scripted_eval

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    replies = {}
    for n, (_, _, row) in enumerate(ALL_ROWS):
        right = n % 2 == 0
        replies[row["question"]] = (row["_right"] if right else row["_wrong"])[0], right
    env = load_environment(tasks_to_skip=[])
    n = len(env.dataset)

    def responder(body):
        return replies[body["messages"][-1]["content"]][0]

    args = {"tasks_to_skip": []}
    rows, meta = scripted_eval(run_vf_eval, tmp_path, "i3-logic", responder, f"-n {n} -r 1", args)
    assert meta["status"] == "complete" and meta["errors"] == {}
    assert len(rows) == n
    for r in rows:
        want = 1.0 if replies[r["prompt"][-1]["content"]][1] else 0.0
        assert r["reward"] == want, (r["info"]["task"], r["completion"][-1]["content"][-200:])
