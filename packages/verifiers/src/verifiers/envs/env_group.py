"""EnvGroup: several environments behind one, each row routed to the environment it came from.

Rows of the group's datasets carry the route twice, as classic environments of both eras
expect: ``info["env_id"]`` (upstream 0.1.14 on; a list of names through nested groups) and a
``task`` column holding the child's name (upstream 0.1.2-0.1.13 routed on it).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from verifiers.client import Client
from verifiers.dataset import parse_info
from verifiers.envs.environment import Environment
from verifiers.errors import ConfigError
from verifiers.rubrics.rubric import Rubric, Score, set_advantages
from verifiers.state import State, record_error
from verifiers.types import RolloutOutput, SamplingArgs

logger = logging.getLogger("verifiers")

ENV_GROUP_INFO_KEY = "env_id"


def normalize_route(value: Any) -> tuple[str, ...]:
    """``info["env_id"]`` as a tuple of names: a name, a list of names (nested), or none."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value)
    raise ConfigError(
        f"EnvGroup info['env_id'] must be a name or a list of names, got {type(value).__name__}"
    )


def route_value(route: Sequence[str]) -> str | list[str] | None:
    """The value stored in ``info["env_id"]``: a plain name unless the route is nested."""
    if not route:
        return None
    return route[0] if len(route) == 1 else list(route)


