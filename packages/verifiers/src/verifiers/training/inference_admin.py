"""Weight updates on running inference servers, through prime-rl's vLLM server extensions.

prime-rl's inference server (src/prime_rl/inference/vllm/server.py, tags v0.2 and v0.5.0)
adds these routes at the server root (no `/v1`), and its orchestrator
(src/prime_rl/utils/client.py) calls them on every server of the pool at once:

* `POST /pause` (query `mode=keep&clear_cache=false`) and `POST /resume`: in-flight requests
  are held, not aborted, and continue on the new weights (v0.5.0);
* `POST /update_weights` `{"weight_dir": path | null}`: load a checkpoint directory (the
  trainer writes `<output>/broadcasts/step_N`), or with NCCL receive the trainer's broadcast;
  the prefix cache is reset. v0.5.0 pauses all servers first and resumes them afterwards;
* `POST /reload_weights` `{}`: back to the base model's weights (v0.2 only);
* `POST /init_broadcaster`: join the trainer's NCCL group. v0.5.0 sends `host`, `port`,
  `timeout`, `rank_offset`, `inference_world_size`, `gpus_per_server`,
  `quantize_in_weight_transfer`; v0.2 sent `server_rank` and `num_inference_server`;
* vLLM's own `GET /health` and `GET /v1/models`.

`InferenceAdmin` sends exactly these, plus one field of ours in the update payload,
`policy_version` (prime-rl's server ignores unknown fields; a server that reports the version it
serves, like `verifiers.testing.ScriptedServer`, takes it from there). Unlike prime-rl's
orchestrator, which logs a warning and carries on when a route answers 404, every failure here
is raised: a server that silently kept its old weights would produce mislabelled rollouts.

A server URL may carry credentials (`http://user:password@host`): they are taken out of the URL
and sent as HTTP basic auth, and every message and repr goes through `redact_url`, so no error
or log line ever shows them.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson
import yarl

from verifiers.errors import (
    ConfigError,
    InvalidModelResponseError,
    ModelConnectionError,
    ModelError,
)

if TYPE_CHECKING:
    from verifiers.training.stream import RolloutStream

__all__ = ["NCCL_READY_MARKER", "InferenceAdmin", "redact_url"]

#: file prime-rl's orchestrator creates in the weight directory once the servers are paused;
#: its trainer waits for it before it starts an NCCL broadcast
NCCL_READY_MARKER = "NCCL_READY"
_STEP_DIR = re.compile(r"^step_(\d+)$")
# a URL's userinfo: after the scheme, up to the last `@` before the path, query or fragment
_USERINFO = re.compile(r"(?<=://)[^/?#\s]*@")


def redact_url(text: str) -> str:
    """`text` with the userinfo (`user:password@`) of every URL in it shown as `***@`: the one
    way this module formats a URL or a message that may hold one."""
    return _USERINFO.sub("***@", text)


def _split_credentials(url: str) -> tuple[str, str | None]:
    """A server URL without its userinfo, and that userinfo as a basic-auth `Authorization`
    value (None without)."""
    try:
        parsed = yarl.URL(url)
    except (ValueError, TypeError) as e:
        raise ConfigError(f"InferenceAdmin: {redact_url(str(url))!r} is not a URL ({e})") from None
    if parsed.raw_user is None and parsed.raw_password is None:
        return url, None
    userinfo = f"{parsed.user or ''}:{parsed.password or ''}".encode()
    return str(parsed.with_user(None)), "Basic " + base64.b64encode(userinfo).decode("ascii")


class InferenceAdmin:
    """Admin calls to several inference servers at once.

    `base_urls`: the servers' OpenAI base URLs (a trailing `/v1` is dropped: the admin routes
    sit at the root). `broadcast_dir`: where the trainer writes `step_N` checkpoints, so that
    `update_weights(N)` means that directory. `stream`: a `RolloutStream` whose policy version
    follows every successful update (also `attach`). `write_nccl_ready`: create
    `NCCL_READY_MARKER` in the weight directory after pausing, as prime-rl does for its NCCL
    broadcast. `timeout`: seconds per admin request (None: no limit, as in prime-rl: a weight
    load can take minutes).

    >>> admin = InferenceAdmin(["http://gpu0:8000/v1", "http://gpu1:8000/v1"],
    ...                        broadcast_dir="outputs/broadcasts", stream=stream)  # doctest: +SKIP
    >>> await admin.update_weights(step)  # pause, load step_<step>, bump the stream, resume
    """

    def __init__(
        self,
        base_urls: str | Sequence[str],
        *,
        api_key: str | None = None,
        headers: dict[str, str] | None = None,
        broadcast_dir: str | Path | None = None,
        stream: RolloutStream | None = None,
        write_nccl_ready: bool = False,
        timeout: float | None = None,
    ) -> None:
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        if not urls:
            raise ConfigError("InferenceAdmin needs at least one server URL")
        split = [_split_credentials(u) for u in urls]
        #: the servers' root URLs, without credentials (those are in `_headers`, per server)
        self.urls = [u.rstrip("/").removesuffix("/v1") for u, _ in split]
        common = {"Content-Type": "application/json", **(headers or {})}
        if api_key and api_key != "EMPTY":
            common["Authorization"] = f"Bearer {api_key}"
        has_header = any(k.lower() == "authorization" for k in common)
        self._headers: list[dict[str, str]] = []
        for url, basic in split:
            if basic is not None and has_header:
                raise ConfigError(
                    f"InferenceAdmin: {redact_url(url)} has credentials in its URL and an "
                    "Authorization header (api_key or headers) is given too; use one of them"
                )
            self._headers.append({**common, "Authorization": basic} if basic else common)
        self.broadcast_dir = Path(broadcast_dir) if broadcast_dir is not None else None
        self.stream = stream
        self.write_nccl_ready = write_nccl_ready
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        #: version the servers were last told to serve (None before the first update)
        self.policy_version: int | None = stream.policy_version if stream is not None else None
        self._lock = asyncio.Lock()  # one update at a time: pause/resume must not interleave

    def __repr__(self) -> str:
        return redact_url(f"InferenceAdmin({self.urls!r})")

    def attach(self, stream: RolloutStream) -> None:
        """Make `stream`'s policy version follow successful updates."""
        self.stream = stream

    # -- the calls ---------------------------------------------------------------------------
    async def update_weights(
        self,
        path_or_step: int | str | Path | None = None,
        *,
        version: int | None = None,
        pause: bool = True,
    ) -> int:
        """Load new weights on every server; returns the new policy version.

        `path_or_step`: a step N (`broadcast_dir/step_N`), a weight directory, or None (NCCL:
        the weights come from the trainer's broadcast). `version` defaults to N, to the N of a
        `step_N` directory, else to the current version + 1. With `pause` (prime-rl v0.5.0's
        sequence) all servers are paused first and resumed afterwards, also when the update
        fails. The attached stream moves to the new version before the servers resume, so
        requests sent from then on are tagged with it."""
        weight_dir, version = self._target(path_or_step, version)
        payload: dict[str, Any] = {"weight_dir": weight_dir.as_posix() if weight_dir else None}
        payload["policy_version"] = version
        async with self._lock:
            try:
                if pause:
                    await self.pause()  # inside the try: a server that did pause is resumed
                if self.write_nccl_ready and weight_dir is not None:
                    weight_dir.mkdir(parents=True, exist_ok=True)
                    (weight_dir / NCCL_READY_MARKER).touch()
                await self._all("POST", "/update_weights", payload)
                self.policy_version = version
                if self.stream is not None:
                    self.stream.set_policy_version(version)
            except BaseException:
                if pause:
                    with contextlib.suppress(ModelError):  # the first failure is the news
                        await self.resume()
                raise
            if pause:
                await self.resume()
        return version

    async def reload_weights(self) -> None:
        """Back to the base model's weights on every server (prime-rl v0.2's route). The
        servers then serve version 0; an attached stream keeps its version, so what they sample
        counts as that many steps off-policy."""
        async with self._lock:
            await self._all("POST", "/reload_weights", {})
            self.policy_version = 0

    async def pause(self) -> None:
        """Hold generation on every server (in-flight requests wait, none is aborted)."""
        await self._all("POST", "/pause", None, params={"mode": "keep", "clear_cache": "false"})

    async def resume(self) -> None:
        await self._all("POST", "/resume", None)

    async def init_broadcaster(
        self,
        host: str,
        port: int,
        *,
        timeout_s: int = 1200,
        inference_world_size: int | None = None,
        quantize_in_weight_transfer: bool = False,
    ) -> None:
        """Have every server join the trainer's NCCL group at `host:port` (`timeout_s` is sent
        as prime-rl's `timeout`). Each inference GPU gets its own rank: server i's GPUs start
        at `i * gpus_per_server`, with `gpus_per_server = inference_world_size // len(servers)`
        (default: one GPU each). The payload carries v0.5.0's fields and v0.2's (`server_rank`, `num_inference_server`)."""
        world = inference_world_size if inference_world_size is not None else len(self.urls)
        if world < len(self.urls) or world % len(self.urls):
            raise ConfigError(
                f"inference_world_size {world} does not split evenly over {len(self.urls)} servers"
            )
        per_server = world // len(self.urls)

        def payload(i: int) -> dict[str, Any]:
            return {
                "host": host,
                "port": port,
                "timeout": timeout_s,
                "rank_offset": i * per_server,
                "inference_world_size": world,
                "gpus_per_server": per_server,
                "quantize_in_weight_transfer": quantize_in_weight_transfer,
                "server_rank": i,
                "num_inference_server": len(self.urls),
            }

        await self._each(lambda i, url: self._request("POST", i, "/init_broadcaster", payload(i)))

    async def check_health(self, *, max_wait: float = 1800.0, interval: float = 1.0) -> None:
        """Wait until every server answers `GET /health` with 200 (as prime-rl does at start),
        or raise `ModelConnectionError` after `max_wait` seconds."""

        async def wait(i: int, url: str) -> None:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + max_wait
            while True:
                try:
                    await self._request("GET", i, "/health", None)
                    return
                except ModelError as e:
                    if loop.time() + interval > deadline:
                        raise ModelConnectionError(
                            redact_url(f"{url} is not healthy after {max_wait:g}s: {e}")
                        ) from None
                await asyncio.sleep(interval)

        await self._each(wait)

    async def check_model(self, model: str) -> None:
        """Raise `ConfigError` unless every server lists `model` in `GET /v1/models`, and
        `InvalidModelResponseError` for a server whose reply is not an OpenAI model list."""

        async def check(i: int, url: str) -> None:
            raw = await self._request("GET", i, "/v1/models", None)
            ids = _served_model_ids(raw, f"GET {url}/v1/models")
            if model not in ids:
                raise ConfigError(
                    redact_url(f"model {model!r} is not served by {url} (it serves {ids})")
                )

        await self._each(check)

    # -- plumbing ----------------------------------------------------------------------------
    def _target(
        self, path_or_step: int | str | Path | None, version: int | None
    ) -> tuple[Path | None, int]:
        # the stream never goes back, also after `reload_weights` reset the servers to 0
        known = [self.policy_version, self.stream.policy_version if self.stream else None]
        current = max((v for v in known if v is not None), default=None)
        weight_dir: Path | None
        if isinstance(path_or_step, bool):
            raise ConfigError("update_weights takes a step, a directory or None, not a bool")
        if isinstance(path_or_step, int):
            if self.broadcast_dir is None:
                raise ConfigError("update_weights(step) needs InferenceAdmin(broadcast_dir=...)")
            weight_dir = self.broadcast_dir / f"step_{path_or_step}"
            default = path_or_step
        elif path_or_step is None:
            weight_dir, default = None, None
        else:
            weight_dir = Path(path_or_step)
            match = _STEP_DIR.match(weight_dir.name)
            default = int(match.group(1)) if match else None
        if version is None:
            version = default if default is not None else (current or 0) + 1
        if current is not None and version < current:
            raise ConfigError(f"policy version would go back from {current} to {version}")
        return weight_dir, version

    async def _all(
        self, method: str, path: str, body: Any, params: dict[str, str] | None = None
    ) -> None:
        await self._each(lambda i, url: self._request(method, i, path, body, params))

    async def _each(self, call: Callable[[int, str], Awaitable[Any]]) -> None:
        # every server gets the call even when another fails; the first failure is raised
        results = await asyncio.gather(
            *(call(i, url) for i, url in enumerate(self.urls)), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _request(
        self,
        method: str,
        server: int,
        path: str,
        body: Any,
        params: dict[str, str] | None = None,
    ) -> bytes:
        """One admin request to server number `server`; its reply body."""
        url = self.urls[server]
        data = orjson.dumps(body) if body is not None else None
        try:
            async with aiohttp.ClientSession(timeout=self._timeout) as session:
                async with session.request(
                    method,
                    url + path,
                    data=data,
                    params=params,
                    headers=self._headers[server],
                ) as resp:
                    raw = await resp.read()
                    if resp.status >= 400:
                        detail = raw[:300].decode("utf-8", "replace")
                        raise ModelError(
                            redact_url(f"HTTP {resp.status} from {method} {url}{path}: {detail}")
                        )
        except (aiohttp.ClientError, TimeoutError) as e:
            raise ModelConnectionError(
                redact_url(f"{method} {url}{path} failed: {type(e).__name__}: {e}")
            ) from None
        return raw


def _served_model_ids(raw: bytes, where: str) -> list[str]:
    """The model ids of an OpenAI `/v1/models` reply (`{"data": [{"id": ...}, ...]}`); any
    other shape is an `InvalidModelResponseError` naming what came instead."""
    expected = 'not an OpenAI model list ({"data": [{"id": "..."}]})'
    try:
        reply = orjson.loads(raw)
    except orjson.JSONDecodeError:
        shown = raw[:100].decode("utf-8", "replace")
        raise InvalidModelResponseError(
            redact_url(f"{where} answered {shown!r}, {expected}")
        ) from None
    if not isinstance(reply, dict):
        raise InvalidModelResponseError(
            redact_url(f"{where} answered a JSON {type(reply).__name__}, {expected}")
        )
    data = reply.get("data")
    if not isinstance(data, list):
        raise InvalidModelResponseError(
            redact_url(f"{where}: 'data' is {type(data).__name__}, not a list; {expected}")
        )
    ids = []
    for entry in data:
        model_id = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(model_id, str):
            shown = repr(entry)[:100]
            raise InvalidModelResponseError(
                redact_url(f"{where}: the entry {shown} has no string 'id'; {expected}")
            )
        ids.append(model_id)
    return ids
