"""One evaluation's settings, resolved from the command line or from one `[[eval]]` of a config.

Both sources first become a flat dict keyed by upstream's TOML field names (`raw_from_args`,
`eval_config.load_eval_config`); `resolve` turns that into `EvalSettings`: the endpoint (registry,
provider, explicit flags), the sampling args, the environment's own eval defaults, where results go.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from verifiers.cli import eval_options as opt
from verifiers.errors import ConfigError
from verifiers.loading import environment_module_name
from verifiers.utils.json_object import json_object


class UsageError(ConfigError):
    """A bad command line or config: printed as one line, exit status 2."""


@dataclass
class Endpoint:
    url: str
    api_key_var: str
    headers: dict[str, str] = field(default_factory=dict)
    origin: str = "vf-eval's default"  # where the URL came from, for error messages


@dataclass
class EvalSettings:
    env_id: str
    name: str | None
    env_args: dict[str, Any]
    extra_env_kwargs: dict[str, Any]
    timeout: float | None
    model: str
    endpoints: list[Endpoint]
    request_retries: int
    sampling_args: dict[str, Any]
    num_examples: int
    rollouts_per_example: int
    shuffle: bool
    shuffle_seed: int
    max_concurrent: int
    max_retries: int
    independent_scoring: bool
    state_columns: list[str]
    runs_dir: Path  # <output base>/evals/<name or env>--<model>
    save: bool
    resume: bool | str | None
    verbose: bool
    ray: RaySettings | None = None


@dataclass
class RaySettings:
    """Where and how the rollouts run on a Ray cluster (`--ray`)."""

    address: str
    workers_per_node: int = 1
    resources: dict[str, float] = field(default_factory=dict)
    env_vars: list[str] = field(default_factory=list)
    retry_lost: int = 0


def parse_json_object(value: Any, flag: str) -> dict[str, Any]:
    """A copy of the object `flag` gives (as JSON text or a table); a usage error if it is not
    one."""
    return dict(json_object(value, flag, error=UsageError))


def parse_header_lines(values: Any, flag: str) -> dict[str, str]:
    if values is None:
        return {}
    if not isinstance(values, list):
        raise UsageError(f"{flag} must be a list of 'Name: Value' strings")
    headers = {}
    for raw in values:
        name, sep, value = str(raw).partition(":")
        if not isinstance(raw, str) or not sep or not name.strip():
            raise UsageError(f"{flag} must look like 'Name: Value', got {raw!r}")
        headers[name.strip()] = value.strip()
    return headers


def raw_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The command line as upstream's config fields (JSON flags parsed, lists split)."""
    raw = {k: v for k, v in vars(args).items() if k != "env"}
    raw["env_id"] = args.env
    raw["env_args"] = parse_json_object(args.env_args, "--env-args")
    raw["extra_env_kwargs"] = parse_json_object(args.extra_env_kwargs, "--extra-env-kwargs")
    raw["sampling_args"] = parse_json_object(args.sampling_args, "--sampling-args")
    raw["state_columns"] = [c.strip() for c in (args.state_columns or "").split(",") if c.strip()]
    raw["save_results"] = not args.no_save
    return raw


def resolve(raw: dict[str, Any]) -> EvalSettings:
    env_id = raw["env_id"]
    name = raw.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise UsageError("'name' must be a non-empty string")
    _refuse_unavailable(raw)
    defaults = env_eval_defaults(env_id)
    num_examples = _first(raw.get("num_examples"), defaults.get("num_examples"))
    rollouts = _first(raw.get("rollouts_per_example"), defaults.get("rollouts_per_example"))
    shuffle = bool(raw.get("shuffle", False))
    model, endpoints = resolve_endpoints(raw)
    sampling = dict(parse_json_object(raw.get("sampling_args"), "sampling_args"))
    # -t / -T fill in what the sampling args leave unset (upstream's precedence)
    if raw.get("max_tokens") is not None:
        sampling.setdefault("max_tokens", raw["max_tokens"])
    if raw.get("temperature") is not None:
        sampling.setdefault("temperature", raw["temperature"])
    resume = raw.get("resume", raw.get("resume_path"))
    if resume is not None and not isinstance(resume, (bool, str)):
        raise UsageError(f"resume must be true or a run directory, got {resume!r}")
    state_columns = raw.get("state_columns") or []
    if isinstance(state_columns, str):
        state_columns = [c.strip() for c in state_columns.split(",") if c.strip()]
    return EvalSettings(
        env_id=env_id,
        name=name,
        env_args=parse_json_object(raw.get("env_args"), "--env-args"),
        extra_env_kwargs=parse_json_object(raw.get("extra_env_kwargs"), "--extra-env-kwargs"),
        timeout=raw.get("timeout"),
        model=model,
        endpoints=endpoints,
        request_retries=int(raw.get("request_retries", 5)),
        sampling_args=sampling,
        num_examples=int(_first(num_examples, opt.DEFAULT_NUM_EXAMPLES)),
        rollouts_per_example=int(_first(rollouts, opt.DEFAULT_ROLLOUTS_PER_EXAMPLE)),
        shuffle=shuffle,
        shuffle_seed=int(_first(raw.get("shuffle_seed"), 0)),
        max_concurrent=int(raw.get("max_concurrent", opt.DEFAULT_MAX_CONCURRENT)),
        max_retries=int(raw.get("max_retries", opt.DEFAULT_MAX_RETRIES)),
        independent_scoring=bool(raw.get("independent_scoring", False)),
        state_columns=list(state_columns),
        runs_dir=runs_dir(
            env_id,
            model,
            raw.get("output_dir"),
            raw.get("env_dir_path") or opt.DEFAULT_ENV_DIR_PATH,
            name,
        ),
        save=bool(raw.get("save_results", True)),
        resume=resume or None,
        verbose=bool(raw.get("verbose", False)),
        ray=ray_settings(raw),
    )


