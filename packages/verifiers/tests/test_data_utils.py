"""verifiers.utils.data_utils against upstream's (v0.1.8-0.3.1 utils/data_utils.py): the raw
rows of each example dataset are given as a local copy in the hub dataset's own columns
(``source=``); everything after loading is the real path."""

import pytest
from datasets import Dataset, DatasetDict

import verifiers as vf
from verifiers.utils import answers, data_utils
from verifiers.utils.data_utils import (
    BOXED_SYSTEM_PROMPT,
    THINK_BOXED_SYSTEM_PROMPT,
    load_example_dataset,
)


def saved(tmp_path, **splits):
    """A DatasetDict of ``splits`` saved with save_to_disk, as a local copy of a hub dataset."""
    path = tmp_path / "copy"
    DatasetDict({name: Dataset.from_list(rows) for name, rows in splits.items()}).save_to_disk(
        str(path)
    )
    return path


def rows_of(ds):
    return list(zip(ds["question"], ds["answer"], strict=True))


def test_prompt_strings_are_upstreams():
    """upstream 0.3.1 legacy/utils/data_utils.py (same since v0.1.2): the exact strings,
    including the spaces THINK_BOXED_SYSTEM_PROMPT's source line continuation leaves."""
    assert BOXED_SYSTEM_PROMPT == (
        "Please reason step by step, and put your final answer within \\boxed{}."
    )
    assert THINK_BOXED_SYSTEM_PROMPT == (
        "Think step-by-step inside <think>...</think> tags.     Then, give your final answer "
        "inside \\boxed{}."
    )


def test_names_and_exports():
    """upstream verifiers/__init__.py (v0.1.2-0.3.1) exports load_example_dataset and the
    extractors from data_utils; `vf.load_dataset` was never an upstream name (no tag or commit
    of upstream's __init__ has it), so it stays absent."""
    assert vf.load_example_dataset is load_example_dataset
    assert data_utils.extract_boxed_answer is answers.extract_boxed_answer
    assert vf.extract_hash_answer is data_utils.extract_hash_answer
    assert data_utils.strip_non_numeric("$1,000.5 dollars") == "1000.5"
    assert not hasattr(vf, "load_dataset")


def test_gsm8k_defaults_to_test_and_takes_the_hash_answer(tmp_path):
    """upstream: gsm8k = openai/gsm8k 'main', default split test, answer after '####'."""
    copy = saved(
        tmp_path,
        train=[{"question": "train q", "answer": "work\n#### 1"}],
        test=[
            {"question": "What is 2+2?", "answer": "2+2=4\n#### 4"},
            {"question": "And 3+3?", "answer": "so\n#### 6"},
        ],
    )
    ds = load_example_dataset("gsm8k", source=copy)
    assert ds.column_names == ["question", "answer"]
    assert rows_of(ds) == [("What is 2+2?", "4"), ("And 3+3?", "6")]
    assert rows_of(load_example_dataset("gsm8k", "train", source=copy)) == [("train q", "1")]


def test_math_and_math500(tmp_path):
    """upstream: math = chiayewken/competition_math (train), answer the solution's last
    \\boxed{}; math500 = HuggingFaceH4/MATH-500 (test), problem/answer as they are."""
    copy = saved(
        tmp_path,
        train=[{"problem": "p1", "solution": "so \\boxed{\\frac{1}{2}}", "level": "Level 1"}],
        test=[{"problem": "p2", "solution": "s", "answer": "7", "subject": "x"}],
    )
    assert rows_of(load_example_dataset("math", source=copy)) == [("p1", "\\frac{1}{2}")]
    assert rows_of(load_example_dataset("math500", source=copy)) == [("p2", "7")]


def test_aime_and_amc(tmp_path):
    """upstream: aime2024 answer str(int(answer)); aime2025 keeps digits and dots of the
    answer, default split test; amc2023 problem/answer."""
    copy = saved(
        tmp_path,
        train=[{"id": 1, "problem": "aime24", "answer": "042", "solution": "s"}],
        test=[{"question": "aime25", "answer": "$1,2.5$"}],
    )
    assert rows_of(load_example_dataset("aime2024", source=copy)) == [("aime24", "42")]
    assert rows_of(load_example_dataset("aime2025", source=copy)) == [("aime25", "12.5")]
    amc = saved(tmp_path / "amc", train=[{"problem": "amc", "answer": 27.0, "url": ""}])
    assert rows_of(load_example_dataset("amc2023", source=amc)) == [("amc", 27.0)]


