import asyncio
import inspect
import json
import logging
import socket
import tomllib
from pathlib import Path

import aime
import pytest

from verifiers import ConfigError
from verifiers.testing import point_at_local_copy, scripted_eval
from verifiers.testing.responders import last_text


@pytest.fixture(scope="module")
def env():
    env = aime.load_environment(source="sample", year="both", max_workers=2)
    yield env
    asyncio.run(env.teardown())


def said(text):
    return [{"role": "assistant", "content": text}]


#: (gold, model output, expected reward), from tests/data/grading.toml
GRADING = [
    (row["gold"], row["output"], row["reward"])
    for row in tomllib.loads((Path(__file__).parent / "data" / "grading.toml").read_text())["rows"]
]


@pytest.mark.parametrize(("gold", "output", "expected"), GRADING)
async def test_grading_table(env, gold, output, expected):
    state = {}
    score = await env.rubric.correct_answer(completion=said(output), answer=gold, state=state)
    assert score == expected
    assert not state.get("math_verify_timeout")


@pytest.mark.parametrize("year", [2024, 2025])
def test_upstream_year_ids_load_that_year_with_our_arguments(year):
    """Upstream's ``aime2024`` / ``aime2025`` ids (this package's entry points): the year's
    problems only, taking ``system_prompt`` as upstream does and our other arguments."""
    load = getattr(aime, f"load_aime{year}")
    assert load.__name__ == f"load_aime{year}" and f"year={year}" in load.__doc__
    assert list(inspect.signature(load).parameters) == [
        "system_prompt",
        "source",
        "math_verify_timeout",
        "max_workers",
        "sampling_args",
    ]
    env = load(system_prompt="Be brief.", source="sample", max_workers=1)
    both = aime.load_environment(source="sample", year="both", max_workers=1)
    assert 0 < len(env.dataset) < len(both.dataset)
    assert {info["year"] for info in env.dataset["info"]} == {year}
    assert env.system_prompt == "Be brief."


@pytest.mark.parametrize(
    ("value", "expected"),
    [("70", "70"), ("070", "70"), (" $204$ ", "204"), (5, "5"), (12.0, "12"), ("0", "0")],
)
def test_gold_answers_normalized(value, expected):
    assert aime.normalize_answer(value) == expected


@pytest.mark.parametrize("value", ["12.5", "abc", "1000", 1000, -3, 2.5, None, True, "", "7 8"])
def test_non_aime_answers_rejected(value):
    assert aime.normalize_answer(value) is None


def test_years_and_prompt(env):
    one = aime.load_environment(source="sample", year=2024)
    assert len(one.dataset) == 4
    assert {r["info"]["year"] for r in one.dataset} == {2024}
    assert {r["info"]["year"] for r in env.dataset} == {2024, 2025}
    assert len(env.dataset) == 8
    assert list(env.dataset["example_id"]) == list(range(8))
    row = env.dataset[0]
    assert row["prompt"] == [{"role": "user", "content": row["question"]}]
    assert row["question"].endswith("\n" + aime.INSTRUCTION)
    assert row["answer"] == "130"
    listed = aime.load_environment(source="sample", year=[2025, "2024"])
    assert [r["info"]["year"] for r in listed.dataset] == [2025] * 4 + [2024] * 4


@pytest.mark.parametrize("year", [2023, "2026", "nope", [], [2024, 1999], True])
def test_bad_year_is_a_clear_error(year):
    with pytest.raises(ConfigError, match="year must"):
        aime.load_environment(source="sample", year=year)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"problem": "What is 1 + 1?", "answer": "2.5"}, "row 1: answer '2.5' is not an integer"),
        ({"problem": "What is 1 + 1?", "answer": 1000}, "row 1: answer 1000 is not an integer"),
        ({"problem": "What is 1 + 1?"}, "row 1: answer None"),
        ({"text": "What is 1 + 1?", "answer": "2"}, "row 1 has no problem text"),
        ({"problem": "  ", "answer": "2"}, "row 1: the problem text is empty"),
    ],
)
def test_broken_rows_are_named(row, message):
    rows = [{"problem": "What is 2 + 2?", "answer": "4"}, row]
    with pytest.raises(ConfigError, match=message):
        aime.load_environment(source=rows, year=2024)


def test_own_rows_and_files(tmp_path):
    rows = [
        {"question": "What is 2 + 3?", "answer": 5},
        {"problem": "What is 3 + 4?", "answer": "7"},
    ]
    env = aime.load_environment(source=rows, year=2025)
    assert list(env.dataset["answer"]) == ["5", "7"]
    path = tmp_path / "mine.jsonl"
    same = [
        {"problem": "What is 2 + 3?", "answer": "5"},
        {"problem": "What is 3 + 4?", "answer": "7"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in same))
    assert list(aime.load_environment(source=str(path), year=2025).dataset["answer"]) == ["5", "7"]
    same[0]["answer"] = 5  # 5 and "7": clashing types
    path.write_text("\n".join(json.dumps(r) for r in same))
    with pytest.raises(ConfigError, match="do not fit one table: column .answer."):
        aime.load_environment(source=str(path), year=2025)
    with pytest.raises(ConfigError, match="one year"):
        aime.load_environment(source=rows, year="both")