class EnvGroup(Environment):
    """A mixture of environments; rollouts, scoring and output records of a row are the work
    of the child environment the row belongs to."""

    def __init__(
        self,
        envs: Sequence[Environment],
        env_names: Sequence[str] | None = None,
        map_kwargs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not envs:
            raise ConfigError("EnvGroup requires at least one environment")
        names = list(env_names or [f"env_{i}" for i in range(len(envs))])
        if len(names) != len(envs):
            raise ConfigError(
                "Number of env_names must match number of envs "
                f"(got {len(envs)} environments but {len(names)} names)"
            )
        if len(set(names)) != len(names):
            # Upstream silently kept the last of two same-named environments.
            raise ConfigError(f"EnvGroup env_names must be unique, got {names}")
        self.envs = list(envs)
        self.env_names = names
        self.env_map = dict(zip(names, self.envs, strict=True))
        train = self._combine([e.build_dataset() for e in self.envs])
        evals = self._combine([e.build_eval_dataset() for e in self.envs])
        kwargs.pop("tool_defs", None)  # tools are per child, set per rollout
        kwargs.pop("oai_tools", None)
        super().__init__(
            dataset=train,
            eval_dataset=evals,
            rubric=EnvGroupRubric(self.env_map),
            map_kwargs=map_kwargs,
            **kwargs,
        )
        logger.info("Initialized EnvGroup with %d environments: %s", len(names), names)

    # -- datasets -----------------------------------------------------------------------------
    def _combine(self, datasets: list[Any]) -> Any:
        """The children's rows in order, routed (``info["env_id"]``, ``task``) and renumbered."""
        from datasets import Dataset

        rows: list[dict[str, Any]] = []
        for name, ds in zip(self.env_names, datasets, strict=True):
            if ds is None:
                continue
            for row in ds.to_list():
                info = dict(parse_info(row.get("info")))
                info[ENV_GROUP_INFO_KEY] = (name, *normalize_route(info.get(ENV_GROUP_INFO_KEY)))
                row["info"] = info
                row["task"] = name  # the 0.1.x routing column: the child's name
                row.pop(ENV_GROUP_INFO_KEY, None)  # a top-level env_id column would shadow it
                row.pop("example_id", None)
                rows.append(row)
        if not rows:
            return None
        nested = any(len(r["info"][ENV_GROUP_INFO_KEY]) > 1 for r in rows)
        for r in rows:
            route = r["info"][ENV_GROUP_INFO_KEY]
            # Arrow cannot hold names and lists in one field: with nested groups every route
            # is a list (upstream's concatenation fails on such a mixture).
            r["info"][ENV_GROUP_INFO_KEY] = list(route) if nested else route_value(route)
        columns: dict[str, None] = {}
        for r in rows:
            columns.update(dict.fromkeys(r))
        data = {c: [r.get(c) for r in rows] for c in columns}
        data["example_id"] = list(range(len(rows)))
        try:
            return Dataset.from_dict(data)
        except Exception as e:  # pyarrow: the children's info dicts do not share one schema
            logger.debug("EnvGroup: info as JSON strings (%s)", e)
        data["info"] = [orjson.dumps(r["info"]).decode() for r in rows]
        try:
            return Dataset.from_dict(data)
        except Exception as e:
            raise ConfigError(
                f"EnvGroup: the rows of {', '.join(self.env_names)} do not fit one table "
                f"(a column holds different types in different environments): {e}"
            ) from None

    # -- routing -----------------------------------------------------------------------------
    def route(self, input: Mapping[str, Any]) -> tuple[Environment, dict[str, Any]]:
        """The child environment for ``input`` and the input as that child expects it.
        Raises `ConfigError` for a row that names no environment of this group."""
        env, child, _ = self._route(input)
        return env, child

    def _route(self, input: Mapping[str, Any]) -> tuple[Environment, dict[str, Any], str]:
        info = dict(parse_info(input.get("info")))
        path = normalize_route(info.get(ENV_GROUP_INFO_KEY))
        task = input.get("task")
        if not path and isinstance(task, str) and (task in self.env_map or len(self.envs) > 1):
            if task not in self.env_map:
                raise ConfigError(
                    f"No environment found for task={task!r}; this group has "
                    f"{', '.join(self.env_names)}"
                )
            path = (task,)  # rows of the 0.1.x era carry only the `task` column
        if not path:
            if len(self.envs) != 1:
                raise ConfigError(
                    "EnvGroup input is missing info['env_id']; use rows from "
                    "EnvGroup.get_dataset()/get_eval_dataset() or give that routing value"
                )
            path = (self.env_names[0],)
        head, rest = path[0], path[1:]
        env = self.get_env_for_name(head)
        if rest:
            info[ENV_GROUP_INFO_KEY] = route_value(rest)
        else:
            info.pop(ENV_GROUP_INFO_KEY, None)
        child = {**input, "info": info}
        child.setdefault("task", head)
        return env, child, head

    def get_env_for_name(self, name: str) -> Environment:
        env = self.env_map.get(name)
        if env is None:
            raise ConfigError(
                f"No environment found for info['env_id']={name!r}; this group has "
                f"{', '.join(self.env_names)}"
            )
        return env

    def get_env_for_task(self, task: str) -> Environment:
        """The child named ``task`` (0.1.x); an unknown name is an error, where upstream
        silently returned the first environment."""
        return self.get_env_for_name(task)

    def get_env_for_state(self, state: State) -> Environment | None:
        return state.get("_env")

    async def init_state(
        self,
        input: dict[str, Any],
        client: Client,
        model: str,
        sampling_args: SamplingArgs | None = None,
    ) -> State:
        """The routed child's initial state (upstream v0.1.8 delegated init_state too)."""
        env, child_input, _ = self._route(input)
        state = await env.init_state(child_input, client, model, sampling_args)
        state.setdefault("_env", env)  # the leaf environment, for setup_state and scoring
        return state

    async def setup_state(self, state: State, **kwargs: Any) -> State | None:
        """The routed child's `setup_state` (upstream v0.1.8), for a state made by
        `init_state`; a child without one leaves the state as it is."""
        env = state.get("_env") or self._route(state.get("input") or state)[0]
        setup = getattr(env, "setup_state", None)
        return await setup(state, **kwargs) if setup is not None else state

    async def rollout(
        self,
        input: dict[str, Any],
        client: Client,
        model: str,
        sampling_args: SamplingArgs | None = None,
    ) -> State:
        env, child_input, name = self._route(input)
        state = await env.rollout(child_input, client, model, sampling_args)
        state.setdefault("_env", env)  # a nested group already recorded the leaf environment
        route = [name, *state.get("env_route", ())]
        state["env_route"] = route
        # As upstream: the rollout's info carries the full route again after the child ran.
        state["info"] = {**(state.get("info") or {}), ENV_GROUP_INFO_KEY: route_value(route)}
        return state

    # -- scoring and records -------------------------------------------------------------------
    def _env_of(self, state: State) -> Environment | None:
        env = state.get("_env")
        if env is None:
            try:  # the rollout failed after routing: its own environment still scores it
                env, _ = self.route(state.get("input") or {})
            except ConfigError:
                return None
        return env

    async def score_states(self, states: list[State], group: bool) -> None:
        """Each state is scored by its own environment (its rubric, cleanup and
        `after_scoring`); a state no environment claims gets reward NaN."""
        by_env: dict[int, tuple[Environment, list[State]]] = {}
        for s in states:
            env = self._env_of(s)
            if env is None:  # routing failed: the error is already recorded on the rollout
                s["reward"] = math.nan
                continue
            by_env.setdefault(id(env), (env, []))[1].append(s)
        # Rows keep their own environment's metrics only: upstream 0.1.10-0.3.1 hand
        # run_rollout/run_group straight to the child (EnvGroupRubric's 0.0 for the other
        # environments' metric names applies where it is called directly, as in v0.1.8).
        for env, members in by_env.values():
            await env.score_states(members, group)

    def state_to_output(
        self, state: State, state_columns: list[str] | None = None
    ) -> RolloutOutput:
        env = state.pop("_env", None)
        out = (env or super()).state_to_output(state, state_columns)  # type: ignore[union-attr]
        route = state.get("env_route") or self._requested_route(state)
        out["info"] = {**(out.get("info") or {}), ENV_GROUP_INFO_KEY: route_value(route)}
        return out

    @staticmethod
    def _requested_route(state: State) -> tuple[str, ...]:
        """The route the input asked for, for a rollout that failed before it was routed."""
        try:
            info = parse_info((state.get("input") or {}).get("info"))
            return normalize_route(info.get(ENV_GROUP_INFO_KEY))
        except ConfigError:
            return ()

    def metric_names(self) -> list[str]:
        """Every metric name of every child (a row carries those of its own environment)."""
        names: set[str] = set()
        for env in self.envs:
            names.update(env.metric_names())
        return sorted(names)

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
    """The rubric of an `EnvGroup`: each rollout is scored by the rubric of the environment it
    was routed to (``info["env_id"]``, else ``task``), and carries every child's metric names
    (0.0 for those of other environments, sorted). A rollout routed nowhere gets reward NaN
    and a `ConfigError` on its record (upstream: reward 0.0 and a warning).

    ``all_reward_names`` are the children's metric names, their rubrics' plus the ones the
    environment itself records (``num_turns``, tool-call counts), which upstream 0.3.1 adds
    to each environment's rubric as monitor rubrics."""

    def __init__(self, env_map: Mapping[str, Environment]) -> None:
        super().__init__()
        self.env_map = env_map
        names: set[str] = set()
        for env in env_map.values():
            names.update(env.metric_names())
        self.all_reward_names = sorted(names)

    def get_reward_func_names(self) -> list[str]:
        return list(self.all_reward_names)

    _get_reward_func_names = get_reward_func_names  # upstream's spelling

    @property
    def has_group_funcs(self) -> bool:
        """Whether rollouts must be scored as whole groups: some child needs it (group reward
        functions, or a `score_group` override that must see the group)."""
        from verifiers.generation import needs_group_scoring

        return any(needs_group_scoring(env.rubric) for env in self.env_map.values())

    def check_parameters(self, input_columns: Iterable[str]) -> None:
        cols = list(input_columns)
        for env in self.env_map.values():
            env.rubric.check_parameters(cols)

    def _env_for(self, state: Mapping[str, Any]) -> Environment | None:
        env = state.get("_env")
        if env is not None:
            return env
        path = normalize_route((state.get("info") or {}).get(ENV_GROUP_INFO_KEY))
        name = path[0] if path else state.get("task")
        return self.env_map.get(name) if isinstance(name, str) else None

    def _unrouted(self, state: dict[str, Any]) -> None:
        path = normalize_route((state.get("info") or {}).get(ENV_GROUP_INFO_KEY))
        name = path[0] if path else state.get("task")
        state["reward"] = math.nan
        state["metrics"] = dict.fromkeys(self.all_reward_names, 0.0)
        if state.get("error") is None:
            record_error(
                state,
                ConfigError(
                    f"No environment found for info['env_id']={name!r}; this group has "
                    f"{', '.join(self.env_map)}"
                ),
                "scoring",
            )

    def _all_names(self, env: Environment, metrics: Mapping[str, Any] | None) -> dict[str, Any]:
        """``metrics`` of a row of ``env`` under every name, sorted: 0.0 for the names of the
        other environments (a name of ``env`` it did not record stays absent)."""
        metrics = metrics or {}
        own = set(env.metric_names())
        full: dict[str, Any] = {}
        for name in self.all_reward_names:
            if name in metrics:
                full[name] = metrics[name]
            elif name not in own:
                full[name] = 0.0
        full.update(metrics)
        return full

    def _fill(self, env: Environment, state: dict[str, Any]) -> None:
        state["metrics"] = self._all_names(env, state.get("metrics"))

    async def score_rollout(self, state: dict[str, Any], **_: Any) -> None:
        env = self._env_for(state)
        if env is None:
            self._unrouted(state)
            return
        await env.rubric.score_rollout(state)
        self._fill(env, state)

    async def score_group(
        self, states: list[dict[str, Any]], score_sem: Any = None, **_: Any
    ) -> None:
        if not states:
            return
        env = self._env_for(states[0])  # the rollouts of one example share their route
        if env is None:
            for s in states:
                self._unrouted(s)
            set_advantages(states)
            return
        await env.rubric.score_group(states)
        for s in states:
            self._fill(env, s)

    async def compute_scores(self, states: list[dict[str, Any]]) -> list[Score]:
        scores = [Score(math.nan, dict.fromkeys(self.all_reward_names, 0.0)) for _ in states]
        by_env: dict[int, tuple[Environment, list[int]]] = {}
        for i, s in enumerate(states):
            env = self._env_for(s)
            if env is not None:
                by_env.setdefault(id(env), (env, []))[1].append(i)
        for env, idx in by_env.values():  # one call per environment: group functions see all
            parts = await env.rubric.compute_scores([states[i] for i in idx])
            for i, part in zip(idx, parts, strict=True):
                scores[i] = Score(part.reward, self._all_names(env, part.metrics), part.error)
        return scores

    async def cleanup(self, state: dict[str, Any]) -> None:
        env = self._env_for(state)
        if env is not None:
            await env.rubric.cleanup(state)


__all__ = ["ENV_GROUP_INFO_KEY", "EnvGroup", "EnvGroupRubric"]
