"""Online difficulty filtering: easy / normal / hard pools of problems by observed pass rate.

After each finished group the problem moves by the group's mean reward: at or above
`easy_threshold` to the easy pool, at or below `hard_threshold` to the hard pool, otherwise to
the normal pool (a threshold of None disables that pool). `sample()` draws a problem from the
easy pool with probability `easy_fraction`, from the hard pool with `hard_fraction`, and from
the normal pool otherwise; an empty pool hands its draw to the normal pool (then to any pool
that has problems). The whole state (pools in order, per-problem statistics, counters and the
random generator) round-trips through `state_dict()` / `load_state_dict()` as plain JSON.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verifiers.errors import ConfigError
from verifiers.training.advantages import has_zero_variance

POOLS = ("easy", "normal", "hard")
STATE_VERSION = 1


@dataclass(slots=True)
class ProblemStats:
    """What has been observed for one problem."""

    groups: int = 0
    rollouts: int = 0
    reward_sum: float = 0.0
    last_mean: float | None = None

    @property
    def pass_rate(self) -> float | None:
        return self.reward_sum / self.rollouts if self.rollouts else None


class _Pool:
    """A list with O(1) add, remove and uniform draw (order kept stable for checkpoints)."""

    __slots__ = ("items", "where")

    def __init__(self, items: Iterable[int] = ()) -> None:
        self.items: list[int] = []
        self.where: dict[int, int] = {}
        for item in items:
            self.add(item)

    def __len__(self) -> int:
        return len(self.items)

    def __contains__(self, item: int) -> bool:
        return item in self.where

    def add(self, item: int) -> None:
        if item not in self.where:
            self.where[item] = len(self.items)
            self.items.append(item)

    def remove(self, item: int) -> None:
        i = self.where.pop(item)
        last = self.items.pop()
        if i < len(self.items):
            self.items[i] = last
            self.where[last] = i

    def draw(self, rng: random.Random) -> int:
        return self.items[rng.randrange(len(self.items))]


class DifficultyFilter:
    """Samples problems from difficulty pools and learns their difficulty from finished groups.

    `examples` are dataset rows with a unique integer `example_id` (missing ids are numbered
    in order). Use it as the `examples` of a `RolloutStream`, or call `sample()` and
    `observe(example_id, rewards)` yourself.
    """

    def __init__(
        self,
        examples: Iterable[Mapping[str, Any]],
        *,
        easy_threshold: float | None = 1.0,
        hard_threshold: float | None = 0.0,
        easy_fraction: float = 0.0,
        hard_fraction: float = 0.0,
        seed: int = 0,
    ) -> None:
        if easy_fraction < 0 or hard_fraction < 0 or easy_fraction + hard_fraction > 1:
            raise ConfigError(
                "easy_fraction and hard_fraction must be >= 0 and sum to at most 1, got "
                f"{easy_fraction} and {hard_fraction}"
            )
        if (
            easy_threshold is not None
            and hard_threshold is not None
            and hard_threshold >= easy_threshold
        ):
            raise ConfigError(
                f"hard_threshold ({hard_threshold}) must be below easy_threshold ({easy_threshold})"
            )
        self.easy_threshold = easy_threshold
        self.hard_threshold = hard_threshold
        self.easy_fraction = easy_fraction
        self.hard_fraction = hard_fraction
        self.examples: dict[int, dict[str, Any]] = {}
        for i, row in enumerate(examples):
            example_id = int(row.get("example_id", i))
            if example_id in self.examples:
                raise ConfigError(f"duplicate example_id {example_id} in the filter's examples")
            self.examples[example_id] = {**row, "example_id": example_id}
        if not self.examples:
            raise ConfigError("DifficultyFilter needs at least one example")
        self.pools: dict[str, _Pool] = {name: _Pool() for name in POOLS}
        self.pools["normal"] = _Pool(self.examples)
        self.stats: dict[int, ProblemStats] = {}
        self.counters: dict[str, int] = {
            "sampled": 0,
            "groups": 0,
            "zero_variance_groups": 0,
            "filtered_easy": 0,
            "filtered_hard": 0,
            "moved_to_easy": 0,
            "moved_to_hard": 0,
            "moved_to_normal": 0,
        }
        self.rng = random.Random(seed)

    # -- sampling ------------------------------------------------------------------------
    def pool_of(self, example_id: int) -> str:
        for name, pool in self.pools.items():
            if example_id in pool:
                return name
        raise ConfigError(f"unknown example_id {example_id}")

    def sample(self) -> dict[str, Any]:
        """One problem row, drawn from the pools by the configured fractions."""
        u = self.rng.random()
        if u < self.easy_fraction:
            wanted = "easy"
        elif u < self.easy_fraction + self.hard_fraction:
            wanted = "hard"
        else:
            wanted = "normal"
        for name in (wanted, "normal", *POOLS):
            pool = self.pools[name]
            if len(pool):
                self.counters["sampled"] += 1
                return self.examples[pool.draw(self.rng)]
        raise ConfigError("every difficulty pool is empty")  # unreachable: examples >= 1

    def __iter__(self) -> DifficultyFilter:
        return self

    def __next__(self) -> dict[str, Any]:
        return self.sample()

    # -- learning --------------------------------------------------------------------------
    def observe(self, example_id: int, rewards: Sequence[float]) -> bool:
        """Record a finished group's rewards (masked rollouts left out) and move the problem.

        Returns True when the group belongs in a training batch, False when its rewards have
        zero variance (it is counted, and still moves the problem)."""
        if example_id not in self.examples:
            raise ConfigError(f"unknown example_id {example_id}")
        rewards = list(rewards)
        self.counters["groups"] += 1
        if not rewards:
            return False
        mean = sum(rewards) / len(rewards)
        stats = self.stats.setdefault(example_id, ProblemStats())
        stats.groups += 1
        stats.rollouts += len(rewards)
        stats.reward_sum += sum(rewards)
        stats.last_mean = mean
        target = "normal"
        if self.easy_threshold is not None and mean >= self.easy_threshold:
            target = "easy"
        elif self.hard_threshold is not None and mean <= self.hard_threshold:
            target = "hard"
        current = self.pool_of(example_id)
        if target != current:
            self.pools[current].remove(example_id)
            self.pools[target].add(example_id)
            self.counters[f"moved_to_{target}"] += 1
        if has_zero_variance(rewards):
            self.counters["zero_variance_groups"] += 1
            if target in ("easy", "hard"):
                self.counters[f"filtered_{target}"] += 1
            return False
        return True

    def metrics(self) -> dict[str, float]:
        """Pool sizes and counters, flat, for a trainer's logger."""
        out: dict[str, float] = {f"pool/{n}": float(len(p)) for n, p in self.pools.items()}
        out.update({k: float(v) for k, v in self.counters.items()})
        return out

    # -- checkpoints -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly where this filter is (JSON-serialisable)."""
        version, internal, gauss = self.rng.getstate()
        return {
            "version": STATE_VERSION,
            "pools": {name: list(pool.items) for name, pool in self.pools.items()},
            "stats": [
                [eid, s.groups, s.rollouts, s.reward_sum, s.last_mean]
                for eid, s in self.stats.items()
            ],
            "counters": dict(self.counters),
            "rng": [version, list(internal), gauss],
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore a `state_dict()`. Problems it does not know start in the normal pool;
        problems no longer in `examples` are dropped."""
        if state.get("version") != STATE_VERSION:
            raise ConfigError(
                f"unsupported difficulty filter state version {state.get('version')!r}"
            )
        placed: set[int] = set()
        pools: dict[str, _Pool] = {}
        for name in POOLS:
            ids = [int(i) for i in state["pools"].get(name, ()) if int(i) in self.examples]
            pools[name] = _Pool(i for i in ids if i not in placed)
            placed.update(ids)
        for example_id in self.examples:
            if example_id not in placed:
                pools["normal"].add(example_id)
        self.pools = pools
        self.stats = {
            int(eid): ProblemStats(int(g), int(n), float(total), last)
            for eid, g, n, total, last in state.get("stats", ())
            if int(eid) in self.examples
        }
        self.counters.update({k: int(v) for k, v in state.get("counters", {}).items()})
        version, internal, gauss = state["rng"]
        self.rng.setstate((int(version), tuple(int(x) for x in internal), gauss))