def test_auto_falls_back_to_the_sample_offline(monkeypatch, caplog):
    with socket.socket() as s:  # a hub address nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    with caplog.at_level(logging.WARNING, logger="aime"):
        env = aime.load_environment(year=2024)
    assert len(env.dataset) == 4
    assert "using the bundled sample" in caplog.text
    with pytest.raises(ConfigError, match="aime_2024"):
        aime.load_environment(year=2024, source="hub")


# The scripted model: right on some problems, wrong, unboxed or truncated on others.
REPLIES = {
    "divisible by $7$": "<think>142 - 12</think>\nSo the count is $\\boxed{130}$.",
    "divisors of $360$": "The sum is 1170, so the remainder is \\boxed{1170}.",  # wrong
    "perimeter $100$": "625 - 49 = 576, the answer is 576.",  # no box
    "zeros at the end": "<think>Counting fives: 404 + 80 + 16 + 3 = 503 so \\boxed{503}",  # cut off
    "ordered pairs": "</think>\\boxed{030}",
    "squares or perfect cubes": "\\boxed{27}",
    "divided by $125$": "\\boxed{57}",
    "legs of lengths": "\\boxed{36}",  # wrong
}


def model(body):
    text = last_text(body)
    return next(reply for key, reply in REPLIES.items() if key in text)


def test_vf_scripted_evaled_model(tmp_path, vf_eval_in_process):
    args = {"source": "sample", "year": "both", "max_workers": 1}
    rows, meta = scripted_eval(vf_eval_in_process, tmp_path, "aime", model, "-n 8 -r 2", args)
    assert len(rows) == 16
    assert all(r["error"] is None for r in rows)
    by_answer = {}
    for r in rows:
        by_answer.setdefault(r["answer"], set()).add(r["reward"])
    assert by_answer == {
        "130": {1.0},
        "170": {0.0},
        "576": {0.0},
        "503": {0.0},
        "30": {1.0},
        "27": {1.0},
        "57": {1.0},
        "35": {0.0},
    }
    assert meta["num_rollouts"] == 16


# -- upstream's environment ids and arguments -------------------------------------------------
def sample_questions(year):
    lines = (aime.DATA_DIR / f"sample_{year}.jsonl").read_text().splitlines()
    return [(json.loads(line).get("problem") or json.loads(line)["question"]) for line in lines]


@pytest.mark.parametrize("year", [2024, 2025])
def test_upstream_ids_load_their_year(year):
    import verifiers as vf

    env = vf.load_environment(f"aime{year}", source="sample", system_prompt="Be careful.")
    assert [i["year"] for i in env.dataset["info"]] == [year] * len(env.dataset)
    firsts = [q.split("\n")[0] for q in env.dataset["question"]]
    assert firsts == [q.strip().split("\n")[0] for q in sample_questions(year)]
    assert env.system_prompt == "Be careful."
    with pytest.raises(ConfigError, match="does not take 'year'.*system_prompt"):
        vf.load_environment(f"aime{year}", source="sample", year=2024)


def test_instruction_prompt_pre_and_post():
    env = aime.load_environment(
        year=2024, source="sample", instruction_prompt_pre="PRE ", instruction_prompt_post=" POST"
    )
    q = env.dataset["question"][0]
    assert q.startswith("PRE ") and q.endswith(" POST") and aime.INSTRUCTION not in q
    default = aime.load_environment(year=2024, source="sample").dataset["question"][0]
    assert default.endswith("\n" + aime.INSTRUCTION)


def test_official_instruction_is_upstreams_line_loaded_at_run_time(tmp_path, monkeypatch):
    """instruction_prompt_post="official": a newline + INSTRUCTION_PROMPT of upstream's
    aime2025.py (research-environments b9cb04a), read with ast from a file in that layout."""
    upstream = 'INSTRUCTION_PROMPT = "PLACEHOLDER UPSTREAM LINE."\nraise SystemExit\n'
    copy = tmp_path / "aime2025.py"
    source = point_at_local_copy(monkeypatch, aime, "OFFICIAL_INSTRUCTION", copy, upstream)
    assert source.name == "INSTRUCTION_PROMPT"
    assert source.url.endswith(
        "/b9cb04acef3b5608a0e05883af7f329c0c69dbaa/environments/aime2025/aime2025.py"
    )
    official = aime.load_environment(year=2024, source="sample", instruction_prompt_post="official")
    ours = aime.load_environment(year=2024, source="sample")
    problem = ours.dataset["question"][0].removesuffix("\n" + aime.INSTRUCTION)
    assert official.dataset["question"][0] == problem + "\nPLACEHOLDER UPSTREAM LINE."


def test_unknown_argument_is_a_clear_error():
    import verifiers as vf

    with pytest.raises(TypeError, match="unexpected keyword argument 'dataset_split'"):
        aime.load_environment(source="sample", dataset_split="test")
    with pytest.raises(ConfigError, match="does not take 'dataset_split'.*year"):
        vf.load_environment("aime", source="sample", dataset_split="test")