def test_multiple_choice_formats(tmp_path):
    """upstream: mmlu (cais/mmlu 'all', split dev) and mmlu_pro (validation) list options as
    'A: ...' after 'Question: ...\\n'; mmlu's answer index becomes a letter; openbookqa lists
    'A. ...' under 'Choices:'."""
    mmlu = saved(
        tmp_path / "mmlu",
        dev=[{"question": "q", "subject": "s", "choices": ["w", "x", "y", "z"], "answer": 2}],
    )
    assert rows_of(load_example_dataset("mmlu", source=mmlu)) == [
        ("Question: q\n\nA: w\nB: x\nC: y\nD: z", "C")
    ]
    pro = saved(
        tmp_path / "pro",
        validation=[
            {"question": "q", "options": ["a", "b", "c"], "answer": "B", "answer_index": 1}
        ],
    )
    assert rows_of(load_example_dataset("mmlu_pro", source=pro)) == [
        ("Question: q\n\nA: a\nB: b\nC: c", "B")
    ]
    obqa = saved(
        tmp_path / "obqa",
        train=[
            {
                "id": "1",
                "question_stem": "Sun is a",
                "choices": {"text": ["star", "planet"], "label": ["A", "B"]},
                "answerKey": "A",
            }
        ],
    )
    assert rows_of(load_example_dataset("openbookqa", source=obqa)) == [
        ("Question: Sun is a\n\nChoices:\nA. star\nB. planet", "A")
    ]


def test_gpqa_puts_the_correct_answer_on_the_answer_letter(tmp_path):
    """upstream: gpqa_diamond/gpqa_main shuffle the four letters per row; the answer is the
    letter of 'Correct Answer'. Ours shuffles with random.Random(seed): repeatable."""
    raw = [
        {
            "Question": f"q{i}",
            "Correct Answer": f"right{i}",
            "Incorrect Answer 1": "w1",
            "Incorrect Answer 2": "w2",
            "Incorrect Answer 3": "w3",
        }
        for i in range(8)
    ]
    copy = saved(tmp_path, train=raw)
    ds = load_example_dataset("gpqa_diamond", source=copy)
    for i, (question, letter) in enumerate(rows_of(ds)):
        assert question.startswith(f"Question: q{i}\n\nA: ")
        lines = question.split("\n")[2:]
        assert [line[:3] for line in lines] == ["A: ", "B: ", "C: ", "D: "]
        assert f"{letter}: right{i}" in lines
    assert rows_of(load_example_dataset("gpqa_main", source=copy)) == rows_of(ds)
    assert len({a for _, a in rows_of(ds)}) > 1  # not always the same letter


def test_filtered_datasets(tmp_path):
    """upstream: openrs_easy/openrs_hard keep rows of that level; prime_code keeps Python
    problems (prompt prefix) with verification_info as the answer."""
    openrs = saved(
        tmp_path / "openrs",
        train=[
            {"problem": "e", "answer": "1", "level": "Easy"},
            {"problem": "h", "answer": "2", "level": "Hard"},
        ],
    )
    assert rows_of(load_example_dataset("openrs", source=openrs)) == [("e", "1"), ("h", "2")]
    assert rows_of(load_example_dataset("openrs_easy", source=openrs)) == [("e", "1")]
    assert rows_of(load_example_dataset("openrs_hard", source=openrs)) == [("h", "2")]
    prefix = "Solve the following coding problem using the programming language python:"
    code = saved(
        tmp_path / "code",
        train=[
            {"prompt": f"{prefix} add", "verification_info": '{"tests": 1}'},
            {"prompt": "Solve it in rust: add", "verification_info": "{}"},
        ],
    )
    assert rows_of(load_example_dataset("prime_code", source=code)) == [
        (f"{prefix} add", '{"tests": 1}')
    ]