def ray_settings(raw: dict[str, Any]) -> RaySettings | None:
    """`--ray` and its options (or the config's `ray = "auto"` and `ray_*` keys)."""
    address = raw.get("ray")
    if address in (None, ""):
        return None
    if not isinstance(address, str):
        raise UsageError(
            f"ray must be a cluster address ('auto', HOST:PORT, 'local'), got {address!r}"
        )
    resources = parse_json_object(raw.get("ray_resources"), "--ray-resources")
    if not all(isinstance(v, int | float) and v >= 0 for v in resources.values()):
        raise UsageError(f"--ray-resources values must be non-negative numbers, got {resources}")
    env_vars = raw.get("ray_env_var", raw.get("ray_env_vars")) or []
    if isinstance(env_vars, str):
        env_vars = [v.strip() for v in env_vars.split(",") if v.strip()]
    workers = int(raw.get("ray_workers_per_node", 1))
    retry = int(raw.get("ray_retry_lost", 0))
    if workers < 1 or retry < 0:
        raise UsageError("--ray-workers-per-node must be >= 1 and --ray-retry-lost >= 0")
    return RaySettings(address, workers, dict(resources), list(env_vars), retry)


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _refuse_unavailable(raw: dict[str, Any]) -> None:
    """Upstream options this vf-eval cannot honour: say so instead of silently ignoring them."""
    if raw.get("header_from_state") or raw.get("headers_from_state"):
        raise UsageError(
            "--header-from-state is not available: the model client sends the same headers on "
            "every request and never sees the rollout state (use --header for fixed headers)"
        )
    if raw.get("save_to_hf_hub"):
        raise UsageError(
            "--save-to-hf-hub is not available: this vf-eval does not upload; the run's "
            "results.jsonl can be pushed with `datasets` (Dataset.from_json(...).push_to_hub)"
        )
    workers = raw.get("num_workers", "auto")
    if str(workers) != "auto":
        try:
            count = int(workers)
        except (TypeError, ValueError):
            raise UsageError(
                f"--num-workers must be 'auto' or an integer, got {workers!r}"
            ) from None
        if count != 1:
            raise UsageError(
                f"--num-workers {count}: there are no env server worker processes here; "
                "rollouts run concurrently in this process (use -c to set how many)"
            )


