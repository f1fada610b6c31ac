"""`vf-eval`: evaluate an environment against any OpenAI-compatible endpoint.

Results stream to `outputs/evals/<env>--<model>/<run-id>/results.jsonl` (one line per rollout,
flushed as each finishes) with `metadata.json` beside it; `--resume` completes a partial run.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import os
import sys
import time
import tomllib
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from verifiers.client import Client, MultiEndpointClient, OpenAIClient
from verifiers.errors import ConfigError, Error
from verifiers.loading import HUB_INSTALL_VAR
from verifiers.results import read_metadata, read_results, summarize, write_metadata

DEFAULT_MODEL = "gpt-4.1-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
RESUME_KEYS = ("env_id", "env_args", "model", "num_examples", "rollouts_per_example", "shuffle")


class UsageError(Exception):
    """A bad command line: printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="vf-eval",
        description="Evaluate a verifiers environment against an OpenAI-compatible endpoint.",
    )
    p.add_argument(
        "env", help="environment id: an installed module (my-env / my_env) or owner/name"
    )
    p.add_argument("--env-args", default="{}", help="JSON object of load_environment arguments")
    p.add_argument("-x", "--extra-env-kwargs", default="{}", help="JSON passed to env.set_kwargs")
    p.add_argument("-m", "--model", default=os.environ.get("VF_MODEL", DEFAULT_MODEL))
    p.add_argument(
        "-b",
        "--api-base-url",
        default=None,
        help=f"endpoint base URL (default: $OPENAI_BASE_URL or {DEFAULT_BASE_URL})",
    )
    p.add_argument(
        "-k", "--api-key-var", default="OPENAI_API_KEY", help="environment variable with the key"
    )
    p.add_argument(
        "-e",
        "--endpoints-path",
        default="./configs/endpoints.toml",
        help="TOML registry of [[endpoint]] rows (endpoint_id, model, url, key)",
    )
    p.add_argument("--header", action="append", default=[], help="extra HTTP header 'Name: Value'")
    p.add_argument("-n", "--num-examples", type=int, default=5, help="-1 for all")
    p.add_argument("-r", "--rollouts-per-example", type=int, default=3)
    p.add_argument("-c", "--max-concurrent", type=int, default=32, help="rollouts at once")
    p.add_argument("-t", "--max-tokens", type=int, default=None)
    p.add_argument("-T", "--temperature", type=float, default=None)
    p.add_argument(
        "-a", "-S", "--sampling-args", default=None, help="JSON sampling args (override -t/-T)"
    )
    p.add_argument("--shuffle", action="store_true")
    p.add_argument("--shuffle-seed", type=int, default=0)
    p.add_argument(
        "-s", "--save-results", action="store_true", help="accepted for compatibility; always on"
    )
    p.add_argument("--no-save", action="store_true", help="do not write results to disk")
    p.add_argument("-o", "--output-dir", default="./outputs")
    p.add_argument(
        "-R",
        "--resume",
        nargs="?",
        const="latest",
        default=None,
        help="finish an interrupted run (a run directory, or the latest matching one)",
    )
    p.add_argument("-C", "--state-columns", default="", help="comma list of state keys to save")
    p.add_argument("-i", "--independent-scoring", action="store_true")
    p.add_argument("--max-retries", type=int, default=3, help="retries of infra-failed rollouts")
    p.add_argument(
        "--request-retries", type=int, default=5, help="retries of one request (429/5xx/timeouts)"
    )
    p.add_argument("--timeout", type=float, default=None, help="per-rollout wall clock seconds")
    p.add_argument(
        "--no-install",
        action="store_true",
        help="do not install an owner/name environment from the hub on first use",
    )
    p.add_argument("-d", "--disable-tui", "--no-progress", dest="no_progress", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def parse_json_arg(value: str | None, flag: str) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError as e:
        raise UsageError(f"{flag} is not valid JSON ({e}): {value!r}") from None
    if not isinstance(parsed, dict):
        raise UsageError(f"{flag} must be a JSON object, got {type(parsed).__name__}")
    return parsed


def parse_headers(values: list[str]) -> dict[str, str]:
    headers = {}
    for raw in values:
        name, sep, value = raw.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header must look like 'Name: Value', got {raw!r}")
        headers[name.strip()] = value.strip()
    return headers


def load_endpoints(path: str, model: str) -> list[dict[str, Any]]:
    """Rows of the registry whose endpoint_id is `model` (several rows: round robin)."""
    file = Path(path)
    if not file.exists():
        return []
    try:
        data = tomllib.loads(file.read_text())
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"endpoints file {path} is not valid TOML: {e}") from None
    rows = data.get("endpoint") or []
    if not isinstance(rows, list):
        raise UsageError(f"endpoints file {path}: [[endpoint]] must be an array of tables")
    matches = [r for r in rows if r.get("endpoint_id") == model]
    for r in matches:
        for key in ("model", "url"):
            if not r.get(key):
                raise UsageError(f"endpoints file {path}: endpoint {model!r} has no {key!r}")
    return matches


