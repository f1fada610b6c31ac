"""vf.Mixture / vf.load_mixture: sampling weights and pass-rate pools over an EnvGroup.

Counts are exact by construction (largest remainder of N * weight), so the ratio tests assert
exact numbers under fixed seeds and cannot flake; the seed only picks rows and order.
"""

import asyncio
import collections
import json
import subprocess
import sys
from pathlib import Path

import pytest
from datasets import Dataset

import verifiers as vf
from verifiers.dataset import parse_info
from verifiers.envs.mixture import largest_remainder
from verifiers.testing import ScriptedServer

REPO = Path(__file__).resolve().parents[3]
SHIPPED = REPO / "environments" / "intellect3-mix.toml"


def echo_reward(completion, answer) -> float:
    return 1.0 if answer in (completion[-1]["content"] or "") else 0.0


def env_with_rates(tag: str, rates: list[float | None]) -> vf.SingleTurnEnv:
    """Rows whose info["avg_reward"] is the given pass rate (None: unrated)."""
    rows = [
        {"question": f"{tag} q{i}", "answer": f"{tag}{i}", "info": {"avg_reward": r, "i": i}}
        for i, r in enumerate(rates)
    ]
    return vf.SingleTurnEnv(dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[echo_reward]))


def three(n: int = 10) -> list[vf.SingleTurnEnv]:
    return [env_with_rates(t, [0.5] * n) for t in ("a", "b", "c")]


def test_largest_remainder_is_exact_and_sums_to_total():
    assert largest_remainder(10, [1, 1, 1]) == [4, 3, 3]
    assert largest_remainder(256, [0.3, 0.2, 0.2, 0.2, 0.2, 0.3]) == [55, 37, 37, 36, 36, 55]
    assert sum(largest_remainder(997, [0.7, 0.11, 0.19])) == 997


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_weights_give_exact_shares_over_many_draws(seed):
    mix = vf.Mixture(
        three(), env_names=["a", "b", "c"], weights=[5, 3, 2], num_examples=1000, seed=seed
    )
    ds = mix.get_dataset()
    assert collections.Counter(ds["task"]) == {"a": 500, "b": 300, "c": 200}
    assert ds["example_id"] == list(range(1000))
    # every environment's rows are spread through the order, not blocked: any window of 100
    # holds each environment (a blocked concatenation would fail this for every window)
    assert all(len(set(ds["task"][i : i + 100])) == 3 for i in range(0, 1000, 100))
    # rows drawn more often than a pool holds repeat evenly: each of a's 10 rows 50 times
    a_rows = [parse_info(r["info"])["i"] for r in ds if r["task"] == "a"]
    assert collections.Counter(a_rows) == dict.fromkeys(range(10), 50)


def test_epochs_redraw_with_the_same_counts_and_unique_ids():
    mix = vf.Mixture(three(), env_names=["a", "b", "c"], weights=[2, 1, 1], num_examples=40)
    it = mix.epochs()
    rows = [next(it) for _ in range(40 * 5)]
    for e in range(5):
        epoch = rows[40 * e : 40 * (e + 1)]
        assert collections.Counter(r["task"] for r in epoch) == {"a": 20, "b": 10, "c": 10}
    assert len({r["example_id"] for r in rows}) == 200
    assert [r["question"] for r in rows[:40]] != [r["question"] for r in rows[40:80]]


def test_same_seed_same_rows_other_seed_other_order():
    def rows(seed):
        mix = vf.Mixture(three(), env_names=["a", "b", "c"], num_examples=60, seed=seed)
        return mix.get_dataset().to_list()

    assert rows(3) == rows(3)
    other = rows(4)
    assert [r["question"] for r in other] != [r["question"] for r in rows(3)]
    assert collections.Counter(r["task"] for r in other) == {"a": 20, "b": 20, "c": 20}


RATES = [0.0, 0.0, 0.1, 0.5, 0.5, 0.6, 0.9, 1.0, 1.0, None]


def test_pool_filters_drop_solved_and_unsolved():
    spec = vf.PoolSpec(drop_solved=True, drop_unsolved=True)
    mix = vf.Mixture([env_with_rates("a", RATES)], env_names=["a"], pools=spec)
    kept = sorted(parse_info(r["info"])["i"] for r in mix.get_dataset())
    assert kept == [2, 3, 4, 5, 6, 9]  # 0.0 and 1.0 dropped; unrated kept (normal)
    assert mix.pool_sizes["dataset"]["a"] == {"easy": 0, "normal": 6, "hard": 0}
    only_band = vf.PoolSpec(min_pass_rate=0.1, max_pass_rate=0.6, unrated="drop")
    mix = vf.Mixture([env_with_rates("a", RATES)], env_names=["a"], pools=only_band)
    assert sorted(parse_info(r["info"])["i"] for r in mix.get_dataset()) == [2, 3, 4, 5]


