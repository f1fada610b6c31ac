"""What the capacity plan needs, measured on the local cluster (bench/ray/README.md does the
arithmetic for 64 nodes x 256 sandboxes):

- bytes per group moved through Ray: the pickled arguments of one `EnvWorker.run_group` call
  (the group's rows, the model client, model name, sampling arguments) and its pickled records,
  for an eval group and for a training group (token ids and logprobs requested);
- memory of Ray's system processes (GCS, raylets) idle and with N more actors alive, and how
  long those actors took to start;
- the orchestrator's and the head's CPU per group, from the rollout modes of the same run.

Sizes use `ray.cloudpickle` (what Ray serialises Python arguments and returns with); a
return under Ray's inline limit travels in the task's reply, not through the object store.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import procs

MODEL = "mock-model"


def system_rss(head_socket: str) -> dict[str, Any]:
    """RSS in MiB of the GCS, the head raylet and each other raylet (agents not included)."""
    snap = procs.snapshot(head_store_socket=head_socket)
    mib = 1024 * 1024
    gcs = sum(p.rss for p in snap.procs.values() if "gcs_server" in p.cmd)
    raylets = {
        pid: p.rss
        for pid, p in snap.procs.items()
        if "raylet/raylet" in p.cmd and snap.role[pid] == "raylets"
    }
    head_raylet = sum(
        p.rss
        for pid, p in snap.procs.items()
        if "raylet/raylet" in p.cmd and snap.role[pid] == "head"
    )
    workers = [p.rss for pid, p in snap.procs.items() if snap.role[pid] == "workers"]
    return {
        "gcs_rss_mib": round(gcs / mib, 1),
        "head_raylet_rss_mib": round(head_raylet / mib, 1),
        "other_raylets_rss_mib": [round(v / mib, 1) for v in raylets.values()],
        "worker_processes": len(workers),
        "worker_rss_mib_median": round(sorted(workers)[len(workers) // 2] / mib, 1)
        if workers
        else 0,
    }


def idle(head_socket: str, seconds: float) -> dict[str, Any]:
    """The cluster's memory, and its CPU in cores by role, with no actors and no work: the
    background load (heartbeats, resource reports, monitors) every rate is compared with."""
    before = procs.snapshot(head_store_socket=head_socket)
    t0 = time.perf_counter()
    time.sleep(seconds)
    after = procs.snapshot(head_store_socket=head_socket)
    wall = time.perf_counter() - t0
    return {
        **system_rss(head_socket),
        "seconds": round(wall, 1),
        "cpu_cores_by_role": {
            k: round(v / wall, 4) for k, v in procs.cpu_delta(before, after).items()
        },
    }


async def group_bytes(base_url: str, r: int) -> dict[str, Any]:
    """Pickled size of one group's call arguments and of its records."""
    from ray import cloudpickle

    from verifiers import ClientConfig, load_environment
    from verifiers.client import resolve_client
    from verifiers.training import TOKEN_SAMPLING_ARGS

    env = load_environment("ray_cpu_env", num_examples=8, work=0)
    rows = env.eval_inputs(num_examples=1, rollouts_per_example=r)
    client, _ = resolve_client(ClientConfig(api_base_url=base_url, api_key_var="BENCH_NO_KEY"))
    out: dict[str, Any] = {"rollouts_per_group": r}
    try:
        for label, sampling in (
            ("eval", dict(env.sampling_args)),
            ("training", {**env.sampling_args, **TOKEN_SAMPLING_ARGS}),
        ):
            call = (rows, client, MODEL, sampling, True, 0, 0, None)
            records = await env.run_scored_group(rows, client, MODEL, sampling, group_scoring=True)
            assert all(rec["error"] is None for rec in records), records[0]["error"]
            out[f"{label}_call_bytes"] = len(cloudpickle.dumps(call))
            out[f"{label}_records_bytes"] = len(cloudpickle.dumps(records))
            out[f"{label}_token_values"] = sum(
                _numbers(step.get("tokens"))
                for rec in records
                for step in rec.get("trajectory") or ()
            )
        out["client_bytes"] = len(cloudpickle.dumps(client))
    finally:
        await client.aclose()
        await env.teardown()
    return out


def token_payload(prompt: int = 2000, completion: int = 6000, vocab: int = 150_000) -> dict:
    """What a training record's token fields cost per token at a real vocabulary size: one
    step of `prompt` + `completion` tokens (ids drawn from `vocab`, masks, logprobs), the shape
    `trajectory[i]["tokens"]` has. Pickled size and this process's time to load it again (the
    orchestrator's work for every record that arrives)."""
    import random

    from ray import cloudpickle

    rnd = random.Random(0)
    step = {
        "prompt_ids": [rnd.randrange(vocab) for _ in range(prompt)],
        "prompt_mask": [0] * prompt,
        "completion_ids": [rnd.randrange(vocab) for _ in range(completion)],
        "completion_mask": [1] * completion,
        "completion_logprobs": [-rnd.random() * 5 for _ in range(completion)],
    }
    blob = cloudpickle.dumps(step)

    def size(values: list) -> int:
        return len(cloudpickle.dumps(values))

    loads = []
    for _ in range(5):
        c0 = time.process_time()
        cloudpickle.loads(blob)
        loads.append(time.process_time() - c0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "vocab": vocab,
        "bytes": len(blob),
        "bytes_per_prompt_token_est": round(
            (size(step["prompt_ids"]) + size(step["prompt_mask"])) / prompt, 2
        ),
        "bytes_per_completion_token_est": round(
            sum(size(step[k]) for k in ("completion_ids", "completion_mask", "completion_logprobs"))
            / completion,
            2,
        ),
        "load_ms_median_of_5": round(1000 * sorted(loads)[2], 3),
    }


