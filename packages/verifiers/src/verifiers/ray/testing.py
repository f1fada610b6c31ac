"""A real multi-node Ray cluster on one machine, bound to loopback, for tests, benchmarks and
the documentation's examples (`ray.cluster_utils.Cluster`)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verifiers.ray.cluster import require_ray, turn_off_uv_hook

LOOPBACK = "127.0.0.1"
LOOPBACK_VAR = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
#: the smallest object store Ray accepts; rollouts move kilobytes, not tensors
OBJECT_STORE_BYTES = 80 * 1024 * 1024


@dataclass
class LocalCluster:
    """A running `ray.cluster_utils.Cluster`; this process is connected to it as the driver."""

    cluster: Any
    nodes: list[Any] = field(default_factory=list)

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def add_node(
        self,
        num_cpus: int = 1,
        resources: Mapping[str, float] | None = None,
        labels: Mapping[str, str] | None = None,
        wait: bool = True,
    ) -> Any:
        """Start one more node (a raylet with its own workers); returns its handle."""
        node = self.cluster.add_node(**_node_args(num_cpus, resources, labels))
        self.nodes.append(node)
        if wait:
            self.cluster.wait_for_nodes()
        return node

    def remove_node(self, node: Any, allow_graceful: bool = False) -> None:
        """Kill a node, as a machine that leaves: its raylet and every worker on it."""
        self.cluster.remove_node(node, allow_graceful=allow_graceful)
        if node in self.nodes:
            self.nodes.remove(node)

    @staticmethod
    def node_id(node: Any) -> str:
        return str(node.node_id)


def _node_args(
    num_cpus: int, resources: Mapping[str, float] | None, labels: Mapping[str, str] | None
) -> dict[str, Any]:
    args: dict[str, Any] = {
        "num_cpus": num_cpus,
        "node_ip_address": LOOPBACK,
        "object_store_memory": OBJECT_STORE_BYTES,
    }
    if resources:
        args["resources"] = dict(resources)
    if labels:
        args["labels"] = dict(labels)
    return args


def loopback_only() -> None:
    """Make every Ray process this one starts take 127.0.0.1 as its node address. On Linux Ray
    otherwise asks the routing table for the machine's address (where its GCS then listens);
    `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` is its switch for the loopback-only mode, read when
    `ray` is imported, and inherited by the raylets and workers started from here."""
    os.environ[LOOPBACK_VAR] = "0"
    turn_off_uv_hook()
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:  # ray already imported: the switch was read already
        setattr(constants, "ENABLE_RAY_CLUSTER", False)  # noqa: B010 - not in its stubs


@contextlib.contextmanager
def local_cluster(
    workers: Sequence[Mapping[str, Any]] = ({"num_cpus": 1},),
    *,
    head_cpus: int = 1,
    head_resources: Mapping[str, float] | None = None,
    connect: bool = True,
) -> Iterator[LocalCluster]:
    """A head plus one node per entry of `workers` (keyword arguments of
    `LocalCluster.add_node`), every process bound to 127.0.0.1 and no dashboard; this process
    connects as the driver unless `connect=False`. Everything is stopped on exit."""
    loopback_only()
    ray = require_ray()
    from ray.cluster_utils import Cluster

    head = _node_args(head_cpus, head_resources, None)
    head["include_dashboard"] = False
    cluster = Cluster(initialize_head=True, head_node_args=head)
    local = LocalCluster(cluster)
    try:
        for spec in workers:
            local.add_node(**spec, wait=False)
        cluster.wait_for_nodes()
        if connect:
            ray.init(address=cluster.address, log_to_driver=False)
        yield local
    finally:
        if connect:
            ray.shutdown()
        cluster.shutdown()