def env_eval_defaults(env_id: str) -> dict[str, Any]:
    """`[tool.verifiers.eval]` num_examples / rollouts_per_example of the environment's
    pyproject.toml, found beside its installed module (upstream 0.3.1's lookup)."""
    try:
        spec = importlib.util.find_spec(environment_module_name(env_id))
    except (ImportError, ValueError):
        return {}
    if spec is None:
        return {}
    if spec.submodule_search_locations:
        base = Path(next(iter(spec.submodule_search_locations)))
    elif spec.origin:
        base = Path(spec.origin).parent
    else:
        return {}
    try:
        data = tomllib.loads((base / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    # A single-file module's pyproject lands in site-packages itself, shared with every other
    # such environment: use it only when it names this environment (upstream does not check).
    project = data.get("project", {}).get("name")
    if isinstance(project, str) and _norm(project) != _norm(environment_module_name(env_id)):
        return {}
    section = data.get("tool", {}).get("verifiers", {}).get("eval", {})
    if not isinstance(section, dict):
        return {}
    return {k: section[k] for k in ("num_examples", "rollouts_per_example") if k in section}


def _norm(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def runs_dir(
    env_id: str, model: str, output_dir: str | None, env_dir_path: str, name: str | None
) -> Path:
    if output_dir is not None:
        base = Path(output_dir)
    else:  # upstream: a local environment folder keeps its own outputs
        local = Path(env_dir_path) / environment_module_name(env_id)
        base = local / "outputs" if local.is_dir() else Path("./outputs")
    label = (name or env_id).replace("/", "--")
    return base / "evals" / f"{label}--{model.replace('/', '--')}"


def load_registry(path: str) -> dict[str, list[dict[str, Any]]]:
    """`[[endpoint]]` rows by endpoint_id (`url`/`api_base_url`, `key`/`api_key_var` aliases)."""
    file = Path(path)
    if file.is_dir():
        file = file / "endpoints.toml"
    if file.suffix == ".py":
        raise UsageError(f"{path}: Python endpoint registries are not supported; use TOML")
    if not file.is_file():
        return {}
    try:
        data = tomllib.loads(file.read_text())
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"endpoints file {file} is not valid TOML: {e}") from None
    rows = data.get("endpoint") or []
    if not isinstance(rows, list):
        raise UsageError(f"endpoints file {file}: [[endpoint]] must be an array of tables")
    registry: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        eid = row.get("endpoint_id") if isinstance(row, dict) else None
        if not isinstance(eid, str) or not eid:
            raise UsageError(f"endpoints file {file}: every [[endpoint]] needs an endpoint_id")
        url = row.get("url") or row.get("api_base_url")
        key = row.get("key") or row.get("api_key_var")
        if not row.get("model") or not url:
            missing = "model" if not row.get("model") else "url"
            raise UsageError(f"endpoints file {file}: endpoint {eid!r} has no {missing!r}")
        headers = row.get("headers") or row.get("extra_headers") or {}
        registry.setdefault(eid, []).append(
            {
                "model": row["model"],
                "url": url,
                "key": key,
                "headers": dict(headers),
                "api_client_type": row.get("api_client_type"),
            }
        )
    return registry


@dataclass
class EndpointRequest:
    """What one evaluation asks of its endpoint: the endpoint fields of the raw settings,
    checked. Each source below (registry, provider, flags and environment) reads only this."""

    model: str
    endpoint_id: str | None
    provider: str | None
    base_url: str | None
    key_var: str | None
    client_type: str | None
    headers: dict[str, str]
    registry_path: str

    @classmethod
    def from_raw(cls, raw: dict[str, Any]) -> EndpointRequest:
        endpoint_id = raw.get("endpoint_id")
        if endpoint_id is not None and raw.get("model") is not None:
            raise UsageError("set either endpoint_id or model, not both")
        if endpoint_id is not None and (not isinstance(endpoint_id, str) or not endpoint_id):
            raise UsageError("endpoint_id must be a non-empty string")
        provider = raw.get("provider")
        if provider is not None and provider not in opt.PROVIDERS:
            raise UsageError(f"unknown provider {provider!r}; one of {', '.join(opt.PROVIDERS)}")
        base_url = raw.get("api_base_url")
        if isinstance(base_url, list):
            raise UsageError(
                "api_base_url must be one URL; use endpoint_id and a registry for more"
            )
        return cls(
            model=raw.get("model") or opt.DEFAULT_MODEL,
            endpoint_id=endpoint_id,
            provider=provider,
            base_url=base_url,
            key_var=raw.get("api_key_var"),
            client_type=raw.get("api_client_type"),
            headers={
                **parse_json_object(raw.get("headers"), "headers"),
                **parse_header_lines(raw.get("header"), "--header"),
            },
            registry_path=raw.get("endpoints_path") or opt.DEFAULT_ENDPOINTS_PATH,
        )

    @property
    def direct(self) -> bool:
        """-b and -k both given without an endpoint id: the registry is not consulted."""
        return self.endpoint_id is None and self.base_url is not None and self.key_var is not None

    @property
    def lookup(self) -> str:
        return self.endpoint_id or self.model


# One source's answer: (model id, endpoints, api client type or None).
Resolved = tuple[str, list[Endpoint], str | None]


def _from_registry(req: EndpointRequest, rows: list[dict[str, Any]]) -> Resolved:
    """Registry rows for the endpoint id (or model): every row, or the first one with -p, -b
    and -k over it."""
    models = sorted({r["model"] for r in rows})
    if len(models) > 1:
        raise UsageError(f"endpoint {req.lookup!r} maps to several models {models}")
    provider = opt.PROVIDERS[req.provider] if req.provider else None
    client_type = (
        req.client_type or (provider and provider.get("client_type")) or rows[0]["api_client_type"]
    )
    if req.provider is None and req.base_url is None and len(rows) > 1:
        return models[0], [_row_endpoint(req, r) for r in rows], client_type
    return models[0], [_overridden_row_endpoint(req, rows[0], provider)], client_type


def _row_origin(req: EndpointRequest) -> str:
    return f"endpoint {req.lookup!r} of {req.registry_path}"


def _row_endpoint(req: EndpointRequest, row: dict[str, Any]) -> Endpoint:
    key = req.key_var or row["key"] or opt.DEFAULT_API_KEY_VAR
    return Endpoint(row["url"], key, {**row["headers"], **req.headers}, _row_origin(req))


def _overridden_row_endpoint(
    req: EndpointRequest, row: dict[str, Any], provider: dict[str, Any] | None
) -> Endpoint:
    """The row, with -b's URL, else the provider's; -k's key variable, else the provider's."""
    if req.base_url:
        origin = "-b/--api-base-url"
    else:
        origin = f"-p {req.provider}" if provider else _row_origin(req)
    url = req.base_url or (provider["url"] if provider else row["url"])
    key = req.key_var or (provider["key"] if provider else row["key"])
    return Endpoint(url, key or opt.DEFAULT_API_KEY_VAR, {**row["headers"], **req.headers}, origin)


def _from_provider(req: EndpointRequest, provider: str) -> Resolved:
    """-p NAME: the provider table's URL and key variable, unless -b / -k say otherwise."""
    cfg = opt.PROVIDERS[provider]
    origin = "-b/--api-base-url" if req.base_url else f"-p {provider}"
    endpoint = Endpoint(req.base_url or cfg["url"], req.key_var or cfg["key"], req.headers, origin)
    return req.model, [endpoint], req.client_type or cfg.get("client_type")


def _from_flags_or_environment(req: EndpointRequest) -> Resolved:
    """-b, else $OPENAI_BASE_URL, else the default: OpenAI's conventions, not upstream's
    default provider (see README)."""
    env_url = os.environ.get("OPENAI_BASE_URL")
    if req.base_url:
        url, origin = req.base_url, "-b/--api-base-url"
    elif env_url:
        url, origin = env_url, "$OPENAI_BASE_URL"
    else:
        url, origin = opt.DEFAULT_BASE_URL, Endpoint.origin
    endpoint = Endpoint(url, req.key_var or opt.DEFAULT_API_KEY_VAR, req.headers, origin)
    return req.model, [endpoint], req.client_type


def _check_client_type(client_type: str | None) -> None:
    if client_type not in (None, opt.SUPPORTED_CLIENT_TYPE):
        raise UsageError(
            f"api client type {client_type!r} is not available: this vf-eval speaks the OpenAI "
            f"chat completions API only ({opt.SUPPORTED_CLIENT_TYPE}); point -b at an "
            "OpenAI-compatible endpoint"
        )


def resolve_endpoints(raw: dict[str, Any]) -> tuple[str, list[Endpoint]]:
    """(model id, endpoints): registry row(s), then --provider, then -b / -k, then
    $OPENAI_BASE_URL, then the default (upstream order; the first source that answers wins)."""
    req = EndpointRequest.from_raw(raw)
    rows = None if req.direct else load_registry(req.registry_path).get(req.lookup)
    if rows:
        resolved = _from_registry(req, rows)
    elif req.endpoint_id is not None:
        raise UsageError(f"endpoint id {req.endpoint_id!r} is not in the endpoint registry")
    elif req.provider is not None:
        resolved = _from_provider(req, req.provider)
    else:
        resolved = _from_flags_or_environment(req)
    model, endpoints, client_type = resolved
    _check_client_type(client_type)
    return model, endpoints


# Hosts of the hosted APIs in the provider table: a request there without a key is refused.
HOSTED_API_HOSTS = frozenset(
    h for h in (urlsplit(p["url"]).hostname for p in opt.PROVIDERS.values())
    if h and h != "localhost"
)  # fmt: skip
NO_ENDPOINT = (
    "no model endpoint is configured, and OPENAI_API_KEY is not set for the default "
    f"({opt.DEFAULT_BASE_URL}). Point vf-eval at a server: -b/--api-base-url URL (a local vLLM: "
    "-b http://localhost:8000/v1), or $OPENAI_BASE_URL, or an [[endpoint]] row of "
    f"{opt.DEFAULT_ENDPOINTS_PATH} (-e PATH) picked with -m ENDPOINT_ID; or a hosted API with "
    "-p/--provider NAME and its key variable set (-k VAR names another). To use OpenAI, set "
    "OPENAI_API_KEY"
)


def check_credentials(s: EvalSettings) -> None:
    """Refuse before anything runs what cannot work: a hosted API without its key (upstream
    sends the key "EMPTY" and every request comes back 401). Other hosts may need no key."""
    for e in s.endpoints:
        if urlsplit(e.url).hostname not in HOSTED_API_HOSTS or os.environ.get(e.api_key_var):
            continue
        if e.origin == Endpoint.origin:  # nothing was configured
            raise UsageError(NO_ENDPOINT)
        raise UsageError(
            f"{e.url} (from {e.origin}) needs an API key: ${e.api_key_var} is not set; set it, "
            "or name the variable that holds the key with -k/--api-key-var"
        )
