"""Mixture: an `EnvGroup` whose dataset is drawn by sampling ratios and difficulty pools.

`vf.EnvGroup` concatenates its children's rows, so each environment's share is its row count.
A `Mixture` routes, scores and records exactly like an `EnvGroup`, but its dataset is a seeded
draw: ``weights`` fix each environment's share, and per environment a `PoolSpec` splits its
rows by pass rate (the rate a reference model reached on the row, ``info["avg_reward"]`` or a
named column) into easy / normal / hard pools, drops always-solved or never-solved rows, and
fixes each pool's share of that environment's draws.

Counts are exact, not sampled: N draws give each environment its largest-remainder share of
``N * weight / sum(weights)``, and each pool its share of the environment's count; only which
rows fill those counts, and their order, come from the seed. So the same seed and inputs give
the same dataset, row for row. A pool with fewer rows than its count repeats rows (each row
once per pass, reshuffled every pass).

`vf.load_mixture(path)` builds one from a TOML file (see docs/training.md, "Mixtures"),
`read_mixture_config` here checking the file and `verifiers.loading` loading its environments;
`vf.load_environment("mix.toml")` and `vf-eval mix.toml` accept such a file too.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from verifiers.dataset import parse_info
from verifiers.envs.env_group import EnvGroup
from verifiers.envs.environment import Environment
from verifiers.errors import ConfigError
from verifiers.utils.config_files import read_toml, reject_unknown_fields

POOLS = ("easy", "normal", "hard")
RATE_INFO_KEY = "avg_reward"  # where prepare_qa_dataset keeps a row's pass rate


@dataclass(frozen=True)
class PoolSpec:
    """How one environment's rows are filtered and split by pass rate.

    A row's pass rate is ``info["avg_reward"]``, else its ``difficulty_key`` column or info
    key. ``drop_solved`` drops rows at rate 1.0 (the INTELLECT-3 report's "always solved"),
    ``drop_unsolved`` those at 0.0; ``min_pass_rate``/``max_pass_rate`` keep ``[min, max]``.
    Rows at or above ``easy_threshold`` are easy, at or below ``hard_threshold`` hard, the rest
    normal (None disables a pool). ``easy_fraction``/``hard_fraction`` of the environment's
    draws come from those pools, the rest from normal; an empty pool hands its share to
    normal (then to any non-empty pool). Unrated rows (no rate) pass every filter and are
    normal, unless ``unrated="drop"`` (dropped) or ``"error"`` (a `ConfigError`).
    """

    drop_solved: bool = False
    drop_unsolved: bool = False
    min_pass_rate: float = 0.0
    max_pass_rate: float = 1.0
    easy_threshold: float | None = None
    hard_threshold: float | None = None
    easy_fraction: float = 0.0
    hard_fraction: float = 0.0
    difficulty_key: str | None = None
    unrated: str = "normal"

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_pass_rate <= self.max_pass_rate <= 1.0:
            raise ConfigError(
                f"need 0 <= min_pass_rate <= max_pass_rate <= 1, got "
                f"{self.min_pass_rate}, {self.max_pass_rate}"
            )
        for name in ("easy_fraction", "hard_fraction"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.easy_fraction + self.hard_fraction > 1.0:
            raise ConfigError("easy_fraction + hard_fraction must be at most 1")
        if self.easy_fraction and self.easy_threshold is None:
            raise ConfigError("easy_fraction needs an easy_threshold")
        if self.hard_fraction and self.hard_threshold is None:
            raise ConfigError("hard_fraction needs a hard_threshold")
        if (
            self.easy_threshold is not None
            and self.hard_threshold is not None
            and self.hard_threshold >= self.easy_threshold
        ):
            raise ConfigError("hard_threshold must be below easy_threshold")
        if self.unrated not in ("normal", "drop", "error"):
            raise ConfigError(f"unrated must be 'normal', 'drop' or 'error', got {self.unrated!r}")

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any], where: str) -> PoolSpec:
        reject_unknown_fields(table, (f.name for f in fields(cls)), where, "pool")
        return cls(**table)

    def rate(self, row: Mapping[str, Any]) -> float | None:
        info = parse_info(row.get("info"))
        value = info.get(RATE_INFO_KEY)
        if value is None and self.difficulty_key:
            value = row.get(self.difficulty_key, info.get(self.difficulty_key))
        if value is None:
            return None
        try:
            rate = float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"pass rate {value!r} is not a number") from None
        return None if math.isnan(rate) else rate

    def pool_of(self, rate: float | None) -> str | None:
        """The row's pool, or None when the filters drop it."""
        if rate is None:
            return None if self.unrated == "drop" else "normal"
        if (self.drop_solved and rate >= 1.0) or (self.drop_unsolved and rate <= 0.0):
            return None
        if not self.min_pass_rate <= rate <= self.max_pass_rate:
            return None
        if self.easy_threshold is not None and rate >= self.easy_threshold:
            return "easy"
        if self.hard_threshold is not None and rate <= self.hard_threshold:
            return "hard"
        return "normal"


def largest_remainder(total: int, weights: Sequence[float]) -> list[int]:
    """``total`` split in proportion to ``weights``, in integers summing to ``total``
    (ties go to the earlier entry)."""
    wsum = float(sum(weights))
    exact = [total * w / wsum for w in weights]
    counts = [math.floor(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return counts


def _cycle(items: Sequence[int], rng: random.Random) -> Iterator[int]:
    """``items`` reshuffled each pass, forever."""
    while True:
        order = list(items)
        rng.shuffle(order)
        yield from order


class Mixture(EnvGroup):
    """Several environments mixed by ``weights`` and difficulty pools (see module docs).

    ``envs`` and ``env_names`` are `EnvGroup`'s (routing, scoring and records are the same).
    ``seed`` picks which rows fill each share and their order (never the shares themselves).
    ``weights``: one per environment (any positive scale; default equal). ``pools``: one
    `PoolSpec` for all, or a mapping from environment name to its spec (missing: no filter).
    ``num_examples``: rows in the drawn dataset (default: all rows the filters keep, summed
    over environments). A mixture has no eval split of its own: `vf-eval` evaluates the drawn
    mix (its first ``-n`` rows keep the ratios closely, the order being a seeded shuffle).
    ``pool_of_example`` gives each drawn row's pool, by ``example_id``.
    """

    def __init__(
        self,
        envs: Sequence[Environment],
        env_names: Sequence[str] | None = None,
        *,
        weights: Sequence[float] | None = None,
        pools: PoolSpec | Mapping[str, PoolSpec] | None = None,
        num_examples: int | None = None,
        seed: int = 0,
        **kwargs: Any,
    ) -> None:
        names = list(env_names or [f"env_{i}" for i in range(len(envs))])
        weights = list(weights) if weights is not None else [1.0] * len(envs)
        if len(weights) != len(envs):
            raise ConfigError(f"Mixture: {len(envs)} environments but {len(weights)} weights")
        if any(not (isinstance(w, int | float) and w > 0 and math.isfinite(w)) for w in weights):
            raise ConfigError(f"Mixture weights must be positive numbers, got {weights}")
        if num_examples is not None and num_examples < 1:
            raise ConfigError(f"Mixture num_examples must be at least 1, got {num_examples}")
        if isinstance(pools, Mapping):
            extra = sorted(set(pools) - set(names))
            if extra:
                raise ConfigError(f"Mixture pools name unknown environments: {extra}")
            specs = [pools.get(n) or PoolSpec() for n in names]
        else:
            specs = [pools or PoolSpec()] * len(envs)
        self.weights = [float(w) for w in weights]
        self.pool_specs = dict(zip(names, specs, strict=False))
        self.num_examples = num_examples
        self.seed = seed
        self.pool_sizes: dict[str, dict[str, dict[str, int]]] = {}
        self.pool_of_example: dict[str, list[str]] = {}
        self._split = "dataset"
        self._names = names
        super().__init__(envs, env_names=names, **kwargs)

    def _combine(self, datasets: list[Any]) -> Any:
        split, self._split = self._split, "eval_dataset"  # EnvGroup combines train, then eval
        if split == "eval_dataset" or all(ds is None for ds in datasets):
            # no eval split of its own: evaluating a mixture evaluates the drawn mix
            return None
        # each environment's rows by pool, in row order
        pooled: list[dict[str, list[int]]] = []
        for name, spec, ds in zip(self._names, self.pool_specs.values(), datasets, strict=True):
            by_pool: dict[str, list[int]] = {p: [] for p in POOLS}
            for i, row in enumerate(ds.to_list() if ds is not None else []):
                try:
                    rate = spec.rate(row)
                except ConfigError as e:
                    raise ConfigError(f"Mixture: {name} {split} row {i}: {e}") from None
                if rate is None and spec.unrated == "error":
                    raise ConfigError(
                        f"Mixture: {name} {split} row {i} has no pass rate "
                        f"(info['avg_reward'] or {spec.difficulty_key!r})"
                    )
                pool = spec.pool_of(rate)
                if pool is not None:
                    by_pool[pool].append(i)
            if not any(by_pool.values()):
                raise ConfigError(
                    f"Mixture: no {split} row of {name} passes its pool filters ({spec})"
                )
            pooled.append(by_pool)
        self.pool_sizes[split] = {
            n: {p: len(ix) for p, ix in bp.items()}
            for n, bp in zip(self._names, pooled, strict=True)
        }
        total = self.num_examples or sum(len(ix) for bp in pooled for ix in bp.values())
        draws = self.draw(pooled, total)
        selected: list[list[int]] = [[] for _ in datasets]
        order: list[tuple[int, int]] = []  # (environment, position among its selected rows)
        for k, row_index, _ in draws:
            order.append((k, len(selected[k])))
            selected[k].append(row_index)
        parts = [
            ds.select(sel) if ds is not None and sel else None
            for ds, sel in zip(datasets, selected, strict=True)
        ]
        combined = super()._combine(parts)
        offsets, at = [], 0
        for sel in selected:
            offsets.append(at)
            at += len(sel)
        combined = combined.select([offsets[k] + j for k, j in order])
        combined = combined.remove_columns(["example_id"]).add_column(
            "example_id", list(range(len(order)))
        )
        self.pool_of_example[split] = [pool for _, _, pool in draws]
        return combined

    def draw(
        self, pooled: Sequence[Mapping[str, Sequence[int]]], total: int
    ) -> list[tuple[int, int, str]]:
        """``total`` draws ``(environment index, row index, pool)`` in the seeded order."""
        env_counts = largest_remainder(total, self.weights)
        draws_by_env: list[list[tuple[int, int, str]]] = []
        for k, (name, by_pool) in enumerate(zip(self._names, pooled, strict=True)):
            spec = self.pool_specs[name]
            counts = dict(
                zip(
                    POOLS,
                    largest_remainder(
                        env_counts[k],
                        [spec.easy_fraction, 1.0 - spec.easy_fraction - spec.hard_fraction,
                         spec.hard_fraction],
                    )
                    if env_counts[k]
                    else [0, 0, 0],
                    strict=True,
                )
            )  # fmt: skip
            for pool in ("easy", "hard"):  # an empty pool's share goes to normal
                if counts[pool] and not by_pool[pool]:
                    counts["normal"] += counts[pool]
                    counts[pool] = 0
            if counts["normal"] and not by_pool["normal"]:  # then to any pool with rows
                spare = counts["normal"]
                counts["normal"] = 0
                counts[next(p for p in POOLS if by_pool[p])] += spare
            picks: list[tuple[int, int, str]] = []
            for pool in POOLS:
                rng = random.Random(f"{self.seed}:{name}:{pool}")
                source = _cycle(by_pool[pool], rng) if counts[pool] else iter(())
                picks.extend((k, next(source), pool) for _ in range(counts[pool]))
            random.Random(f"{self.seed}:{name}:order").shuffle(picks)
            draws_by_env.append(picks)
        # interleave: the environments' slots in a seeded order, each filled in turn
        slots = [k for k, n in enumerate(env_counts) for _ in range(n)]
        random.Random(f"{self.seed}:slots").shuffle(slots)
        cursors = [iter(d) for d in draws_by_env]
        return [next(cursors[k]) for k in slots]

    def epochs(self, start: int = 0) -> Iterator[dict[str, Any]]:
        """The training rows, forever: epoch ``e`` is the mixture redrawn with seed
        ``seed + e`` (same counts, other rows and order) — endless `examples` for
        `vf.RolloutStream`. Example ids stay unique across epochs."""
        epoch = start
        while True:
            rows = self._redraw(self.seed + epoch)
            base = epoch * len(rows)
            for row in rows:
                yield {**row, "example_id": base + row["example_id"]}
            epoch += 1

    def _redraw(self, seed: int) -> list[dict[str, Any]]:
        if seed == self.seed:
            return self.get_dataset().to_list()
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.seed, twin._split = seed, "dataset"
        twin.pool_sizes, twin.pool_of_example = {}, {}
        return twin._combine([e.build_dataset() for e in self.envs]).to_list()


# -- configuration files ---------------------------------------------------------------------
MIXTURE_FIELDS = frozenset({"name", "seed", "num_examples", "env", "pools"})
SOURCE_FIELDS = frozenset({"id", "env_id", "name", "weight", "args", "pools"})


@dataclass(frozen=True)
class MixtureSource:
    """One ``[[mixture.env]]`` table: the environment id, its ``args``, its ``weight``, the
    name it goes by in the mixture and its pool spec (the file's defaults under its own)."""

    env_id: str
    name: str
    weight: Any
    args: dict[str, Any]
    pools: PoolSpec


@dataclass(frozen=True)
class MixtureConfig:
    """A checked ``[mixture]`` table; `verifiers.loading.load_mixture` loads its sources."""

    name: str
    sources: list[MixtureSource]
    seed: int
    num_examples: int | None


def read_mixture_config(config: str | Path | Mapping[str, Any]) -> MixtureConfig:
    """The ``[mixture]`` table of a TOML file (or of an already parsed mapping), checked: an
    unknown field, a source without an id or weight, or a bad pool spec is a `ConfigError`
    naming the file and the table."""
    where = "mixture"
    if isinstance(config, Mapping):
        table = dict(config.get("mixture", config))
    else:
        path = Path(config)
        where = str(path)
        data = read_toml(path, "mixture config")
        if not isinstance(data.get("mixture"), Mapping):
            raise ConfigError(f"{path} has no [mixture] table")
        table = dict(data["mixture"])
    reject_unknown_fields(table, MIXTURE_FIELDS, where, "[mixture]")
    sources = table.get("env")
    if not isinstance(sources, list) or not sources:
        raise ConfigError(f"{where}: needs at least one [[mixture.env]] table")
    default_pools = dict(table.get("pools") or {})
    try:
        seed = int(table.get("seed", 0))
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: seed must be an integer, got {table['seed']!r}") from None
    return MixtureConfig(
        name=str(table.get("name") or where),
        sources=[
            _source(source, f"{where}: [[mixture.env]] #{i + 1}", default_pools)
            for i, source in enumerate(sources)
        ],
        seed=seed,
        num_examples=table.get("num_examples"),
    )


def _source(source: Any, section: str, default_pools: dict[str, Any]) -> MixtureSource:
    if not isinstance(source, Mapping):
        raise ConfigError(f"{section} must be a table")
    bad = sorted(set(source) - SOURCE_FIELDS)
    if bad:
        raise ConfigError(
            f"{section}: unknown field(s) {', '.join(bad)}; valid: "
            f"{', '.join(sorted(SOURCE_FIELDS))}"
        )
    env_id = source.get("id", source.get("env_id"))
    if not isinstance(env_id, str) or not env_id:
        raise ConfigError(f"{section} needs an id")
    if "weight" not in source:
        raise ConfigError(f"{section} ({env_id}) needs a weight")
    return MixtureSource(
        env_id=env_id,
        name=source.get("name", env_id),
        weight=source["weight"],
        args=dict(source.get("args") or {}),
        pools=PoolSpec.from_mapping({**default_pools, **dict(source.get("pools") or {})}, section),
    )


__all__ = [
    "Mixture",
    "MixtureConfig",
    "MixtureSource",
    "PoolSpec",
    "largest_remainder",
    "read_mixture_config",
]
