import json
import re
import tomllib
from pathlib import Path

import mmlu_pro
import pytest

from verifiers import ConfigError
from verifiers.testing import scripted_eval
from verifiers.testing.responders import last_text

SAMPLE_ROWS = [json.loads(line) for line in mmlu_pro.SAMPLE.read_text().splitlines()]


def row(**changes):
    base = {
        "question_id": 7,
        "question": "Which planet is closest to the Sun?",
        "options": ["Venus", "Mercury", "Mars", "Earth", "Jupiter", "Saturn", "Uranus", "Neptune"],
        "answer": "B",
        "answer_index": 1,
        "category": "other",
        "src": "mine",
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not ...}


def test_prompt_and_gold_letters():
    env = mmlu_pro.load_environment(source="sample")
    assert len(env.dataset) == len(SAMPLE_ROWS)
    for r, raw in zip(env.dataset, SAMPLE_ROWS, strict=True):
        prompt = r["prompt"][-1]["content"]
        assert prompt.startswith(mmlu_pro.ANSWER_FORMATS["boxed"] + "\n\n" + raw["question"])
        lines = prompt.rsplit("\n\n", 1)[1].splitlines()
        assert lines == [
            f"{c}. {o}" for c, o in zip(mmlu_pro.LETTERS, raw["options"], strict=False)
        ]
        assert r["answer"] == raw["answer"]
        assert (
            raw["options"][mmlu_pro.LETTERS.index(r["answer"])]
            == raw["options"][raw["answer_index"]]
        )
        assert r["info"]["num_options"] == len(raw["options"])
        assert r["info"]["category"] == raw["category"]
    assert {r["info"]["num_options"] for r in env.dataset} == {8, 10}


# -- category filter -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("category", "expected"),
    [
        ("math", {"math"}),
        ("Computer Science", {"computer science"}),
        ("computer_science", {"computer science"}),
        (["physics", "chemistry"], {"physics", "chemistry"}),
        (None, {r["category"] for r in SAMPLE_ROWS}),
    ],
)
def test_category_filter(category, expected):
    env = mmlu_pro.load_environment(source="sample", category=category)
    assert {r["category"] for r in env.dataset["info"]} == expected
    assert len(env.dataset) == sum(r["category"] in expected for r in SAMPLE_ROWS)
    assert list(env.dataset["example_id"]) == list(range(len(env.dataset)))


@pytest.mark.parametrize(
    ("category", "message"),
    [
        ("maths", "unknown MMLU-Pro category 'maths'; the categories are: biology"),
        (["physics", "astrology"], "unknown MMLU-Pro category 'astrology'"),
        ([], "category must be a name or a list"),
        ("law", "has no rows in category law"),  # a real subject the sample lacks
    ],
)
def test_bad_category_is_a_clear_error(category, message):
    with pytest.raises(ConfigError, match=message):
        mmlu_pro.load_environment(source="sample", category=category)


# -- extraction ------------------------------------------------------------------------------
EXTRACTION = tomllib.loads((Path(__file__).parent / "data" / "extraction.toml").read_text())
EXTRACTORS = {
    "boxed": mmlu_pro.extract_boxed_letter,
    "answer_is": mmlu_pro.extract_answer_is_letter,
}


@pytest.mark.parametrize(
    ("fmt", "text", "letters", "letter"),
    [
        (fmt, row["text"], row.get("letters", "ABCDEFGHIJ"), row["letter"])
        for fmt in EXTRACTORS
        for row in EXTRACTION[fmt]
    ],
)
def test_extraction(fmt, text, letters, letter):
    """Each answer format's extractor on the rows of tests/data/extraction.toml."""
    assert EXTRACTORS[fmt](text, letters) == letter


def test_answer_is_extraction_of_no_text():
    assert mmlu_pro.extract_answer_is_letter(None, "ABCDEFGHIJ") == ""


@pytest.mark.parametrize(
    ("fmt", "text", "reward", "answered"),
    [
        ("boxed", "\\boxed{B}", 1.0, 1.0),
        ("boxed", "\\boxed{A}", 0.0, 1.0),
        ("boxed", "\\boxed{I}", 0.0, 0.0),  # eight options: I is not one
        ("boxed", "\\boxed{Mercury}", 0.0, 0.0),
        ("answer_is", "The answer is (B)", 1.0, 1.0),
        ("answer_is", "The answer is (H)", 0.0, 1.0),
        ("answer_is", "The answer is (J)", 0.0, 0.0),
        ("answer_is", "Mercury.", 0.0, 0.0),
    ],
)
async def test_rubric_scores(fmt, text, reward, answered):
    env = mmlu_pro.load_environment(source=[row()], answer_format=fmt)
    r = env.dataset[0]
    state = {
        "prompt": r["prompt"],
        "completion": [{"role": "assistant", "content": text}],
        "answer": r["answer"],
        "info": r["info"],
        "input": {},
    }
    await env.rubric.score_rollout(state)
    assert state["reward"] == reward
    assert state["metrics"] == {"correct_letter": reward, "answered": answered}