def test_n_draws_the_rows_upstream_draws(tmp_path):
    """upstream: with n > 0, dataset.shuffle(seed=seed).select(range(n)) before mapping."""
    raw = [{"question": f"q{i}", "answer": f"#### {i}"} for i in range(20)]
    copy = saved(tmp_path, test=raw)
    expected = Dataset.from_list(raw).shuffle(seed=3).select(range(5))["question"]
    ds = load_example_dataset("gsm8k", n=5, seed=3, source=copy)
    assert ds["question"] == expected
    assert load_example_dataset("gsm8k", n=5, seed=3, source=copy)["question"] == expected
    assert load_example_dataset("gsm8k", n=5, seed=4, source=copy)["question"] != expected
    with pytest.raises(vf.ConfigError, match="has 20 rows; asked for n=50"):
        load_example_dataset("gsm8k", n=50, source=copy)


def test_rows_and_datasets_as_sources():
    """The source may be rows or a datasets.Dataset in the hub dataset's columns."""
    rows = [{"problem": "p", "answer": "3"}]
    assert rows_of(load_example_dataset("math500", source=rows)) == [("p", "3")]
    assert rows_of(load_example_dataset("openrs", source=Dataset.from_list(rows))) == [("p", "3")]


def test_unknown_name_and_split():
    """upstream raised ValueError('Dataset X not supported ...'); ours a ConfigError (a
    ValueError) listing the supported names."""
    with pytest.raises(ValueError, match="'nope' is not supported; use one of aime2024"):
        load_example_dataset("nope")
    with pytest.raises(vf.ConfigError, match="no split 'validation'"):
        load_example_dataset(
            "gsm8k",
            "validation",
            source=DatasetDict({"test": Dataset.from_list([{"question": "q", "answer": "a"}])}),
        )


def test_offline_is_a_clear_error(unreachable_hub):
    """Ours: the real path goes to the hub (upstream: datasets.load_dataset, which retries
    for a while and fails with a connection error); unreachable, it is a ConfigError naming
    the example, the hub dataset and the way out."""
    with pytest.raises(vf.ConfigError) as info:
        load_example_dataset("gsm8k", split="train")
    message = str(info.value)
    assert "load_example_dataset('gsm8k', split='train')" in message
    assert "openai/gsm8k" in message and "unreachable" in message
    assert "source=" in message
    with pytest.raises(vf.ConfigError, match="opencompass/AIME2025.*unreachable"):
        load_example_dataset("aime2025")


@pytest.fixture
def fake_hub(monkeypatch):
    """Only the hub download is replaced (by local tables keyed by hub id, config and split);
    the calls are recorded so the test sees what upstream's loader would have asked for."""
    import verifiers.data_sources as data_sources

    tables: dict[tuple, list[dict]] = {}
    calls: list[tuple] = []

    def load_hub(hub_id, split, config):
        calls.append((hub_id, config, split))
        if (hub_id, config, split) not in tables:
            raise vf.ConfigError(f"could not load {hub_id} ({split}) from the hub: no such split")
        return Dataset.from_list(tables[hub_id, config, split])

    monkeypatch.setattr(data_sources, "_load_hub", load_hub)
    return tables, calls


def test_hub_path_asks_for_upstreams_datasets(fake_hub):
    """upstream 0.3.1 load_example_dataset: gsm8k = load_dataset('openai/gsm8k', 'main')
    [split]; aime2025 concatenates configs AIME2025-I and AIME2025-II of
    opencompass/AIME2025 (split test); mmlu = cais/mmlu 'all', split dev."""
    tables, calls = fake_hub
    tables["openai/gsm8k", "main", "test"] = [{"question": "g", "answer": "#### 5"}]
    tables["opencompass/AIME2025", "AIME2025-I", "test"] = [{"question": "i", "answer": "1"}]
    tables["opencompass/AIME2025", "AIME2025-II", "test"] = [{"question": "ii", "answer": "2"}]
    assert rows_of(load_example_dataset("gsm8k")) == [("g", "5")]
    assert rows_of(load_example_dataset("aime2025")) == [("i", "1"), ("ii", "2")]
    with pytest.raises(vf.ConfigError, match="load_example_dataset\\('mmlu', split='dev'\\)"):
        load_example_dataset("mmlu")
    assert calls == [
        ("openai/gsm8k", "main", "test"),
        ("opencompass/AIME2025", "AIME2025-I", "test"),
        ("opencompass/AIME2025", "AIME2025-II", "test"),
        ("cais/mmlu", "all", "dev"),
    ]


