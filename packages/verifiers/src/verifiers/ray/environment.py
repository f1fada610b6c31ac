"""`RayEnvironment`: any environment, its rollouts run by worker actors on a Ray cluster."""

from __future__ import annotations

import asyncio
import os
import pickle
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from verifiers.client import Client
from verifiers.envs.env_datasets import EnvDatasets
from verifiers.envs.environment import Environment
from verifiers.envs.forwarding import forward, forward_attribute
from verifiers.errors import ClusterError, ConfigError, MissingKeyError, WorkerLostError
from verifiers.generation import RolloutSlots
from verifiers.ray.pool import ActorPool, Placement, Worker, short_error
from verifiers.ray.worker import EnvSpec, EnvWorker, GroupCall
from verifiers.types import RolloutOutput, SamplingArgs


class RayEnvironment:
    """An environment whose rollout groups run on environment worker actors of a Ray
    cluster, driven from this process (the orchestrator) through the usual entry points:
    `evaluate`, `generate` (same signatures as `vf.Environment`'s) and `vf.RolloutStream`.

    Each actor builds the environment once, as this process does (`load_environment(env_id,
    **env_args)`, or `factory()`, a picklable callable), and runs up to
    `max_groups_per_worker` groups at once on its event loop; `Environment.run_scored_group`
    runs there exactly as it does in process, so the records are the same (token ids,
    logprobs, errors, advantages; timing aside). This process keeps its own instance for the
    dataset, the rubric's parameter check, sampling arguments and metadata.

    Placement: `workers_per_node` actors on every alive node with `num_cpus`, `resources`
    (`{"sandbox": 1}`) and all `labels`; nodes that join get actors (checked at most once a
    second while groups are dispatched). Over an `EnvGroup` or `Mixture`, `members` maps a
    member's name to its own placement (`{"code": {"resources": {"sandbox": 1}}}`): rows are
    routed here with the group's own `route`, each to its member's actors (which build the
    whole group and run the row through it, so routing and records are the group's own).

    The model client travels with each group (pickled: key and headers, never pooled
    connections; an actor keeps one instance, and pool, per client). Secrets: the actors see
    the environment variables named in `env_vars`, with their values read here when the
    environment is made, and no others from this process (Ray passes them as the actors'
    `runtime_env`; it stores a runtime env in the cluster's control store).

    Faults. What is retried and what is not:
    - A group whose actor dies (killed, crashed, its node removed) is lost as a whole: its
      records carry a `WorkerLostError` (an infra error, so trainers mask it), or, with
      `retry_lost_groups=N`, it is run again from the start on another actor up to N times.
      Retrying re-runs every rollout of the group (model calls and tool side effects
      included), hence opt-in. Failures inside a rollout (model, tool, sandbox, reward) are
      recorded on the rollout by the environment itself, as in process, never retried here.
    - Lost actors are replaced when their node is alive; a node that leaves loses its actors.
    - When no actor is alive and none can be placed within `placement_timeout` seconds, the
      remaining groups end as `WorkerLostError` records saying what could not be placed.
    - Groups that finished are returned (and written) whatever happens later.
    - An unreachable head raises `ClusterUnreachableError` when this is constructed.

    In `RolloutStream`, a model call's policy version is the one its server reported, else the
    stream's version when the group was launched (the conservative choice: calls run on the
    actor, so the send-time version is not seen here); a group gone stale is cancelled on its
    actor (`ray.cancel` cancels its task there). `max_concurrent` bounds rollouts across the
    cluster: a group takes its share of the slots when it is sent.
    """

    runs_in_process = False

    def __init__(
        self,
        env_id: str | None = None,
        env_args: Mapping[str, Any] | None = None,
        *,
        factory: Callable[[], Environment] | None = None,
        workers_per_node: int = 1,
        num_cpus: float = 1.0,
        resources: Mapping[str, float] | None = None,
        labels: Mapping[str, str] | None = None,
        max_groups_per_worker: int = 64,
        env_vars: Iterable[str] | str = (),
        retry_lost_groups: int = 0,
        members: Mapping[str, Mapping[str, Any]] | None = None,
        placement_timeout: float = 120.0,
        address: str | None = "auto",
        namespace: str | None = None,
    ) -> None:
        if (env_id is None) == (factory is None):
            raise ConfigError("RayEnvironment takes an environment id or a factory (one of them)")
        if factory is not None and env_args:
            raise ConfigError("env_args go with an environment id; a factory takes none")
        if retry_lost_groups < 0:
            raise ConfigError(f"retry_lost_groups must be >= 0, got {retry_lost_groups}")
        from verifiers.ray.cluster import connect

        self.secrets = _read_env_vars(env_vars)
        self.retry_lost_groups = retry_lost_groups
        self.spec = EnvSpec(env_id, dict(env_args or {}), factory)
        self._ray = connect(address, namespace=namespace)  # unreachable head: fails here
        self.local: Environment = self.spec.build()
        self.placement = Placement(
            workers_per_node=workers_per_node,
            num_cpus=num_cpus,
            resources=dict(resources or {}),
            labels=dict(labels or {}),
            max_groups_per_worker=max_groups_per_worker,
        )
        self.placement_timeout = placement_timeout
        self._worker_cls = self._ray.remote(EnvWorker)
        self._spec_ref = self._ray.put(self.spec)
        self._member_names: dict[int, str] = {}
        self.pools: dict[str, ActorPool] = {}
        if members:
            names = list(getattr(self.local, "env_names", None) or ())
            if not names:
                raise ConfigError(
                    "members= places the members of an EnvGroup or Mixture; "
                    f"{type(self.local).__name__} has none"
                )
            unknown = sorted(set(members) - set(names))
            if unknown:
                raise ConfigError(
                    f"members names {unknown}, which the group does not have; it has {names}"
                )
            self._member_names = {id(env): n for n, env in self.local.env_map.items()}
            for name, overrides in members.items():
                where = f"RayEnvironment members[{name!r}]"
                self.pools[name] = self._make_pool(
                    self.placement.with_overrides(overrides, where), name
                )
            self._route = self.local.route
        self._default: ActorPool | None = None
        if not members or len(members) < len(self._member_names):
            self._default_pool()  # start now, so actors load while the run is prepared

    # -- what the orchestrator needs from the environment ---------------------------------
    # this process's own instance answers them
    env_id = forward_attribute[str]("local")
    env_args = forward_attribute[dict[str, Any]]("local")
    rubric = forward_attribute[Any]("local")
    sampling_args = forward_attribute[SamplingArgs]("local")
    pass_threshold = forward_attribute[float]("local")
    executor = forward_attribute[Any]("local")
    eval_inputs = forward(EnvDatasets.eval_inputs, "local")
    get_dataset = forward(EnvDatasets.get, "local", "get_dataset")
    get_eval_dataset = forward(EnvDatasets.get_eval, "local", "get_eval_dataset")
    metric_names = forward(Environment.metric_names, "local")

    # The entry points are Environment's own: they run groups through `run_scored_group`.
    generate = Environment.generate
    generate_sync = Environment.generate_sync
    evaluate = Environment.evaluate
    evaluate_sync = Environment.evaluate_sync

    # -- the actors ---------------------------------------------------------------------
    @property
    def pool(self) -> ActorPool:
        """The pool of actors that run rows no `members` entry places."""
        return self._default_pool()

    def workers(self) -> list[Worker]:
        """Every actor started so far (dead ones included), over all pools."""
        pools = [*self.pools.values(), *([self._default] if self._default else [])]
        return [w for p in pools for w in p.workers]

    async def wait_ready(self, count: int) -> list[Worker]:
        """Wait until `count` actors have loaded the environment (say, before timing a run);
        the ready actors. Raises `ClusterError` after `placement_timeout` seconds."""
        pools = [*self.pools.values(), *([self._default] if self._default else [])]
        deadline = time.monotonic() + self.placement_timeout
        while True:
            for pool in pools:
                pool.refresh()
                pool.poll_starting()
            ready = [w for w in self.workers() if w.ready and not w.dead]
            if len(ready) >= count:
                return ready
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"{len(ready)} of {count} environment workers loaded within "
                    f"{self.placement_timeout:g}s"
                )
            await asyncio.sleep(0.05)

    def _default_pool(self) -> ActorPool:
        if self._default is None:
            self._default = self._make_pool(self.placement, "environment")
        return self._default

    def _make_pool(self, placement: Placement, name: str) -> ActorPool:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        options: dict[str, Any] = {
            "num_cpus": placement.num_cpus,
            "max_concurrency": placement.max_groups_per_worker + 4,  # + info/stats/aclose
            "max_restarts": 0,  # a lost actor's groups are handled here; the pool replaces it
        }
        if placement.resources:
            options["resources"] = dict(placement.resources)
        if self.secrets:
            options["runtime_env"] = {"env_vars": dict(self.secrets)}

        def start(node_id: str) -> Any:
            strategy = NodeAffinitySchedulingStrategy(node_id, soft=False)
            return self._worker_cls.options(**options, scheduling_strategy=strategy).remote(
                self._spec_ref
            )

        pool = ActorPool(start, placement, name=name, placement_timeout=self.placement_timeout)
        pool.refresh(force=True)
        return pool

    def _pool_for(self, rows: list[dict[str, Any]]) -> ActorPool:
        if not self.pools:
            return self._default_pool()
        try:
            member, _ = self._route(rows[0])
        except ConfigError:  # the group's own run records the routing error on each rollout
            return self._default_pool()
        name = self._member_names.get(id(member))
        pool = self.pools.get(name) if name is not None else None
        return pool if pool is not None else self._default_pool()

    # -- one group ----------------------------------------------------------------------
    async def run_scored_group(
        self,
        rows: list[dict[str, Any]],
        client: Client,
        model: str,
        sampling: SamplingArgs,
        *,
        group_scoring: bool,
        rollout_slots: RolloutSlots | None = None,
        max_retries: int = 0,
        state_columns: list[str] | None = None,
        emit: Callable[[list[RolloutOutput]], Any] | None = None,
    ) -> list[RolloutOutput]:
        """`Environment.run_scored_group` on an actor: the group's records, or records
        carrying a `WorkerLostError` when its actor was lost (see the class doc)."""
        taken = await rollout_slots.take(len(rows)) if rollout_slots is not None else 0
        try:
            call = GroupCall(
                rows, client, model, sampling, group_scoring, taken, max_retries, state_columns
            )
            outputs = await self._run_remote(call)
        finally:
            if rollout_slots is not None:
                rollout_slots.give_back(taken)
        if emit is not None:
            emit(outputs)
        return outputs

    async def _run_remote(self, call: GroupCall) -> list[RolloutOutput]:
        from ray.exceptions import RayActorError

        pool = self._pool_for(call.rows)
        attempt = 0
        while True:
            try:
                worker = await pool.acquire()
            except WorkerLostError as e:
                return self._failed(call, e)
            try:
                try:
                    ref = worker.handle.run_group.remote(call)
                except (TypeError, pickle.PicklingError) as e:
                    raise _unpicklable(call.client, e) from e
                try:
                    return await ref
                except asyncio.CancelledError:
                    self._ray.cancel(ref)  # stops the group's task on the actor
                    raise
            except RayActorError as e:
                pool.lost(worker, e)
                lost = WorkerLostError(
                    f"the environment worker on node {worker.node_id[:12]} was lost while "
                    f"running this group (attempt {attempt + 1} of "
                    f"{self.retry_lost_groups + 1}): {short_error(e)}"
                )
                if attempt < self.retry_lost_groups:
                    attempt += 1
                    continue
                return self._failed(call, lost)
            finally:
                pool.release(worker)

    def _failed(self, call: GroupCall, error: Exception) -> list[RolloutOutput]:
        return self.local.failed_outputs(
            call.rows, call.client, call.model, call.sampling, error, call.state_columns
        )

    # -- lifecycle ----------------------------------------------------------------------
    async def aclose(self) -> None:
        """End the actors (each releases its environment first) and this process's copy."""
        pools = [*self.pools.values(), *([self._default] if self._default else [])]
        await asyncio.gather(*(p.aclose() for p in pools))
        await self.local.teardown()

    teardown = aclose

    async def __aenter__(self) -> RayEnvironment:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _read_env_vars(names: Iterable[str] | str) -> dict[str, str]:
    """The values, in this process, of the variables the user named for the actors."""
    if isinstance(names, str):
        names = (names,)
    values: dict[str, str] = {}
    missing = []
    for name in names:
        if not isinstance(name, str) or not name:
            raise ConfigError(f"env_vars holds names of environment variables, got {name!r}")
        if name in os.environ:
            values[name] = os.environ[name]
        else:
            missing.append(name)
    if missing:
        raise MissingKeyError(
            f"env_vars names {', '.join(missing)}, not set in this process: set them here "
            "(their values are passed to this environment's actors only)"
        )
    return values


def _unpicklable(client: Any, error: BaseException) -> ConfigError:
    return ConfigError(
        f"the model client ({type(client).__name__}) cannot be sent to the cluster's actors: "
        f"{str(error).strip().splitlines()[0] if str(error).strip() else error!r}. Pass a "
        "base URL, a vf.ClientConfig, a vf.OpenAIClient or an openai.AsyncOpenAI (they travel "
        "without their connections)"
    )