# -- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (row(answer="I"), r"row 1 \(question_id 7\): answer 'I' is not one of the letters A, B"),
        (row(answer=None), "answer None is not one of the letters"),
        (row(answer_index=3), "answer 'B' and answer_index 3 disagree"),
        (row(options="Venus, Mercury"), "'options' must be a list of 2 to 10 texts"),
        (row(options=["Mercury"], answer="A", answer_index=0), "'options' must be a list"),
        (row(options=[str(i) for i in range(11)]), "'options' must be a list of 2 to 10"),
        (row(options=["Venus", "", "Mars"]), "an option is empty"),
        (row(question=""), "'question' is missing or empty"),
        (row(category=None), "'category' is missing or empty"),
    ],
)
def test_broken_rows_are_named(bad, message):
    with pytest.raises(ConfigError, match=message):
        mmlu_pro.load_environment(source=[row(question_id=6), bad])


def test_bad_answer_format():
    with pytest.raises(ConfigError, match="answer_format must be one of 'boxed', 'answer_is'"):
        mmlu_pro.load_environment(source="sample", answer_format="letter")


def test_file_missing_columns_is_a_clear_error(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"question": "q", "answer": "A"}) + "\n")
    with pytest.raises(ConfigError, match="lacks column"):
        mmlu_pro.load_environment(source=str(path))


# -- end to end ----------------------------------------------------------------------------
_OPTION_RE = re.compile(r"^([A-J])\. (.*)$", re.MULTILINE)
BY_QUESTION = {r["question"]: r for r in SAMPLE_ROWS}


def model(body):
    """Right on math, physics and computer science; a wrong letter on economics; option text on
    history; a letter past the end on chemistry."""
    prompt = last_text(body)
    raw = next(r for q, r in BY_QUESTION.items() if q in prompt)
    shown = dict((m.group(2), m.group(1)) for m in _OPTION_RE.finditer(prompt))
    correct = shown[raw["options"][raw["answer_index"]]]
    if raw["category"] == "economics":
        return f"\\boxed{{{'A' if correct != 'A' else 'B'}}}"
    if raw["category"] == "history":
        return f"\\boxed{{{correct}. {raw['options'][raw['answer_index']]}}}"
    if raw["category"] == "chemistry":
        return "\\boxed{K}"
    return f"<think>Checking the options.</think>\nThe answer is \\boxed{{{correct}}}."


def test_vf_scripted_evaled_model(tmp_path, vf_eval_in_process):
    args = {
        "source": "sample",
        "category": ["math", "physics", "economics", "history", "chemistry"],
    }
    rows, meta = scripted_eval(vf_eval_in_process, tmp_path, "mmlu-pro", model, "-n 5 -r 2", args)
    assert len(rows) == 10 and meta["num_rollouts"] == 10
    assert all(r["error"] is None for r in rows)
    got = {}
    for r in rows:
        got.setdefault(r["info"]["category"], set()).add((r["reward"], r["answered"]))
    assert got == {
        "math": {(1.0, 1.0)},
        "physics": {(1.0, 1.0)},
        "economics": {(0.0, 1.0)},
        "history": {(0.0, 0.0)},
        "chemistry": {(0.0, 0.0)},
    }


# -- upstream's load_environment arguments ----------------------------------------------------
def question_ids(env):
    return [i["id"] for i in env.dataset["info"]]


def sample_ids(split):
    lines = mmlu_pro.SAMPLES[split].read_text().splitlines()
    return [str(json.loads(line)["question_id"]) for line in lines]


def test_dataset_split_selects_the_sample():
    test = question_ids(mmlu_pro.load_environment(source="sample"))
    val = question_ids(mmlu_pro.load_environment(source="sample", dataset_split="validation"))
    assert [str(i) for i in test] == sample_ids("test")
    assert [str(i) for i in val] == sample_ids("validation")
    assert not set(test) & set(val)
    with pytest.raises(ConfigError, match="dataset_split must be one of 'test', 'validation'"):
        mmlu_pro.load_environment(source="sample", dataset_split="train")


def test_dataset_name_subset_split_reach_the_real_loader(tmp_path, monkeypatch):
    """Upstream's three dataset arguments go to `datasets.load_dataset(name, subset, split)`:
    a local folder stands in for the hub repository (offline mode skips the reachability
    probe)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    repo = tmp_path / "mmlu-pro-copy"
    repo.mkdir()
    for split, path in mmlu_pro.SAMPLES.items():
        (repo / f"{split}.jsonl").write_text(path.read_text())
    for split in mmlu_pro.SAMPLES:
        env = mmlu_pro.load_environment(
            dataset_name=str(repo), dataset_subset="default", dataset_split=split, source="hub"
        )
        assert [str(i) for i in question_ids(env)] == sample_ids(split)


def test_unknown_argument_is_a_clear_error():
    import verifiers as vf

    with pytest.raises(TypeError, match="unexpected keyword argument 'split'"):
        mmlu_pro.load_environment(source="sample", split="validation")
    with pytest.raises(ConfigError, match="does not take 'split'.*dataset_split"):
        vf.load_environment("mmlu-pro", source="sample", split="validation")