def test_a_classic_math_group_runs_end_to_end(fake_hub, server):
    """The pattern of upstream's environments/math_group (v0.1.8-0.2.0): two SingleTurnEnvs
    with dataset builders calling load_example_dataset(...).select(...), BOXED_SYSTEM_PROMPT
    and a boxed-answer parser, mixed by vf.EnvGroup(env_names=["gsm8k", "math"])."""
    tables, _ = fake_hub
    tables["openai/gsm8k", "main", "train"] = [
        {"question": f"What is {i} + {i}?", "answer": f"so\n#### {2 * i}"} for i in range(1, 4)
    ]
    tables["chiayewken/competition_math", None, "train"] = [
        {"problem": "What is 3 * 4?", "solution": "It is $\\boxed{12}$."}
    ]
    parser = vf.Parser(extract_fn=data_utils.extract_boxed_answer)

    def correct(completion, answer, **kwargs) -> float:
        return 1.0 if (parser.parse_answer(completion) or "") == answer else 0.0

    def env(name, n):
        return vf.SingleTurnEnv(
            dataset=lambda: load_example_dataset(name, split="train").select(range(n)),
            system_prompt=BOXED_SYSTEM_PROMPT,
            parser=parser,
            rubric=vf.Rubric(parser=parser, funcs=[correct]),
        )

    group = vf.EnvGroup([env("gsm8k", 2), env("math", 1)], env_names=["gsm8k", "math"])
    client = vf.OpenAIClient(server.base_url, api_key="x", retry_base_delay=0.01)
    outputs = group.evaluate_sync(client, "model", num_examples=-1)["outputs"]
    assert [o["info"]["env_id"] for o in outputs] == ["gsm8k", "gsm8k", "math"]
    assert [o["answer"] for o in outputs] == ["2", "4", "12"]
    assert all(o["reward"] == 1.0 for o in outputs), [o["error"] for o in outputs]
    assert outputs[0]["prompt"][0] == {"role": "system", "content": BOXED_SYSTEM_PROMPT}


def test_format_dataset_of_the_01x_api():
    """upstream v0.1.8-0.1.12 utils/data_utils.py format_dataset: example_id added (a
    non-integer one renamed src_id), prompt built from question_key with system prompt and
    few-shot turns, answer copied from answer_key; an existing prompt column is kept."""
    few_shot = [{"role": "user", "content": "1+1"}, {"role": "assistant", "content": "2"}]
    ds = Dataset.from_list([{"q": "What is 2+2?", "a": "4", "example_id": "x-1"}])
    out = data_utils.format_dataset(
        ds, system_prompt="SYS", few_shot=few_shot, question_key="q", answer_key="a"
    )
    assert out["src_id"] == ["x-1"] and out["example_id"] == [0]
    assert out["prompt"][0] == [
        {"role": "system", "content": "SYS"},
        *few_shot,
        {"role": "user", "content": "What is 2+2?"},
    ]
    assert out["answer"] == ["4"]
    given = Dataset.from_list([{"prompt": [{"role": "user", "content": "p"}], "answer": "a"}])
    kept = data_utils.format_dataset(given, system_prompt="SYS")
    assert kept["prompt"] == [[{"role": "user", "content": "p"}]] and kept["example_id"] == [0]
    with pytest.raises(vf.ConfigError, match="no 'q' column"):
        data_utils.format_dataset(Dataset.from_list([{"question": "x"}]), question_key="q")


def _last_box_by_character(text: str):
    """The brace matching `_last_box` did character by character, as a reference."""
    starts = [(text.rfind(o), o) for o in ("\\boxed{", "\\fbox{")]
    start, opener = max(starts)
    if start < 0:
        return None
    depth, i = 1, start + len(opener)
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i:j].strip(), j + 1
    return None


def test_the_last_box_is_found_brace_to_brace_as_character_by_character():
    import random

    from verifiers.utils.answers import _last_box

    rng = random.Random(7)
    pieces = ["{", "}", "a", "1", " ", "\\boxed{", "\\fbox{", "x}", "{{", "}}"]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 16)))
        assert _last_box(text) == _last_box_by_character(text), text