def _numbers(value: Any) -> int:
    """How many numbers (token ids, logprobs, mask entries) a step's `tokens` holds."""
    if isinstance(value, (int, float)):
        return 1
    if isinstance(value, dict):
        return sum(_numbers(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_numbers(v) for v in value)
    return 0


class Idle:
    """The smallest actor: what one more actor costs the GCS and raylets."""

    def ping(self) -> int:
        return 1


def actor_memory(n: int, head_socket: str) -> dict[str, Any]:
    import ray

    before = system_rss(head_socket)
    cls = ray.remote(Idle)
    t0 = time.perf_counter()
    actors = [cls.options(num_cpus=0, scheduling_strategy="SPREAD").remote() for _ in range(n)]
    ray.get([a.ping.remote() for a in actors], timeout=600)
    start_s = time.perf_counter() - t0
    time.sleep(1.0)  # let the GCS settle its tables
    during = system_rss(head_socket)
    for a in actors:
        ray.kill(a, no_restart=True)
    gcs_delta = during["gcs_rss_mib"] - before["gcs_rss_mib"]
    raylet_delta = sum(during["other_raylets_rss_mib"]) - sum(before["other_raylets_rss_mib"])
    return {
        "actors": n,
        "start_all_s": round(start_s, 2),
        "before": before,
        "with_actors": during,
        "gcs_rss_mib_per_actor": round(gcs_delta / n, 3),
        "raylets_rss_mib_per_actor": round(raylet_delta / n, 3),
    }


def measure(
    base_url: str, r: int, actors: int, head_socket: str, rollouts: list[dict[str, Any]] | None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    out["group_bytes"] = asyncio.run(group_bytes(base_url, r))
    out["token_payload"] = token_payload()
    out["actor_memory"] = actor_memory(actors, head_socket)
    if rollouts:
        out["orchestrator_per_group_fit"] = per_group_fit(rollouts)
        by = {row["mode"]: row for row in rollouts}
        light = by.get("light ray x3")
        if light:
            roles = (
                light.get("cpu_ms_per_rollout_above_idle") or light["cpu_ms_per_rollout_by_role"]
            )
            out["per_group_light_ray_x3"] = {
                "rollouts_per_group": r,
                "orchestrator_cpu_ms": round(light["orchestrator_cpu_ms_per_rollout"] * r, 3),
                "head_cpu_ms_above_idle": round(roles["head"] * r, 3),
                "other_raylets_cpu_ms_above_idle": round(roles["raylets"] * r, 3),
            }
    return out


def per_group_fit(rollouts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Orchestrator CPU per group = a + b * r, least squares over the light Ray modes' group
    sizes r (same rollouts at each size): `a` is the dispatch of a group, `b` what each of its
    rollouts adds (its records, generate's bookkeeping). Also in process, per rollout."""
    ray_rows = [row for row in rollouts if row["mode"].startswith("light ray")]
    if len({row["rollouts_per_group"] for row in ray_rows}) < 2:
        return None
    pts = [
        (
            row["rollouts_per_group"],
            row["orchestrator_cpu_ms_per_rollout"] * row["rollouts_per_group"],
        )
        for row in ray_rows
    ]
    n = len(pts)
    mx, my = sum(x for x, _ in pts) / n, sum(y for _, y in pts) / n
    b = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    local = {
        row["rollouts_per_group"]: round(row["orchestrator_cpu_ms_per_rollout"], 3)
        for row in rollouts
        if row["mode"].startswith("light in-process")
    }
    return {
        "ray_ms_per_group_by_r": {x: round(y, 3) for x, y in pts},
        "dispatch_ms_per_group": round(my - b * mx, 3),
        "ms_per_rollout_in_group": round(b, 3),
        "in_process_ms_per_rollout_by_r": local,
    }


def print_table(res: dict[str, Any]) -> None:
    g, a = res["group_bytes"], res["actor_memory"]
    print(
        f"\nbytes per group of {g['rollouts_per_group']} (cloudpickle): call eval "
        f"{g['eval_call_bytes']} / training {g['training_call_bytes']}; records eval "
        f"{g['eval_records_bytes']} / training {g['training_records_bytes']}; client "
        f"{g['client_bytes']}"
    )
    print(
        f"{a['actors']} idle actors started in {a['start_all_s']} s; GCS RSS "
        f"{a['before']['gcs_rss_mib']} -> {a['with_actors']['gcs_rss_mib']} MiB "
        f"({a['gcs_rss_mib_per_actor']} MiB/actor); raylets +{a['raylets_rss_mib_per_actor']} "
        f"MiB/actor; worker process RSS median {a['with_actors']['worker_rss_mib_median']} MiB"
    )
    t = res["token_payload"]
    print(
        f"token fields, {t['prompt_tokens']} prompt + {t['completion_tokens']} completion "
        f"tokens (vocab {t['vocab']}): {t['bytes']} bytes, ~{t['bytes_per_prompt_token_est']} "
        f"B/prompt token, ~{t['bytes_per_completion_token_est']} B/completion token, "
        f"loaded in {t['load_ms_median_of_5']} ms"
    )
    if res.get("orchestrator_per_group_fit"):
        print(f"orchestrator CPU per group, Ray: {res['orchestrator_per_group_fit']}")
    if "per_group_light_ray_x3" in res:
        print(f"per group (light, 3 nodes): {res['per_group_light_ray_x3']}")
