"""`vf-eval`: evaluate an environment against any OpenAI-compatible endpoint.

`vf-eval ENV [options]` runs one environment; `vf-eval evals.toml` runs every `[[eval]]` (and
expanded `[[ablation]]`) of a config, one after another. Results stream to
`outputs/evals/<env>--<model>/<run-id>/results.jsonl` (one line per rollout, flushed as each
finishes) with `metadata.json` beside it; `--resume` completes a partial run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import math
import os
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifiers.cli.eval_config import load_eval_config, mixture_name
from verifiers.cli.eval_display import (
    make_progress,
    print_errors,
    print_example,
    print_path,
    print_summary,
)
from verifiers.cli.eval_options import build_parser
from verifiers.cli.eval_ray import load_configured, ray_environment, ray_summary, ray_summary_fields
from verifiers.cli.eval_settings import (
    EvalSettings,
    UsageError,
    check_credentials,
    raw_from_args,
    resolve,
)
from verifiers.errors import ConfigError, EndpointUnreachableError, Error
from verifiers.loading import HUB_INSTALL_VAR
from verifiers.results import read_metadata, read_results, summarize, write_metadata

if TYPE_CHECKING:
    from verifiers.client import Client

__all__ = ["UsageError", "build_parser", "main"]

logger = logging.getLogger("verifiers.cli.eval")
RESUME_KEYS = ("env_id", "env_args", "model", "num_examples", "rollouts_per_example", "shuffle")
# Options that apply to the whole invocation, also when a config file gives the evaluations.
RUN_WIDE = {
    "env", "disable_tui", "fullscreen", "abbreviated_summary", "heartbeat_url", "no_install",
    "request_retries", "no_save", "save_results", "verbose", "view",
    *("ray", "ray_workers_per_node", "ray_resources", "ray_env_var", "ray_retry_lost"),
}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.disable_tui and args.fullscreen:
            raise UsageError(
                "--disable-tui and --fullscreen are mutually exclusive (-d turns the live "
                "display off; -f puts it on the alternate screen)"
            )
        _setup_logging(args)
        settings = [resolve(raw) for raw in eval_raws(parser, args)]
        for s in settings:
            check_credentials(s)
        if args.no_install:
            os.environ[HUB_INSTALL_VAR] = "0"
        args.viewer = start_viewer(args.view, settings)
        rc = run_all(settings, args)
        if args.viewer is not None:
            serve_until_interrupted(args.viewer)
        return rc
    except UsageError as e:
        print(f"vf-eval: error: {e}", file=sys.stderr)
        return 2
    except (Error, ValueError) as e:
        print(f"vf-eval: error: {e}", file=sys.stderr)
        return 1


def start_viewer(port: int | None, settings: list[EvalSettings]) -> Any:
    """`--view`: the rollout viewer over the runs' folder, on loopback, before the first
    rollout (so it shows the run as it grows). verifiers_viewer is imported only here."""
    if port is None:
        return None
    if not all(s.save for s in settings):
        raise UsageError("--view shows the saved rollouts: drop --no-save")
    try:
        from verifiers_viewer.server import ViewerPortError, ViewerServer
    except ImportError:
        raise UsageError("--view needs the rollout viewer: pip install 'verifiers[view]'") from None
    root = settings[0].runs_dir.parent
    root.mkdir(parents=True, exist_ok=True)
    try:
        return ViewerServer(root, port).start()
    except ViewerPortError as e:
        raise UsageError(f"--view: {e}") from None


def serve_until_interrupted(viewer: Any) -> None:
    print(f"vf-eval: the viewer keeps serving at {viewer.url} (Ctrl-C to stop)", file=sys.stderr)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        viewer.stop()


def _setup_logging(args: argparse.Namespace) -> None:
    """Warnings always, each once; -v: debug records; -d: info records (upstream logs to the
    console without its TUI). Third-party progress bars stay off the output."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(OnceFilter())
    handler.set_name("vf-eval")
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == "vf-eval"]:  # main() called again
        root.removeHandler(old)
    root.addHandler(handler)  # records of every logger, environments' too
    if args.verbose or args.disable_tui:
        logging.getLogger("verifiers").setLevel(logging.DEBUG if args.verbose else logging.INFO)


