"""verifiers.serve.wire and the request types: what crosses an env server's sockets."""

from __future__ import annotations

import math

import pytest
from pydantic import BaseModel

import verifiers as vf
from verifiers.errors import ConfigError
from verifiers.serve import RunGroupRequest, ServerError, error_output, wire
from verifiers.serve.client.env_client import ResponseError


def test_non_finite_floats_of_output_records_survive_json() -> None:
    """Ours: upstream 0.1.12 uses msgpack, which keeps NaN; over JSON the record's float
    fields (reward, advantage, metrics, step rewards) carry NaN and infinities tagged."""
    record = {
        "reward": math.nan,
        "advantage": -math.inf,
        "metrics": {"ok": 1.0, "broken": math.nan},
        "broken": math.nan,
        "trajectory": [{"reward": math.inf, "advantage": None, "tokens": None}],
        "info": {"note": "kept"},
    }
    back = wire.unpack_output(wire.decode(wire.encode(wire.pack_output(record))))
    assert math.isnan(back["reward"]) and back["advantage"] == -math.inf
    assert back["metrics"]["ok"] == 1.0 and math.isnan(back["metrics"]["broken"])
    assert math.isnan(back["broken"])
    assert back["trajectory"][0]["reward"] == math.inf
    assert back["trajectory"][0]["advantage"] is None
    assert back["info"] == {"note": "kept"}


def test_client_config_round_trip() -> None:
    """upstream 0.1.12 env_worker.py: the worker builds its model client from the request's
    ClientConfig (endpoints, headers, timeout, retries)."""
    config = vf.ClientConfig(
        api_base_url="http://a/v1",
        api_key_var="KEY_A",
        timeout=12.0,
        max_retries=1,
        extra_headers={"x": "y"},
        endpoint_configs=[vf.EndpointConfig("http://b/v1", "KEY_B")],
    )
    data = wire.decode(wire.encode(wire.client_config_to_wire(config)))
    assert wire.client_config_from_wire(data) == config
    # a plain dict (or a pydantic config) names the same fields; fields this SDK does not
    # know are dropped, not an error
    assert wire.client_config_from_wire(
        wire.client_config_to_wire({"api_base_url": "http://c/v1", "not_a_field": 3})
    ) == vf.ClientConfig(api_base_url="http://c/v1")

    class UpstreamConfig(BaseModel):  # upstream's ClientConfig is a pydantic model
        api_base_url: str = "http://d/v1"
        max_keepalive_connections: int = 28

    from_pydantic = wire.client_config_from_wire(wire.client_config_to_wire(UpstreamConfig()))
    assert from_pydantic.api_base_url == "http://d/v1"
    assert wire.client_key(data) == wire.client_key(dict(reversed(list(data.items()))))


def test_a_live_client_cannot_be_sent() -> None:
    """upstream 0.1.12 environment.py: in server mode the client must be a ClientConfig."""
    with pytest.raises(ConfigError, match="needs a vf.ClientConfig"):
        wire.client_config_to_wire(object())


def test_requests_dump_upstream_field_names() -> None:
    """upstream 0.1.12 serve/types.py: RunGroupRequest's fields as the worker reads them."""
    request = RunGroupRequest(
        group_inputs=[{"prompt": [], "example_id": 0}],
        client_config={"api_base_url": "http://a/v1"},
        model="m",
        sampling_args={"temperature": 1.0},
    )
    dumped = wire.decode(wire.encode(request.model_dump()))
    assert dumped == {
        "request_type": "run_group",
        "group_inputs": [{"prompt": [], "example_id": 0}],
        "client_config": {"api_base_url": "http://a/v1"},
        "model": "m",
        "sampling_args": {"temperature": 1.0},
        "max_retries": 0,
        "state_columns": None,
    }
    assert RunGroupRequest.model_validate(dumped).group_inputs == request.group_inputs


def test_error_output_is_a_record_a_trainer_reschedules() -> None:
    """Ours: a rollout the server could not deliver is a record (prime-rl v0.5.0's scheduler
    reads `trajectory` and `error.error_chain_repr` and reschedules it) with infra=True for
    transport failures and the server's own classification for failed requests."""
    row = {
        "prompt": [{"role": "user", "content": "q"}],
        "example_id": 7,
        "answer": "a",
        "task": "t",
        "rollout_index": 2,
    }
    lost = error_output(row, ServerError("gone"))
    assert lost["example_id"] == 7 and lost["rollout_index"] == 2 and lost["task"] == "t"
    assert lost["trajectory"] == [] and lost["completion"] == [] and math.isnan(lost["reward"])
    assert lost["error"]["infra"] is True and lost["error"]["stage"] == "server"
    assert "ServerError('gone')" in lost["error"]["error_chain_repr"]
    failed = error_output(row, ResponseError("bad input", "KeyError", infra=False))
    assert failed["error"]["error"] == "KeyError" and failed["error"]["infra"] is False


def test_ipc_addresses_fit_a_unix_socket_path() -> None:
    """A unix socket path must stay under ~100 bytes whatever $TMPDIR is."""
    address = wire.make_ipc_address("0123456789ab", "owner/some-environment-name-3")
    assert address.startswith("ipc:///tmp/vf-") and "/" not in address.split("vf-", 1)[1]
    assert len(address.removeprefix("ipc://")) < 100


async def test_run_requests_go_through_upstreams_handler_names() -> None:
    """upstream 0.3 serve/client/env_client.py: `run_group` asks
    `handle_run_group_request(request, timeout)`, which a subclass may override (a caching or
    tracing client); ours answers them over `send_request` and goes through them too."""
    from verifiers.serve.client.env_client import EnvClient
    from verifiers.serve.types import RunGroupResponse

    seen: list[str] = []

    class Recording(EnvClient):
        async def wait_for_server_startup(self, timeout=None):  # noqa: ASYNC109
            return None

        async def handle_health_request(self, request, timeout):  # noqa: ASYNC109
            raise AssertionError("not asked")

        async def send_request(self, request, timeout=None):  # noqa: ASYNC109
            seen.append(request.request_type)
            return {"success": True, "outputs": [{"example_id": 3, "reward": 1.0}]}

        async def handle_run_group_request(self, request, timeout=None):  # noqa: ASYNC109
            seen.append("handler")
            return await super().handle_run_group_request(request, timeout)

        async def close(self) -> None:
            return None

    client = Recording("tcp://127.0.0.1:1")
    direct = await client.handle_run_group_request(
        RunGroupRequest(group_inputs=[], client_config={}, model="m", sampling_args={})
    )
    assert isinstance(direct, RunGroupResponse) and direct.success
    outputs = await client.run_group([{"example_id": 3}], {"api_base_url": "http://a/v1"}, "m", {})
    assert [o["example_id"] for o in outputs] == [3]
    assert seen == ["handler", "run_group", "handler", "run_group"]
