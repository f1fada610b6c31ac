"""DifficultyFilter: pools by pass rate, sampling fractions, zero-variance groups, checkpoints."""

import json

import pytest

import verifiers as vf

ROWS = [{"example_id": i, "question": f"q{i}", "answer": str(i)} for i in range(10)]


def test_problems_move_between_pools_as_the_thresholds_say():
    f = vf.DifficultyFilter(ROWS, easy_threshold=0.75, hard_threshold=0.25)
    assert f.observe(0, [1.0, 1.0, 1.0, 0.0]) is True  # 0.75: easy (at the threshold)
    assert f.observe(1, [1.0, 0.0, 0.0, 0.0]) is True  # 0.25: hard (at the threshold)
    assert f.observe(2, [1.0, 1.0, 0.0, 0.0]) is True  # 0.5: stays normal
    assert f.observe(3, [0.0, 0.0, 0.0, 0.0]) is False  # hard, and no signal
    assert [f.pool_of(i) for i in range(4)] == ["easy", "hard", "normal", "hard"]
    assert f.observe(0, [0.5, 0.5]) is False  # easy back to normal; zero variance
    assert f.pool_of(0) == "normal"
    assert f.counters["moved_to_easy"] == 1 and f.counters["moved_to_hard"] == 2
    assert f.counters["moved_to_normal"] == 1
    assert f.counters["zero_variance_groups"] == 2 and f.counters["filtered_hard"] == 1
    assert f.counters["filtered_easy"] == 0
    assert f.stats[0].pass_rate == pytest.approx(4 / 6) and f.stats[0].last_mean == 0.5
    m = f.metrics()
    assert (m["pool/easy"], m["pool/normal"], m["pool/hard"]) == (0.0, 8.0, 2.0)


def test_thresholds_can_be_disabled():
    f = vf.DifficultyFilter(ROWS, easy_threshold=None, hard_threshold=None)
    f.observe(0, [1.0, 1.0])
    f.observe(1, [0.0, 0.0])
    assert f.pool_of(0) == f.pool_of(1) == "normal"


def test_sampling_follows_the_pool_fractions():
    f = vf.DifficultyFilter(ROWS, easy_fraction=0.0, hard_fraction=0.0, seed=1)
    for i in range(5):
        f.observe(i, [1.0, 1.0])  # 0-4 easy
    for i in range(5, 8):
        f.observe(i, [0.0, 0.0])  # 5-7 hard; 8 and 9 stay normal
    assert {f.sample()["example_id"] for _ in range(200)} == {8, 9}

    f.easy_fraction, f.hard_fraction = 0.5, 0.25
    drawn = [f.sample()["example_id"] for _ in range(4000)]
    easy = sum(d < 5 for d in drawn) / len(drawn)
    hard = sum(5 <= d < 8 for d in drawn) / len(drawn)
    assert easy == pytest.approx(0.5, abs=0.03) and hard == pytest.approx(0.25, abs=0.03)

    for i in range(8, 10):
        f.observe(i, [1.0])  # the normal pool empties: its share goes to the first non-empty pool
    assert len(f.pools["normal"]) == 0
    drawn = [f.sample()["example_id"] for _ in range(4000)]
    hard = sum(5 <= d < 8 for d in drawn) / len(drawn)
    assert hard == pytest.approx(0.25, abs=0.03) and {8, 9} <= set(drawn)


def test_state_survives_a_json_checkpoint_and_continues_identically():
    f = vf.DifficultyFilter(ROWS, easy_fraction=0.2, hard_fraction=0.2, seed=7)
    for i in range(6):
        f.observe(i, [1.0, 1.0] if i % 2 else [0.0, 1.0] if i % 3 else [0.0, 0.0])
    for _ in range(13):
        f.sample()
    saved = json.loads(json.dumps(f.state_dict()))

    g = vf.DifficultyFilter(ROWS, easy_fraction=0.2, hard_fraction=0.2, seed=999)
    g.load_state_dict(saved)
    assert {n: g.pools[n].items for n in g.pools} == {n: f.pools[n].items for n in f.pools}
    assert g.counters == f.counters and g.stats == f.stats
    assert [g.sample()["example_id"] for _ in range(50)] == [
        f.sample()["example_id"] for _ in range(50)
    ]
    g.observe(9, [1.0, 1.0])
    f.observe(9, [1.0, 1.0])
    assert g.state_dict() == f.state_dict()


def test_restore_into_a_changed_dataset():
    f = vf.DifficultyFilter(ROWS)
    f.observe(0, [1.0])
    f.observe(9, [0.0])
    rows = [r for r in ROWS if r["example_id"] != 9] + [{"example_id": 10, "question": "new"}]
    g = vf.DifficultyFilter(rows)
    g.load_state_dict(f.state_dict())
    assert g.pool_of(0) == "easy" and g.pool_of(10) == "normal"
    assert 9 not in g.stats and len(g.pools["hard"]) == 0
    with pytest.raises(vf.ConfigError):
        g.load_state_dict({**f.state_dict(), "version": 99})


def test_bad_configuration_is_reported():
    with pytest.raises(vf.ConfigError):
        vf.DifficultyFilter(ROWS, easy_fraction=0.8, hard_fraction=0.3)
    with pytest.raises(vf.ConfigError):
        vf.DifficultyFilter(ROWS, easy_threshold=0.2, hard_threshold=0.5)
    with pytest.raises(vf.ConfigError):
        vf.DifficultyFilter([])
    with pytest.raises(vf.ConfigError):
        vf.DifficultyFilter([{"example_id": 1}, {"example_id": 1}])
    with pytest.raises(vf.ConfigError):
        vf.DifficultyFilter(ROWS).observe(42, [1.0])