def _quiet_datasets() -> None:
    """`datasets` draws a tqdm bar for each map/filter/flatten an environment's loader runs.
    Called just before loading, not at start-up: importing `datasets` takes seconds, and a
    refused command line or an unreachable endpoint should answer without it."""
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()


class OnceFilter(logging.Filter):
    """Passes a record only the first time its logger, level and text occur (a mixture loads
    several environments from one source, and each warned the same)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[tuple[str, int, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.levelno, record.getMessage())
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


def metric_owners(env: Any) -> dict[str, list[str]] | None:
    """An `EnvGroup`'s members and the metrics each records (None for a single environment)."""
    env_map = getattr(env.rubric, "env_map", None)
    if not env_map:
        return None
    return {name: member.metric_names() for name, member in env_map.items()}


def eval_raws(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The evaluations to run, as upstream's config fields: the command line, or a config file."""
    mixture = mixture_name(Path(args.env)) if args.env.endswith(".toml") else None
    if mixture is not None:  # a mixture file is one environment; the command line applies
        raw = raw_from_args(args)
        raw["env_id"] = str(Path(args.env).resolve())
        raw["name"] = raw.get("name") or mixture
        return [raw]
    if not args.env.endswith(".toml"):
        return [raw_from_args(args)]
    try:
        configs = load_eval_config(Path(args.env))
    except ConfigError as e:
        raise UsageError(str(e)) from None
    defaults = vars(parser.parse_args([args.env]))
    ignored = sorted(
        "--" + k.replace("_", "-")
        for k, v in vars(args).items()
        if k not in RUN_WIDE and v != defaults.get(k)
    )
    if ignored:  # upstream ignores them silently; say so
        print(
            f"vf-eval: note: with a config file these options are ignored: {', '.join(ignored)}",
            file=sys.stderr,
        )
    for config in configs:
        config["request_retries"] = args.request_retries
        if args.ray and "ray" not in config:  # --ray runs every evaluation of the config there
            config.update(ray=args.ray, ray_workers_per_node=args.ray_workers_per_node)
            config.update(ray_resources=args.ray_resources, ray_env_vars=args.ray_env_var)
            config["ray_retry_lost"] = args.ray_retry_lost
        if args.no_save:
            config["save_results"] = False
        elif args.save_results:  # upstream: -s saves every eval of the config
            config["save_results"] = True
    return configs


def run_all(settings: list[EvalSettings], args: argparse.Namespace) -> int:
    """Each evaluation in turn; with several, one that fails does not stop the others."""
    status = 0
    for i, s in enumerate(settings):
        if len(settings) > 1:
            print(f"vf-eval: [{i + 1}/{len(settings)}] {s.name or s.env_id}", file=sys.stderr)
        try:
            rc = run(s, args)
        except UsageError:
            raise
        except (Error, ValueError) as e:
            if len(settings) == 1:
                raise
            print(f"vf-eval: error: {s.name or s.env_id}: {e}", file=sys.stderr)
            rc = 1
        if rc == 130:
            return rc
        status = max(status, rc)
    return status


def build_client(s: EvalSettings) -> Client:
    # Imported here, not at the top: `openai` takes a second or more to import, and a
    # command line that is refused (or --help) should answer without it.
    from verifiers.client import MultiEndpointClient, OpenAIClient

    clients: list[Client] = [
        OpenAIClient(
            e.url,
            api_key=os.environ.get(e.api_key_var, "EMPTY"),
            headers=e.headers,
            max_retries=s.request_retries,
        )
        for e in s.endpoints
    ]
    return clients[0] if len(clients) == 1 else MultiEndpointClient(clients)


def check_endpoints(client: Client, s: EvalSettings, console: Any) -> None:
    """Fail at once, naming the URL, when no endpoint accepts a connection; warn about (and
    skip) the replicas that refuse when others accept."""
    try:
        skipped = asyncio.run(client.check_connection())
    except EndpointUnreachableError as e:
        origins = sorted({p.origin for p in s.endpoints} - {"-b/--api-base-url"})
        where = f" (the URL came from {', '.join(origins)})" if origins else ""
        raise EndpointUnreachableError(
            f"cannot reach the model endpoint: {e}. Start the server, or pass the URL of a "
            f"running one with -b/--api-base-url{where}"
        ) from None
    for problem in skipped:
        console.print(f"[yellow]warning[/]: {problem}; its share goes to the other endpoints")


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


def _resume_dir(s: EvalSettings, config: dict[str, Any], console: Any) -> Path | None:
    """The run to complete: the one named, or the latest unfinished matching one (None: none)."""
    if s.resume is True:
        run_dir = find_resumable(s.runs_dir, config)
        if run_dir is None:  # upstream: nothing to resume is not an error
            console.print(f"no unfinished run of {s.env_id} with {s.model}; starting a new one")
        return run_dir
    run_dir = Path(str(s.resume))
    meta = read_metadata(run_dir)
    if not meta:
        raise UsageError(f"--resume: {run_dir} has no metadata.json")
    mismatched = [k for k in RESUME_KEYS if meta.get(k) != config[k]]
    if mismatched:
        details = ", ".join(f"{k}: run {meta.get(k)!r} vs now {config[k]!r}" for k in mismatched)
        raise UsageError(f"--resume: {run_dir} was a different run ({details})")
    return run_dir


def run(s: EvalSettings, args: argparse.Namespace) -> int:
    from rich.console import Console

    import verifiers as vf

    console = Console(stderr=True)
    logger.debug("evaluation settings: %s", s)
    client = build_client(s)
    check_endpoints(client, s, console)  # before loading: that may take minutes
    _quiet_datasets()
    try:
        env = load_configured(s) if s.ray is None else ray_environment(s)
    except ConfigError as e:
        raise UsageError(str(e)) from None

    inputs = env.eval_inputs(s.num_examples, s.rollouts_per_example, s.shuffle, s.shuffle_seed)
    num_examples = len(inputs) // max(1, s.rollouts_per_example)
    short = 0 < num_examples < s.num_examples or (s.num_examples > 0 and not inputs)
    if short:  # upstream runs what there is without a word
        console.print(
            f"[yellow]warning[/]: {s.num_examples} examples asked for (-n), but {s.env_id} has "
            f"only {num_examples}: running {num_examples}"
        )
    config = {
        "env_id": s.env_id,
        "env_args": s.env_args,
        "model": s.model,
        "num_examples": num_examples,
        "rollouts_per_example": s.rollouts_per_example,
        "shuffle": s.shuffle,
    }
    group_scoring = env.rubric.has_group_funcs and not s.independent_scoring

    done: list[dict[str, Any]] = []
    run_dir = _resume_dir(s, config, console) if s.resume else None
    resuming = run_dir is not None
    if run_dir is not None:  # resuming
        done = read_results(run_dir)
        if group_scoring:  # drop partial groups (cannot be re-scored together)
            per_example = Counter(i["example_id"] for i in inputs)
            counts = Counter(o.get("example_id") for o in done)
            done = [
                o for o in done if counts[o.get("example_id")] >= per_example[o.get("example_id")]
            ]
    elif s.save:
        run_dir = s.runs_dir / uuid.uuid4().hex[:8]
    todo = remaining_inputs(inputs, done, group_scoring)

    metadata: dict[str, Any] = {
        **config,
        **({"num_examples_requested": s.num_examples} if short else {}),
        **({"name": s.name} if s.name else {}),
        "base_url": client.base_url,
        "sampling_args": s.sampling_args,
        "status": "running",
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "version_info": {"vf_version": vf.__version__},
        **({"ray": {"address": s.ray.address, **ray_summary_fields(env)}} if s.ray else {}),
    }
    if run_dir is not None:
        if resuming:
            metadata = {**read_metadata(run_dir), "status": "running"}
        write_metadata(run_dir, metadata)
        if getattr(args, "viewer", None) is not None:
            print(
                f"vf-eval: viewing at {args.viewer.run_url(run_dir)}", file=sys.stderr, flush=True
            )

    console.print(
        f"[bold]vf-eval[/] {s.name or s.env_id} · model {s.model} at {client.base_url} · "
        f"{num_examples} examples × {s.rollouts_per_example} rollouts"
        + (f" · on Ray ({ray_summary(env)})" if s.ray is not None else "")
        + (f" · resuming {len(done)} done" if done else "")
    )
    start = time.perf_counter()
    outputs, interrupted = _generate(env, todo, client, s, args, run_dir, len(done))
    elapsed = time.perf_counter() - start
    all_outputs = sorted(
        done + outputs, key=lambda o: (o.get("example_id", 0), o.get("rollout_index", 0))
    )
    summary = summarize(all_outputs, env.pass_threshold, metric_owners(env))
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
    out = Console()
    print_summary(out, f"vf-eval summary: {s.name or s.env_id}", summary, elapsed, run_dir)
    if not args.abbreviated_summary:
        print_example(out, all_outputs)
    print_errors(console, all_outputs)
    if interrupted:
        console.print(
            f"[yellow]interrupted[/]: {len(all_outputs)} of {len(inputs)} rollouts saved; finish "
            "with:"
        )
        print_path(console, f"vf-eval {s.env_id} ... --resume {run_dir}")
        return 130
    if all_outputs and all(o.get("error") for o in all_outputs):
        console.print("[red]every rollout failed[/]")
        return 1
    return 0


class Heartbeat:
    """GETs a monitoring URL as rollouts finish, one request at a time (upstream's beat)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None

    def beat(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._get())

    async def _get(self) -> None:
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5))
        try:
            async with self._session.get(self.url) as resp:
                await resp.read()
        except (aiohttp.ClientError, TimeoutError) as e:
            logger.warning("heartbeat to %s failed: %s", self.url, e)

    async def aclose(self) -> None:
        if self._task is not None:
            await self._task
        if self._session is not None:
            await self._session.close()


def _generate(
    env: Any,
    todo: list[dict[str, Any]],
    client: Client,
    s: EvalSettings,
    args: argparse.Namespace,
    run_dir: Path | None,
    already_done: int,
) -> tuple[list[dict[str, Any]], bool]:
    from rich.console import Console

    total = len(todo) + already_done
    rewards: list[float] = []
    progress = make_progress(args.disable_tui)
    task_id = progress.add_task(
        "rollouts", total=total, completed=already_done, reward="-", errors=0
    )
    errors = 0
    outputs: list[dict[str, Any]] = []
    heart = Heartbeat(args.heartbeat_url) if args.heartbeat_url else None

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
        if heart is not None:
            heart.beat()

    async def go() -> Any:
        try:
            return await env.generate(
                todo,
                client,
                s.model,
                sampling_args=s.sampling_args,
                max_concurrent=s.max_concurrent,
                results_path=run_dir,
                state_columns=s.state_columns,
                independent_scoring=s.independent_scoring,
                max_retries=s.max_retries,
                on_progress=on_progress,
            )
        finally:
            if heart is not None:
                await heart.aclose()
            await client.aclose()
            await env.teardown()  # worker pools, sandboxes, judge clients

    # Everything imported so far lives for the whole run: keep the collector from re-scanning it
    # on every full collection (a quarter of the per-rollout CPU in profiles).
    gc.freeze()
    interrupted = False
    screen = Console().screen() if args.fullscreen else contextlib.nullcontext()
    with screen, progress:
        try:
            if todo:
                asyncio.run(go())
        except KeyboardInterrupt:
            interrupted = True
    return outputs, interrupted


if __name__ == "__main__":
    raise SystemExit(main())
