"""A trainer loop consuming `vf.RolloutStream`: the data path is real, the optimizer is not.

    uv run python docs/examples/trainer_loop.py                      # two local scripted servers
    uv run python docs/examples/trainer_loop.py --base-url http://gpu0:8000/v1 \\
        --base-url http://gpu1:8000/v1 --model Qwen/Qwen3-4B --env i3-math

Without `--base-url` the script starts two scripted OpenAI-compatible servers
(`verifiers.testing.ScriptedServer`, vLLM-style token ids and logprobs) whose stand-in policy
answers arithmetic right most of the time, and trains on a small tool-use environment built
below. With `--env` it loads an installed environment with `vf.load_environment` instead.

Each step takes `--groups-per-step` finished groups from the stream (in completion order),
packs their samples into the tensors-to-be a trainer feeds its model, runs
`placeholder_policy_update` (no model: it only checks and summarises the batch), reports the
new policy version to the stream, and finally writes a checkpoint with the difficulty pools.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import zlib
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from datasets import Dataset

import verifiers as vf
from verifiers.testing import Reply, ScriptedServer
from verifiers.testing.responders import last_message, message_text


# -- a small environment and a stand-in policy (only used without --env / --base-url) -------
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def boxed_correct(completion: vf.Messages, answer: str) -> float:
    return float(f"\\boxed{{{answer}}}" in (completion[-1].get("content") or ""))


def arithmetic_env(n: int = 32) -> vf.Environment:
    rows = [{"question": f"What is {i} + {2 * i + 1}?", "answer": str(3 * i + 1)} for i in range(n)]
    return vf.ToolEnv(
        dataset=Dataset.from_list(rows),
        tools=[add],
        max_turns=3,
        rubric=vf.Rubric(funcs=[boxed_correct]),
    )


class StandInPolicy:
    """Calls `add` with the question's numbers, then boxes the tool's result, off by one with a
    per-problem probability (so some problems are easy, some hard, most in between)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def __call__(self, body: dict[str, Any]) -> Reply:
        last = last_message(body)
        if last.get("role") == "user":
            a, b = (int(t.rstrip("?")) for t in message_text(last).split()[2:5:2])
            return Reply(tool_calls=[{"name": "add", "arguments": {"a": a, "b": b}}])
        result = int(message_text(last))
        p_wrong = (zlib.crc32(str(result).encode()) % 5) / 4  # 0, .25, .5, .75 or 1
        if self.rng.random() < p_wrong:
            result += 1
        return Reply(content=f"The answer is \\boxed{{{result}}}.")


# -- the trainer side --------------------------------------------------------------------------
def pack(samples: list[vf.TrainingSample]) -> dict[str, list[list[Any]]]:
    """Right-padded rows a trainer turns into tensors: ids, loss mask, per-token advantages and
    the sampler's logprobs (for importance ratios against the current policy)."""
    width = max(len(s) for s in samples)
    rows: dict[str, list[list[Any]]] = {
        "input_ids": [],
        "loss_mask": [],
        "advantages": [],
        "old_logprobs": [],
    }
    for s in samples:
        pad = width - len(s)
        n_prompt = len(s.prompt_ids)
        rows["input_ids"].append(s.input_ids + [0] * pad)
        rows["loss_mask"].append([0] * n_prompt + s.completion_mask + [0] * pad)
        rows["advantages"].append(
            [0.0] * n_prompt + [s.advantage] * len(s.completion_ids) + [0.0] * pad
        )
        rows["old_logprobs"].append([0.0] * n_prompt + s.completion_logprobs + [0.0] * pad)
    return rows


def placeholder_policy_update(batch: dict[str, list[list[Any]]]) -> dict[str, float]:
    """PLACEHOLDER for the optimizer step (forward, policy-gradient loss, backward, step).

    It only checks the batch's shape and reports what a real update would train on."""
    width = len(batch["input_ids"][0])
    assert all(len(row) == width for rows in batch.values() for row in rows)
    trained = sum(sum(mask) for mask in batch["loss_mask"])
    signal = sum(
        abs(a) * m
        for adv, mask in zip(batch["advantages"], batch["loss_mask"], strict=True)
        for a, m in zip(adv, mask, strict=True)
    )
    return {
        "rows": float(len(batch["input_ids"])),
        "trained_tokens": float(trained),
        "abs_adv_tokens": signal,
    }


async def train(args: argparse.Namespace, base_urls: list[str]) -> dict[str, Any]:
    env = vf.load_environment(args.env) if args.env else arithmetic_env()
    pools = vf.DifficultyFilter(
        env.get_dataset(), easy_threshold=1.0, hard_threshold=0.0, seed=args.seed
    )
    stream = vf.RolloutStream(
        env,
        base_urls,  # several endpoints: each group goes to the next in turn
        args.model,
        pools,
        rollouts_per_example=args.rollouts_per_example,
        max_in_flight=args.max_in_flight,
        max_off_policy_steps=args.max_off_policy_steps,
        max_seq_len=args.max_seq_len,
        sampling_args={"temperature": 1.0, "max_tokens": 256},
    )
    step, batch = 0, []
    async with stream:
        async for group in stream:
            batch.append(group)
            if len(batch) < args.groups_per_step:
                continue
            samples = [s for g in batch for s in g.samples]
            stats = placeholder_policy_update(pack(samples))
            step += 1
            lag = max(step - 1 - (g.oldest_version or 0) for g in batch)
            reward = sum(r for g in batch for r in g.rewards) / sum(len(g.rewards) for g in batch)
            print(
                f"step {step}: {len(batch)} groups, {len(samples)} samples, "
                f"{stats['trained_tokens']:.0f} trained tokens, mean reward {reward:.2f}, "
                f"max lag {lag}, pools easy/normal/hard "
                f"{len(pools.pools['easy'])}/{len(pools.pools['normal'])}/{len(pools.pools['hard'])}",
                flush=True,
            )
            stream.set_policy_version(step)  # the servers now serve the updated weights
            batch = []
            if step == args.steps:
                break
    print(f"stream: {json.dumps(stream.stats)}")
    return {"step": step, "difficulty": pools.state_dict(), "stream": stream.stats}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--base-url", action="append", default=[], help="inference endpoint (repeatable)"
    )
    p.add_argument("--model", default="stand-in")
    p.add_argument("--env", default=None, help="an installed environment to load by name")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--groups-per-step", type=int, default=4)
    p.add_argument("--rollouts-per-example", type=int, default=4)
    p.add_argument("--max-in-flight", type=int, default=8)
    p.add_argument("--max-off-policy-steps", type=int, default=2)
    p.add_argument("--max-seq-len", type=int, default=4096)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", default="trainer_checkpoint.json")
    args = p.parse_args(argv)
    with ExitStack() as stack:
        urls = args.base_url or [
            stack.enter_context(ScriptedServer(StandInPolicy(args.seed + i))).base_url
            for i in range(2)
        ]
        checkpoint = asyncio.run(train(args, urls))
    Path(args.checkpoint).write_text(json.dumps(checkpoint))
    print(f"checkpoint written to {args.checkpoint}")


if __name__ == "__main__":
    main()
