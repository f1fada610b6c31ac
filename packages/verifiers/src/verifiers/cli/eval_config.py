"""Multi-environment eval configs: `vf-eval evals.toml` (upstream 0.3.1's format).

Top-level keys are defaults for every eval; each `[[eval]]` table is one evaluation; each
`[[ablation]]` expands into the cartesian product of its `[ablation.sweep]` lists (and of
`[ablation.sweep.args]` lists, merged into the environment args). `id` is the same as
`env_id`, `args` the same as `env_args`, a `[sampling]` table the same as `sampling_args`.
"""

from __future__ import annotations

import itertools
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verifiers.errors import ConfigError
from verifiers.utils.config_files import read_toml, reject_unknown_fields

# The fields a config may set: the command line's options, by their upstream TOML names.
FIELDS = frozenset(
    {
        "env_id", "name", "args", "env_args", "env_dir_path", "endpoints_path",
        "extra_env_kwargs", "provider", "endpoint_id", "model", "api_client_type",
        "api_key_var", "api_base_url", "header", "headers", "header_from_state",
        "headers_from_state", "sampling", "sampling_args", "max_tokens", "temperature",
        "num_examples", "rollouts_per_example", "shuffle", "shuffle_seed", "max_concurrent",
        "independent_scoring", "max_retries", "num_workers", "disable_env_server", "timeout",
        "verbose", "disable_tui", "output_dir", "state_columns", "save_results", "resume",
        "resume_path", "save_to_hf_hub", "hf_hub_dataset_name",
        # v1 composable environments: recognised so that the error can say what they are
        "taskset", "harness",
        # ours: run the rollouts on a Ray cluster (vf-eval --ray and its options)
        "ray", "ray_workers_per_node", "ray_resources", "ray_env_vars", "ray_retry_lost",
    }
)  # fmt: skip
# Sampling keys that OpenAI-compatible servers (vLLM) read from the chat template kwargs.
CHAT_TEMPLATE_KEYS = ("reasoning_effort", "enable_thinking")


def load_eval_config(path: Path) -> list[dict[str, Any]]:
    """The evaluations a config file describes, each a flat dict of fields (see FIELDS)."""
    data = read_toml(path, "TOML config file")
    evals, ablations = data.get("eval", []), data.get("ablation", [])
    for key, value in (("eval", evals), ("ablation", ablations)):
        if not isinstance(value, list):
            raise ConfigError(f"{path}: write [[{key}]] (an array of tables), not [{key}]")
    if not evals and not ablations:
        raise ConfigError(f"{path} has no [[eval]] or [[ablation]] section")
    defaults = {k: v for k, v in data.items() if k not in ("eval", "ablation")}
    reject_unknown_fields(defaults, FIELDS - {"name"}, f"{path}: top level")
    defaults = _normalize(_id_alias(defaults, "top level"), "top level")

    configs = []
    for i, table in enumerate(evals):
        section = f"{path}: [[eval]] #{i + 1}"
        table = _id_alias(_table(table, section), section)
        reject_unknown_fields(table, FIELDS, section)
        table = _normalize(table, section)
        configs.append(_env_args(_over(defaults, table), section))
    for i, table in enumerate(ablations):
        section = f"{path}: [[ablation]] #{i + 1}"
        configs.extend(_expand(_table(table, section), defaults, section))

    for config in configs:
        if not isinstance(config.get("env_id"), str) or not config["env_id"]:
            raise ConfigError(f"{path}: every evaluation needs an id (or env_id)")
        # a relative registry path means relative to the config file, as upstream resolves it
        ep = config.get("endpoints_path")
        if isinstance(ep, str) and not Path(ep).is_absolute():
            config["endpoints_path"] = str((path.parent / ep).resolve())
    return configs


