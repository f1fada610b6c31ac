"""EnvGroup: several environments behind one, each row routed to the environment it came from."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from verifiers.client import Client
from verifiers.dataset import parse_info
from verifiers.envs.environment import Environment
from verifiers.errors import ConfigError
from verifiers.rubrics.rubric import Rubric, Score
from verifiers.state import State
from verifiers.types import RolloutOutput, SamplingArgs


class EnvGroup(Environment):
    """A mixture of environments. Rows of each child's dataset are tagged with
    `info["env_id"] = name` (a list for nested groups); rollouts, scoring and output records
    are delegated to the child the row belongs to. Rows that carry only a legacy string `task`
    naming a child are routed by it."""

    def __init__(
        self,
        envs: Sequence[Environment],
        env_names: Sequence[str] | None = None,
        map_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not envs:
            raise ConfigError("EnvGroup needs at least one environment")
        names = list(env_names) if env_names is not None else [f"env_{i}" for i in range(len(envs))]
        if len(names) != len(envs):
            raise ConfigError(f"EnvGroup got {len(envs)} environments but {len(names)} names")
        if len(set(names)) != len(names):
            raise ConfigError(f"EnvGroup env_names must be unique, got {names}")
        self.envs = list(envs)
        self.env_names = names
        self.env_map = dict(zip(names, self.envs, strict=True))
        train = self._combine(lambda e: e.build_dataset())
        evals = self._combine(lambda e: e.build_eval_dataset() or e.build_dataset())
        super().__init__(
            dataset=train,
            eval_dataset=evals,
            rubric=EnvGroupRubric(self),
            map_kwargs=map_kwargs,
            **kwargs,
        )

    def _combine(self, get: Any) -> Any:
        from datasets import Dataset

        rows: list[dict[str, Any]] = []
        for name, env in zip(self.env_names, self.envs, strict=True):
            ds = get(env)
            if ds is None:
                continue
            for row in ds.to_list():
                info = parse_info(row.get("info"))
                inner = info.get("env_id")
                route = [name] + (inner if isinstance(inner, list) else [inner] if inner else [])
                info["env_id"] = route if len(route) > 1 else name
                # JSON-encoded so rows of different environments share one Arrow schema.
                row["info"] = orjson.dumps(info).decode()
                row.pop("example_id", None)
                rows.append(row)
        if not rows:
            return None
        columns: dict[str, None] = {}
        for row in rows:
            columns.update(dict.fromkeys(row))
        data = {c: [row.get(c) for row in rows] for c in columns}
        data["example_id"] = list(range(len(rows)))
        return Dataset.from_dict(data)

    # -- routing -----------------------------------------------------------------------------
    def route(self, input: dict[str, Any]) -> tuple[Environment, dict[str, Any]]:
        """The child environment for `input`, and the input as that child expects it."""
        info = parse_info(input.get("info"))
        target = info.get("env_id")
        if target is None and isinstance(input.get("task"), str):
            target = input["task"]  # the dict era routed on a string `task` column
        if target is None and len(self.envs) == 1:
            return self.envs[0], input
        path = target if isinstance(target, list) else [target]
        head, rest = (path[0] if path else None), path[1:]
        env = self.env_map.get(head) if isinstance(head, str) else None
        if env is None:
            raise ConfigError(
                f"row routed to unknown environment {head!r}; this group has "
                f"{', '.join(self.env_names)}"
            )
        info = dict(info)
        if rest:
            info["env_id"] = rest if len(rest) > 1 else rest[0]
        else:
            info.pop("env_id", None)
        return env, {**input, "info": info}

    def get_env_for_state(self, state: State) -> Environment | None:
        return state.get("_env")

    async def rollout(
        self,
        input: dict[str, Any],
        client: Client,
        model: str,
        sampling_args: SamplingArgs | None = None,
    ) -> State:
        env, child_input = self.route(input)
        state = await env.rollout(child_input, client, model, sampling_args)
        state.setdefault("_env", env)  # a nested group already recorded the leaf environment
        name = next(n for n, e in self.env_map.items() if e is env)
        state["env_route"] = [name, *state.get("env_route", ())]
        return state

    async def score_states(self, states: list[State], group: bool) -> None:
        env = states[0].get("_env") if states else None
        if env is None:  # the rollout failed before routing: nothing to score with
            for s in states:
                s["reward"] = float("nan")
            return
        await env.score_states(states, group)

    def state_to_output(
        self, state: State, state_columns: list[str] | None = None
    ) -> RolloutOutput:
        env = state.pop("_env", None)
        out = (env or super()).state_to_output(state, state_columns)  # type: ignore[union-attr]
        route = state.get("env_route") or []
        out["info"] = {
            **(out.get("info") or {}),
            "env_id": route[0] if len(route) == 1 else route or None,
        }
        metrics = dict(out.get("metrics") or {})
        for name in self.metric_names():
            metrics.setdefault(name, 0.0)  # every row carries every metric name
        out["metrics"] = metrics
        return out

    def metric_names(self) -> list[str]:
        names: dict[str, None] = {}
        for env in self.envs:
            names.update(dict.fromkeys(env.metric_names()))
        return list(names)

    def set_max_seq_len(self, max_seq_len: int | None) -> None:
        super().set_max_seq_len(max_seq_len)
        for env in self.envs:
            env.set_max_seq_len(max_seq_len)

    def set_score_rollouts(self, score_rollouts: bool) -> None:
        super().set_score_rollouts(score_rollouts)
        for env in self.envs:
            env.set_score_rollouts(score_rollouts)

    async def teardown(self) -> None:
        for env in self.envs:
            await env.teardown()
        await super().teardown()


class EnvGroupRubric(Rubric):
    """Exposes the children's reward functions; scoring itself goes to the routed child."""

    def __init__(self, group: EnvGroup) -> None:
        super().__init__()
        self.group = group

    def get_reward_func_names(self) -> list[str]:
        names: dict[str, None] = {}
        for env in self.group.envs:
            names.update(dict.fromkeys(env.rubric.get_reward_func_names()))
        return list(names)

    @property
    def has_group_funcs(self) -> bool:
        return any(env.rubric.has_group_funcs for env in self.group.envs)

    def check_parameters(self, input_columns: Iterable[str]) -> None:
        cols = list(input_columns)
        for env in self.group.envs:
            env.rubric.check_parameters(cols)

    async def compute_scores(self, states: list[dict[str, Any]]) -> list[Score]:
        env = states[0].get("_env") if states else None
        if env is None:
            return [Score(float("nan")) for _ in states]
        return await env.rubric.compute_scores(states)