def build_client(args: argparse.Namespace) -> tuple[Client, str]:
    headers = parse_headers(args.header)
    endpoints = load_endpoints(args.endpoints_path, args.model)
    if endpoints:
        clients = [
            OpenAIClient(
                args.api_base_url or e["url"],
                api_key=os.environ.get(e.get("key") or args.api_key_var, "EMPTY"),
                headers={**headers, **(e.get("headers") or {})},
                max_retries=args.request_retries,
            )
            for e in endpoints
        ]
        model = endpoints[0]["model"]
        client: Client = clients[0] if len(clients) == 1 else MultiEndpointClient(clients)
        return client, model
    base_url = args.api_base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    client = OpenAIClient(
        base_url,
        api_key=os.environ.get(args.api_key_var, "EMPTY"),
        headers=headers,
        max_retries=args.request_retries,
    )
    return client, args.model


def sampling_args_from(args: argparse.Namespace) -> dict[str, Any]:
    sampling: dict[str, Any] = {}
    if args.max_tokens is not None:
        sampling["max_tokens"] = args.max_tokens
    if args.temperature is not None:
        sampling["temperature"] = args.temperature
    sampling.update(parse_json_arg(args.sampling_args, "--sampling-args"))
    return sampling


def run_dir_for(output_dir: str, env_id: str, model: str) -> Path:
    safe_env = env_id.replace("/", "--")
    return Path(output_dir) / "evals" / f"{safe_env}--{model.replace('/', '--')}"


def find_resumable(base: Path, config: dict[str, Any]) -> Path | None:
    if not base.is_dir():
        return None
    candidates = sorted(
        (d for d in base.iterdir() if (d / "metadata.json").exists()),
        key=lambda d: (d / "metadata.json").stat().st_mtime,
        reverse=True,
    )
    for d in candidates:
        meta = read_metadata(d)
        if meta.get("status") != "complete" and all(meta.get(k) == config[k] for k in RESUME_KEYS):
            return d
    return None


def remaining_inputs(
    inputs: list[dict[str, Any]], done: list[dict[str, Any]], group_scoring: bool
) -> list[dict[str, Any]]:
    """Inputs whose rollouts are not on disk yet. With group rewards a group is redone whole."""
    finished = {(o.get("example_id"), o.get("rollout_index", 0)) for o in done}
    if not group_scoring:
        return [i for i in inputs if (i["example_id"], i["rollout_index"]) not in finished]
    done_per_example = Counter(o.get("example_id") for o in done)
    per_example = Counter(i["example_id"] for i in inputs)
    return [i for i in inputs if done_per_example[i["example_id"]] < per_example[i["example_id"]]]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return run(args)
    except UsageError as e:
        print(f"vf-eval: error: {e}", file=sys.stderr)
        return 2
    except (Error, ValueError) as e:
        print(f"vf-eval: error: {e}", file=sys.stderr)
        return 1


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    import verifiers as vf

    console = Console(stderr=True)
    env_args = parse_json_arg(args.env_args, "--env-args")
    extra_kwargs = parse_json_arg(args.extra_env_kwargs, "--extra-env-kwargs")
    sampling = sampling_args_from(args)
    client, model = build_client(args)
    if args.no_install:
        os.environ[HUB_INSTALL_VAR] = "0"
    try:
        env = vf.load_environment(args.env, **env_args)
    except ConfigError as e:
        raise UsageError(str(e)) from None
    if extra_kwargs:
        env.set_kwargs(**extra_kwargs)
    if args.timeout is not None:
        env.timeout_seconds = args.timeout

    inputs = env.eval_inputs(
        args.num_examples, args.rollouts_per_example, args.shuffle, args.shuffle_seed
    )
    num_examples = len(inputs) // max(1, args.rollouts_per_example)
    config = {
        "env_id": args.env,
        "env_args": env_args,
        "model": model,
        "num_examples": num_examples,
        "rollouts_per_example": args.rollouts_per_example,
        "shuffle": args.shuffle,
    }
    group_scoring = env.rubric.has_group_funcs and not args.independent_scoring

    done: list[dict[str, Any]] = []
    run_dir: Path | None = None
    if args.resume:
        base = run_dir_for(args.output_dir, args.env, model)
        run_dir = find_resumable(base, config) if args.resume == "latest" else Path(args.resume)
        if run_dir is None:
            raise UsageError(f"--resume: no unfinished run of {args.env} with {model} in {base}")
        meta = read_metadata(run_dir)
        if not meta:
            raise UsageError(f"--resume: {run_dir} has no metadata.json")
        mismatched = [k for k in RESUME_KEYS if meta.get(k) != config[k]]
        if mismatched:
            details = ", ".join(
                f"{k}: run {meta.get(k)!r} vs now {config[k]!r}" for k in mismatched
            )
            raise UsageError(f"--resume: {run_dir} was a different run ({details})")
        done = read_results(run_dir)
        if group_scoring:  # drop partial groups (cannot be re-scored together)
            per_example = Counter(i["example_id"] for i in inputs)
            counts = Counter(o.get("example_id") for o in done)
            done = [
                o for o in done if counts[o.get("example_id")] >= per_example[o.get("example_id")]
            ]
    elif not args.no_save:
        run_dir = run_dir_for(args.output_dir, args.env, model) / uuid.uuid4().hex[:8]
    todo = remaining_inputs(inputs, done, group_scoring)

    metadata = {
        **config,
        "base_url": client.base_url,
        "sampling_args": sampling,
        "status": "running",
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "version_info": {"vf_version": vf.__version__},
    }
    if run_dir is not None:
        if args.resume:
            metadata = {**read_metadata(run_dir), "status": "running"}
        write_metadata(run_dir, metadata)

    console.print(
        f"[bold]vf-eval[/] {args.env} · model {model} at {client.base_url} · "
        f"{num_examples} examples × {args.rollouts_per_example} rollouts"
        + (f" · resuming {len(done)} done" if done else "")
    )
    start = time.perf_counter()
    outputs, interrupted = _generate(env, todo, client, model, sampling, args, run_dir, len(done))
    elapsed = time.perf_counter() - start
    all_outputs = sorted(
        done + outputs, key=lambda o: (o.get("example_id", 0), o.get("rollout_index", 0))
    )
    summary = summarize(all_outputs, env.pass_threshold)
    complete = not interrupted and len(all_outputs) >= len(inputs)
    if run_dir is not None:
        write_metadata(
            run_dir,
            {
                **metadata,
                **summary,
                "status": "complete" if complete else "interrupted",
                "time": metadata.get("time", 0.0) + elapsed,
            },
        )
    print_summary(Console(), summary, elapsed, run_dir)
    first_errors: dict[str, str] = {}
    for o in all_outputs:
        err = o.get("error")
        if err and err.get("error") not in first_errors:
            first_errors[err["error"]] = err.get("message", "")
    for name, message in first_errors.items():
        console.print(f"[red]{escape(name)}[/]: {escape(message)}", highlight=False)
    failed_all = bool(all_outputs) and all(o.get("error") for o in all_outputs)
    if interrupted:
        console.print(
            f"[yellow]interrupted[/]: {len(all_outputs)} of {len(inputs)} rollouts saved; finish "
            f"with: vf-eval {args.env} ... --resume {run_dir}"
        )
        return 130
    if failed_all:
        console.print("[red]every rollout failed[/]")
        return 1
    return 0


