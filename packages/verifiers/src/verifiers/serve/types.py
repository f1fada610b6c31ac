"""Requests and responses of the env-server protocol, with upstream's names and fields.

Upstream 0.1.12 (`verifiers/serve/types.py`) defines these as pydantic models and sends
`model_dump()` over msgpack. Here they are the same pydantic models; the wire encoding is in
`verifiers.serve.wire`. Inputs and outputs are carried unvalidated (as upstream does with
`SkipValidation`): they are the SDK's plain rollout dicts.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SkipValidation

from verifiers.errors import InfraError

__all__ = [
    "BaseRequest",
    "BaseResponse",
    "HealthRequest",
    "HealthResponse",
    "PendingRequest",
    "RunGroupRequest",
    "RunGroupResponse",
    "RunRolloutRequest",
    "RunRolloutResponse",
    "ServerError",
    "ServerState",
    "ServerTimeoutError",
]


class ServerError(InfraError, RuntimeError):
    """The env server failed a request: it died, became unreachable, or could not run it."""


class ServerTimeoutError(ServerError, TimeoutError):
    """The env server did not come up (or back) in time."""


class BaseRequest(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    request_type: str


class BaseResponse(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    success: bool = True
    error: str | None = None
    # Ours: the server's exception type and whether it is an infra failure, so a failed
    # request becomes an error record a trainer can mask (upstream sends only `error`).
    error_type: str | None = None
    infra: bool = False


class HealthRequest(BaseRequest):
    request_type: Literal["health"] = "health"


class HealthResponse(BaseResponse): ...


class _RunRequest(BaseRequest):
    """What a rollout and a group request both carry besides their inputs."""

    client_config: SkipValidation[Any]
    model: str
    sampling_args: SkipValidation[dict[str, Any]]
    max_retries: int = 0
    state_columns: list[str] | None = None


class RunRolloutRequest(_RunRequest):
    request_type: Literal["run_rollout"] = "run_rollout"

    input: SkipValidation[dict[str, Any]]


class RunRolloutResponse(BaseResponse):
    output: SkipValidation[dict[str, Any] | None] = None


class RunGroupRequest(_RunRequest):
    request_type: Literal["run_group"] = "run_group"

    group_inputs: SkipValidation[list[dict[str, Any]]]


class RunGroupResponse(BaseResponse):
    outputs: SkipValidation[list[dict[str, Any]] | None] = None


class ServerState(StrEnum):
    STARTUP = "startup"  # before the first successful health check
    HEALTHY = "healthy"
    UNHEALTHY = "unhealthy"  # health checks failed after the server had been healthy


@dataclass
class PendingRequest:
    """A request the client has sent and not yet had an answer for."""

    request_id: str
    request: BaseRequest
    future: asyncio.Future[Any]
    submitted_at: float
    timeout: float | None = None
