"""Running environments, env servers and sandboxes on a Ray cluster (`pip install verifiers[ray]`).

Importing `verifiers` never imports Ray; importing this package does. See
docs/operations/ray.md ("Running on a Ray cluster") for the commands.
"""

from verifiers.ray.cluster import connect, require_ray

__all__ = [
    "connect",
    "require_ray",
]
