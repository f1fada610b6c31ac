"""Env servers: environments in their own processes behind ZeroMQ sockets.

Upstream 0.1.12's `verifiers.serve`, as prime-rl v0.5.0's orchestrator uses it::

    process = mp.get_context("spawn").Process(
        target=ZMQEnvServer.run_server,
        args=(env_id, env_args, extra_env_kwargs, log_level, log_dir),
        kwargs=dict(address=address, num_workers=2, console_logging=False),
    )
    client = ZMQEnvClient(address=address, name=env_id)
    await client.wait_for_server_startup()
    output = await client.run_rollout(input, vf.ClientConfig(...), model, sampling_args)

`spawn_env_server(env_id, env_args, num_workers=...)` does the spawning (and stops the server
when its parent dies); `EnvClientPool(addresses)` spreads the requests of one environment over several servers.

Security (ours): a request never chooses which server secrets are sent where: the server's
`ApiKeyPolicy` (`api_keys=` or `$VF_ENV_SERVER_API_KEYS`) decides which variable's value an
endpoint gets, every other endpoint gets "EMPTY" (`verifiers.serve.credentials`). A server bound
beyond loopback needs a shared secret (`secret=` or `$VF_ENV_SERVER_SECRET`, read by server and
client alike) and speaks CurveZMQ with it (`verifiers.serve.auth`).
"""

from verifiers.serve.auth import SECRET_VAR, is_loopback
from verifiers.serve.client.env_client import EnvClient, ResponseError, error_output
from verifiers.serve.client.env_client_pool import EnvClientPool
from verifiers.serve.client.zmq_env_client import ZMQEnvClient
from verifiers.serve.credentials import API_KEYS_VAR, ApiKeyPolicy
from verifiers.serve.server.env_router import EnvRouter
from verifiers.serve.server.env_server import EnvServer
from verifiers.serve.server.env_worker import EnvWorker
from verifiers.serve.server.zmq_env_server import ZMQEnvServer
from verifiers.serve.spawn import SpawnedServer, spawn_env_server
from verifiers.serve.types import *  # noqa: F403 - the protocol's models, all public
from verifiers.serve.types import __all__ as _protocol_names
from verifiers.serve.wire import get_free_port, make_ipc_address

__all__ = [
    "API_KEYS_VAR",
    "SECRET_VAR",
    "ApiKeyPolicy",
    "EnvClient",
    "EnvClientPool",
    "EnvRouter",
    "EnvServer",
    "EnvWorker",
    "ResponseError",
    "SpawnedServer",
    "ZMQEnvClient",
    "ZMQEnvServer",
    "error_output",
    "get_free_port",
    "is_loopback",
    "make_ipc_address",
    "spawn_env_server",
    *_protocol_names,
]