def _generate(env, todo, client, model, sampling, args, run_dir, already_done):
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    total = len(todo) + already_done
    rewards: list[float] = []
    progress = Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("reward {task.fields[reward]}"),
        TextColumn("errors {task.fields[errors]}"),
        TimeElapsedColumn(),
        disable=args.no_progress,
        transient=False,
    )
    task_id = progress.add_task(
        "rollouts", total=total, completed=already_done, reward="-", errors=0
    )
    errors = 0
    outputs: list[dict[str, Any]] = []

    def on_progress(all_outputs: list[dict[str, Any]], batch: list[dict[str, Any]]) -> None:
        nonlocal errors
        outputs.extend(batch)
        for o in batch:
            r = o.get("reward")
            if r is not None and math.isfinite(r):
                rewards.append(r)
            if o.get("error"):
                errors += 1
        mean = f"{sum(rewards) / len(rewards):.3f}" if rewards else "-"
        progress.update(task_id, advance=len(batch), reward=mean, errors=errors)

    async def go() -> Any:
        try:
            return await env.generate(
                todo,
                client,
                model,
                sampling_args=sampling,
                max_concurrent=args.max_concurrent,
                results_path=run_dir,
                state_columns=[c for c in args.state_columns.split(",") if c],
                independent_scoring=args.independent_scoring,
                max_retries=args.max_retries,
                on_progress=on_progress,
            )
        finally:
            await client.aclose()
            await env.teardown()  # worker pools, sandboxes, judge clients

    # Everything imported so far lives for the whole run: keep the collector from re-scanning it
    # on every full collection (a quarter of the per-rollout CPU in profiles).
    gc.freeze()
    interrupted = False
    with progress:
        try:
            if todo:
                asyncio.run(go())
        except KeyboardInterrupt:
            interrupted = True
    return outputs, interrupted


def print_summary(console: Any, summary: dict[str, Any], elapsed: float, run_dir: Path | None):
    from rich.table import Table

    table = Table(title="vf-eval summary", show_header=False)
    table.add_row("rollouts", str(summary["num_rollouts"]))
    table.add_row("reward", f"{summary['avg_reward']:.4f} ± {summary['std_reward']:.4f}")
    for k, v in summary["pass_at_k"].items():
        table.add_row(f"pass@{k}", f"{v:.4f}")
    for name, value in sorted(summary["avg_metrics"].items()):
        table.add_row(f"metric {name}", f"{value:.4f}")
    errors = summary["errors"]
    table.add_row(
        "errors", ", ".join(f"{k}: {v}" for k, v in sorted(errors.items())) if errors else "none"
    )
    usage = summary["usage"]
    table.add_row(
        "tokens",
        f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out",
    )
    table.add_row("wall time", f"{elapsed:.2f}s")
    if run_dir is not None:
        table.add_row("results", str(run_dir))
    console.print(table)


if __name__ == "__main__":
    raise SystemExit(main())
