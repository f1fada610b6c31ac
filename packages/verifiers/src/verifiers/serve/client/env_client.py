"""EnvClient: how an orchestrator runs rollouts on an env server.

`run_rollout(input, client_config, model, sampling_args, max_retries=0, state_columns=None)`
and `run_group(group_inputs, ...)` have upstream 0.1.12's signatures
(`serve/client/env_client.py`). Where upstream raises when a server dies or a request fails,
ours returns an output record per lost rollout with an infra error (`error.infra=True`,
`reward` NaN, an empty trajectory), as the SDK's in-process rollouts report infra failures:
an orchestrator reschedules or masks such a rollout instead of losing its whole group. Only a
server that never came up raises, `ServerTimeoutError` (or `ServerError` when its
environment failed to load).
"""

from __future__ import annotations

import logging
import math
from abc import ABC, abstractmethod
from typing import Any

from verifiers.serve import wire
from verifiers.serve.types import (
    BaseRequest,
    BaseResponse,
    HealthRequest,
    HealthResponse,
    RunGroupRequest,
    RunGroupResponse,
    RunRolloutRequest,
    RunRolloutResponse,
    ServerError,
)
from verifiers.state import error_record

logger = logging.getLogger("verifiers.serve")


class ResponseError(ServerError):
    """A request the server answered with a failure (its type and message are kept)."""

    def __init__(self, message: str, error_type: str | None, infra: bool) -> None:
        super().__init__(message)
        self.error_type = error_type or "ServerError"
        self.infra = infra


def error_output(input: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """The output record of a rollout the server could not deliver."""
    record = error_record(exc, "server")
    if isinstance(exc, ResponseError):
        record["error"] = exc.error_type
        record["infra"] = exc.infra
    else:
        record["infra"] = True  # transport failures are infra failures by nature
    info = input.get("info")
    out: dict[str, Any] = {
        "example_id": input.get("example_id", 0),
        "rollout_index": input.get("rollout_index", 0),
        "prompt": input.get("prompt") or [],
        "completion": [],
        "answer": input.get("answer", "") or "",
        "info": info if isinstance(info, dict) else {},
        "reward": math.nan,
        "advantage": None,
        "metrics": {},
        "error": record,
        "is_completed": False,
        "is_truncated": False,
        "stop_condition": "has_error",
        "timing": {},
        "token_usage": {"input_tokens": 0, "output_tokens": 0},
        "trajectory": [],
    }
    if input.get("task") is not None:
        out["task"] = input["task"]
    return out


def _run_settings(
    client_config: Any,
    model: str,
    sampling_args: dict[str, Any],
    max_retries: int,
    state_columns: list[str] | None,
) -> dict[str, Any]:
    """The fields a rollout and a group request share, as the wire carries them."""
    return {
        "client_config": wire.client_config_to_wire(client_config),
        "model": model,
        "sampling_args": dict(sampling_args or {}),
        "max_retries": max_retries,
        "state_columns": state_columns,
    }


def _failure(response: BaseResponse) -> ResponseError:
    return ResponseError(
        response.error or "the env server failed the request", response.error_type, response.infra
    )


class EnvClient(ABC):
    """Base class of environment clients (upstream's constructor arguments)."""

    def __init__(
        self,
        address: str,
        name: str | None = None,
        health_check_interval: float = 1.0,
        startup_timeout: float = 600.0,
        recovery_timeout: float = 600.0,
    ) -> None:
        self.address = address
        self.name = f"{name} ({address})" if name is not None else address
        self.health_check_interval = health_check_interval
        self.startup_timeout = startup_timeout
        self.recovery_timeout = recovery_timeout
        self.logger = logger

    async def health(self, timeout: float | None = 1) -> bool:  # noqa: ASYNC109
        response = await self.handle_health_request(HealthRequest(), timeout=timeout)
        return response.success

    async def run_rollout(
        self,
        input: dict[str, Any],
        client_config: Any,
        model: str,
        sampling_args: dict[str, Any],
        max_retries: int = 0,
        state_columns: list[str] | None = None,
    ) -> dict[str, Any]:
        settings = _run_settings(client_config, model, sampling_args, max_retries, state_columns)
        request = RunRolloutRequest(input=dict(input), **settings)
        return (await self._outputs(request, [request.input]))[0]

    async def run_group(
        self,
        group_inputs: list[dict[str, Any]],
        client_config: Any,
        model: str,
        sampling_args: dict[str, Any],
        max_retries: int = 0,
        state_columns: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        settings = _run_settings(client_config, model, sampling_args, max_retries, state_columns)
        request = RunGroupRequest(group_inputs=[dict(i) for i in group_inputs], **settings)
        return await self._outputs(request, request.group_inputs)

    async def _outputs(
        self, request: RunRolloutRequest | RunGroupRequest, inputs: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """The output records of `request`'s rollouts; an infra-error record for each of
        `inputs` when the server fails or loses the request."""
        await self.ensure_server_up()
        try:
            response: RunRolloutResponse | RunGroupResponse
            if isinstance(request, RunRolloutRequest):
                response = await self.handle_run_rollout_request(request, timeout=None)
                outputs = None if response.output is None else [response.output]
            else:
                response = await self.handle_run_group_request(request, timeout=None)
                outputs = response.outputs
            if not response.success or outputs is None:
                raise _failure(response)
        except ServerError as e:
            what = "rollout" if isinstance(request, RunRolloutRequest) else "group"
            self.logger.warning("%s lost on env server %s: %s", what, self.name, e)
            return [error_output(i, e) for i in inputs]
        return [wire.unpack_output(o) for o in outputs]

    async def ensure_server_up(self) -> None:
        """Before a request: wait for a server that has not come up yet (raises if it
        never does). A server that was up and went down is not waited for here."""
        return None

    @abstractmethod
    async def wait_for_server_startup(self, timeout: float | None = None) -> None: ...  # noqa: ASYNC109

    @abstractmethod
    async def handle_health_request(
        self,
        request: HealthRequest,
        timeout: float | None,  # noqa: ASYNC109
    ) -> HealthResponse: ...

    @abstractmethod
    async def send_request(self, request: BaseRequest, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        """The server's answer to `request`, decoded (the caller validates it as the response
        model of the request's kind). Raises `ServerError` when the server fails it."""

    # Upstream's names for the two run requests (callers and subclasses of 0.3's EnvClient use
    # them): the server's answer, validated as the request kind's response model.
    async def handle_run_rollout_request(
        self,
        request: RunRolloutRequest,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> RunRolloutResponse:
        return RunRolloutResponse.model_validate(await self.send_request(request, timeout))

    async def handle_run_group_request(
        self,
        request: RunGroupRequest,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> RunGroupResponse:
        return RunGroupResponse.model_validate(await self.send_request(request, timeout))

    @abstractmethod
    async def close(self) -> None: ...
