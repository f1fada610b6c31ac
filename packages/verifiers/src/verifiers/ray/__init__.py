"""Running environments, env servers and sandboxes on a Ray cluster (`pip install verifiers[ray]`).

Importing `verifiers` never imports Ray; importing this package does. See
docs/operations/ray.md ("Running on a Ray cluster") for the commands.
"""

from verifiers.ray.cluster import connect, require_ray
from verifiers.ray.env_servers import EnvServers, start_env_servers
from verifiers.ray.environment import RayEnvironment

__all__ = [
    "EnvServers",
    "RayEnvironment",
    "connect",
    "require_ray",
    "start_env_servers",
]