def test_pool_fractions_are_exact_and_pools_follow_rates():
    spec = vf.PoolSpec(
        easy_threshold=0.9, hard_threshold=0.1, easy_fraction=0.25, hard_fraction=0.15
    )
    mix = vf.Mixture([env_with_rates("a", RATES)], env_names=["a"], pools=spec, num_examples=200)
    ds = mix.get_dataset()
    pools = mix.pool_of_example["dataset"]
    assert collections.Counter(pools) == {"easy": 50, "hard": 30, "normal": 120}
    for row, pool in zip(ds, pools, strict=True):
        rate = parse_info(row["info"])["avg_reward"]
        assert spec.pool_of(rate) == pool
    assert mix.pool_sizes["dataset"]["a"] == {"easy": 3, "normal": 4, "hard": 3}


def test_an_empty_pool_hands_its_share_to_normal():
    spec = vf.PoolSpec(easy_threshold=0.95, easy_fraction=0.5)
    mix = vf.Mixture([env_with_rates("a", [0.5, 0.6])], env_names=["a"], pools=spec, num_examples=8)
    assert mix.pool_of_example["dataset"] == ["normal"] * 8


def test_per_environment_pools_and_a_column_rate():
    rows = [{"question": f"q{i}", "answer": "x", "score": r} for i, r in enumerate([1.0, 0.2])]
    col = vf.SingleTurnEnv(dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[echo_reward]))
    mix = vf.Mixture(
        [col, env_with_rates("b", [1.0, 0.3])],
        env_names=["a", "b"],
        pools={"a": vf.PoolSpec(drop_solved=True, difficulty_key="score")},
    )
    sizes = mix.pool_sizes["dataset"]
    assert sizes["a"]["normal"] == 1 and sizes["b"]["normal"] == 2  # b has no filter
    assert "q0" not in mix.get_dataset()["question"]  # a's solved row (score 1.0) is dropped


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"weights": [1, 0]}, "positive"),
        ({"weights": [1]}, "2 environments but 1 weights"),
        ({"pools": {"zz": vf.PoolSpec()}}, "unknown environments"),
        ({"pools": vf.PoolSpec(unrated="error")}, "has no pass rate"),
        ({"pools": vf.PoolSpec(drop_solved=True, unrated="drop")}, "no dataset row of a"),
        ({"num_examples": 0}, "at least 1"),
    ],
)
def test_bad_mixtures_are_clear_errors(kwargs, message):
    envs = [env_with_rates("a", [1.0, None]), env_with_rates("b", [0.5])]
    with pytest.raises(vf.ConfigError, match=message):
        vf.Mixture(envs, env_names=["a", "b"], **kwargs)


@pytest.mark.parametrize(
    "spec",
    [
        {"easy_fraction": 0.2},
        {"easy_threshold": 0.2, "hard_threshold": 0.5},
        {"easy_fraction": 0.7, "hard_fraction": 0.7, "easy_threshold": 1, "hard_threshold": 0},
        {"min_pass_rate": 0.8, "max_pass_rate": 0.2},
    ],
)
def test_bad_pool_specs_are_clear_errors(spec):
    with pytest.raises(vf.ConfigError):
        vf.PoolSpec(**spec)


def test_plain_env_group_still_concatenates():
    """The classic EnvGroup is untouched: each environment's share is its row count."""
    group = vf.EnvGroup(
        [env_with_rates("a", [0.5] * 3), env_with_rates("b", [0.5])], env_names=["a", "b"]
    )
    assert group.get_dataset()["task"] == ["a", "a", "a", "b"]


def test_config_file_errors_name_the_field(tmp_path):
    bad = tmp_path / "m.toml"
    bad.write_text('[mixture]\nseed = 1\n[[mixture.env]]\nid = "arithmetic"\nratio = 2\n')
    with pytest.raises(vf.ConfigError, match="unknown field.*ratio"):
        vf.load_mixture(bad)
    bad.write_text('[mixture]\n[[mixture.env]]\nid = "arithmetic"\n')
    with pytest.raises(vf.ConfigError, match="needs a weight"):
        vf.load_mixture(bad)
    bad.write_text("[[eval]]\nid = 'arithmetic'\n")
    with pytest.raises(vf.ConfigError, match="no \\[mixture\\] table"):
        vf.load_environment(str(bad))
    bad.write_text('[mixture]\nseed = "x"\n[[mixture.env]]\nid = "arithmetic"\nweight = 1\n')
    with pytest.raises(vf.ConfigError, match="seed must be an integer"):
        vf.load_mixture(bad)