def mixture_name(path: Path) -> str | None:
    """The name of the mixture a `[mixture]` file describes (its `name`, else the file's stem),
    or None for any other file. `vf-eval mix.toml` runs such a file as one environment."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None  # load_eval_config reports it
    mixture = data.get("mixture")
    if not isinstance(mixture, Mapping):
        return None
    name = mixture.get("name")
    return name if isinstance(name, str) and name else path.stem


def _table(value: Any, section: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{section} must be a table, got {type(value).__name__}")
    return dict(value)


def _id_alias(table: dict[str, Any], section: str) -> dict[str, Any]:
    if "id" in table:
        if "env_id" in table:
            raise ConfigError(f"{section} sets both id and env_id")
        table = {**table, "env_id": table["id"]}
        del table["id"]
    return table


def _over(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """`top` over `base`; a table's own model and endpoint_id exclude the other's inherited one."""
    merged = {**base, **top}
    if "endpoint_id" in top and "model" not in top:
        merged.pop("model", None)
    if "model" in top and "endpoint_id" not in top:
        merged.pop("endpoint_id", None)
    return merged


def _sampling_table(value: Any, section: str) -> dict[str, Any]:
    table = dict(_table(value, section))
    mirrored = {k: table[k] for k in CHAT_TEMPLATE_KEYS if k in table}
    if mirrored:  # kept at the top level too: the client may translate them per provider
        extra = dict(_table(table.get("extra_body") or {}, f"{section}.extra_body"))
        ctk = _table(extra.get("chat_template_kwargs") or {}, f"{section}.chat_template_kwargs")
        extra["chat_template_kwargs"] = {**ctk, **mirrored}
        table["extra_body"] = extra
    return table


def _merge_sampling(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    merged = {**base, **top}
    if isinstance(base.get("extra_body"), Mapping) and isinstance(top.get("extra_body"), Mapping):
        extra = {**base["extra_body"], **top["extra_body"]}
        a, b = (
            base["extra_body"].get("chat_template_kwargs"),
            top["extra_body"].get("chat_template_kwargs"),
        )
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            extra["chat_template_kwargs"] = {**a, **b}
        merged["extra_body"] = extra
    return merged


def _normalize(table: dict[str, Any], section: str, *, merge: bool = False) -> dict[str, Any]:
    """`sampling` folded into `sampling_args` (chat template keys mirrored into extra_body)."""
    out = dict(table)
    if "sampling_args" in out:
        out["sampling_args"] = _sampling_table(out["sampling_args"], f"{section}.sampling_args")
    if "sampling" in out:
        if "sampling_args" in out and not merge:
            raise ConfigError(f"{section} sets both sampling and sampling_args")
        sampling = _sampling_table(out.pop("sampling"), f"{section}.sampling")
        out["sampling_args"] = _merge_sampling(out.get("sampling_args") or {}, sampling)
    return out


def _env_args(config: dict[str, Any], section: str) -> dict[str, Any]:
    """`args` and `env_args` folded into `env_args`; v1 `taskset`/`harness` refused."""
    for key in ("taskset", "harness"):
        if key in config:
            raise ConfigError(
                f"{section}: '{key}' configures a v1 composable environment, which this "
                f"vf-eval does not run; give the classic environment's id and its args"
            )
    out = dict(config)
    env_args = _table(out.pop("env_args", {}), f"{section}.env_args")
    args = _table(out.pop("args", {}), f"{section}.args")
    both = sorted(set(env_args) & set(args))
    if both:
        raise ConfigError(f"{section}: {', '.join(both)} set in both args and env_args")
    out["env_args"] = {**env_args, **args}
    return out


def _expand(ablation: dict[str, Any], defaults: dict[str, Any], section: str) -> list[dict]:
    """One eval config per combination of the sweep's values."""
    sweep = _id_alias(_table(ablation.pop("sweep", {}), f"{section}.sweep"), f"{section}.sweep")
    ablation = _id_alias(ablation, section)
    reject_unknown_fields(ablation, FIELDS, section)
    ablation = _normalize(ablation, section)
    arg_sweeps = {
        **_table(sweep.pop("env_args", {}), f"{section}.sweep.env_args"),
        **_table(sweep.pop("args", {}), f"{section}.sweep.args"),
    }
    reject_unknown_fields(sweep, FIELDS, f"{section}.sweep")
    dims: list[tuple[str, bool, list[Any]]] = []
    for key, values in sweep.items():
        dims.append((key, False, values))
    for key, values in arg_sweeps.items():
        dims.append((key, True, values))
    for key, _, values in dims:
        if not isinstance(values, list):
            raise ConfigError(
                f"{section}: sweep values must be lists, got {type(values).__name__} for {key!r}"
            )
    if not dims:
        raise ConfigError(f"{section} needs a non-empty [ablation.sweep]")
    fixed_args = {
        **_table(ablation.get("env_args", {}), f"{section}.env_args"),
        **_table(ablation.get("args", {}), f"{section}.args"),
    }
    both = sorted(set(fixed_args) & set(arg_sweeps))
    if both:
        raise ConfigError(f"{section}: {', '.join(both)} both fixed and swept in args")
    fixed = _over(defaults, {**ablation, **{k: None for k in sweep}})
    configs = []
    for combo in itertools.product(*(values for _, _, values in dims)):
        config = {k: v for k, v in fixed.items() if k not in sweep}
        swept_args: dict[str, Any] = {}
        for (key, is_arg, _), value in zip(dims, combo, strict=True):
            if is_arg:
                swept_args[key] = value
            else:
                config[key] = value
        config = _env_args(config, section)
        config["env_args"] = {**config["env_args"], **swept_args}
        configs.append(_normalize(config, section, merge=True))
    return configs