@pytest.fixture(scope="module")
def shipped():
    env = vf.load_environment(str(SHIPPED))
    yield env
    asyncio.run(env.teardown())  # the children's worker pools (math-verify) end with it


def test_shipped_config_has_the_six_environments_and_its_shares(shipped):
    assert isinstance(shipped, vf.Mixture)
    assert shipped.env_names == [
        "i3-math", "i3-code", "i3-science", "i3-logic", "deepdive", "mini-swe-agent-plus"
    ]  # fmt: skip
    ds = shipped.get_dataset()
    assert len(ds) == 256
    assert collections.Counter(ds["task"]) == {
        "i3-math": 55, "i3-code": 37, "i3-science": 37, "i3-logic": 36, "deepdive": 36,
        "mini-swe-agent-plus": 55,
    }  # fmt: skip
    for row in ds:  # the report's "drop always-solved"
        rate = parse_info(row["info"]).get("avg_reward")
        assert rate is None or rate < 1.0
    # i3-logic's rates come from its pass-rate column, named in the config
    column = "avg@16_qwen3_4b_instruct_2507"
    logic = [r for r, task in zip(ds[column], ds["task"], strict=True) if task == "i3-logic"]
    assert len(logic) == 36 and all(r is not None and 0.0 <= r < 1.0 for r in logic)


async def test_rollout_stream_takes_the_mixture(shipped):
    async with ScriptedServer() as srv:
        stream = vf.RolloutStream(
            shipped,
            vf.OpenAIClient(srv.base_url, api_key="x", retry_base_delay=0.01),
            "m",
            (r for r in shipped.epochs() if r["task"] in ("i3-math", "i3-science")),
            rollouts_per_example=2,
            max_in_flight=2,
            filter_zero_variance=False,
        )
        seen = []
        async with stream:
            async for group in stream:
                seen.append(group)
                if len(seen) == 3:
                    break
    assert len(seen) == 3
    assert all(len(g.rollouts) == 2 for g in seen)
    routes = {r["info"]["env_id"] for g in seen for r in g.rollouts}
    assert routes <= {"i3-math", "i3-science"} and routes  # each routed to its environment


def test_vf_eval_runs_the_shipped_mix(tmp_path):
    with ScriptedServer() as srv:
        proc = subprocess.run(
            [sys.executable, "-m", "verifiers.cli.eval", str(SHIPPED), "-m", "m", "-b",
             srv.base_url, "-n", "6", "-r", "1", "--no-progress"],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run,) = (tmp_path / "outputs" / "evals" / "intellect3-mix--m").iterdir()
    meta = json.loads((run / "metadata.json").read_text())
    assert meta["status"] == "complete" and meta["num_rollouts"] == 6
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    first_six = [r["task"] for r in vf.load_mixture(SHIPPED).get_dataset().select(range(6))]
    assert sorted(r["info"]["env_id"] for r in rows) == sorted(first_six)


def test_a_mixture_file_as_the_id_of_an_eval_config(tmp_path):
    """`[[eval]] id = "mix.toml"` works too: vf.load_environment builds the mixture."""
    mix = tmp_path / "mix.toml"
    mix.write_text(
        "[mixture]\nseed = 2\nnum_examples = 8\n"
        '[[mixture.env]]\nid = "arithmetic"\nname = "a"\nweight = 3\n'
        '[[mixture.env]]\nid = "arithmetic"\nname = "b"\nweight = 1\nargs = {seed = 5}\n'
    )
    assert collections.Counter(vf.load_mixture(mix).get_dataset()["task"]) == {"a": 6, "b": 2}
    with ScriptedServer() as srv:
        evals = tmp_path / "evals.toml"
        evals.write_text(
            f'model = "m"\napi_base_url = "{srv.base_url}"\nnum_examples = 8\n'
            f'rollouts_per_example = 1\n[[eval]]\nid = "{mix}"\nname = "mx"\n'
        )
        proc = subprocess.run(
            [sys.executable, "-m", "verifiers.cli.eval", str(evals), "--no-progress"],
            cwd=tmp_path, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run,) = (tmp_path / "outputs" / "evals" / "mx--m").iterdir()
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert collections.Counter(r["info"]["env_id"] for r in rows) == {"a": 6, "b": 2}
