"""The Ray path's connection and test cluster: a real multi-node cluster on one machine
(`ray.cluster_utils.Cluster`, as issue 25 item 7 asks) binds loopback only, the head being
unreachable is a clear error within seconds, and `import verifiers` never imports Ray."""

from __future__ import annotations

import ipaddress
import os
import socket
import time
from pathlib import Path

import pytest
from command_kit import error_in_fresh_interpreter, python

import verifiers as vf
from verifiers.ray import connect
from verifiers.ray.testing import local_cluster
from verifiers.testing import free_port

LISTEN = "0A"  # TCP state LISTEN in /proc/net/tcp


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
    found, frontier = set(), {root}
    while frontier:
        children = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= children
        frontier = children
    return found


def _socket_inodes(pids: set[int]) -> set[str]:
    inodes = set()
    for pid in pids:
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    return inodes


def _decode(hex_addr: str) -> str:
    ip_hex = hex_addr.split(":")[0]
    raw = bytes.fromhex(ip_hex)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def _loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return (mapped or ip).is_loopback


def listening_addresses(pids: set[int]) -> list[str]:
    """Addresses on which the given processes accept TCP connections or receive UDP."""
    inodes = _socket_inodes(pids)
    found = []
    for table in ("tcp", "tcp6", "udp", "udp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            cols = line.split()
            if cols[9] in inodes and (table.startswith("udp") or cols[3] == LISTEN):
                found.append(f"{table} {_decode(cols[1])}")
    return found


def _wait_gone(pids: set[int], seconds: float = 30.0) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and (_descendants(os.getpid()) & pids):
        time.sleep(0.2)
    return _descendants(os.getpid()) & pids


@pytest.fixture(scope="module")
def cluster():
    """Also checks, on the way out, that the cluster stopped every process it started."""
    before = _descendants(os.getpid())
    with local_cluster([{"num_cpus": 1}, {"num_cpus": 1, "resources": {"sandbox": 2}}]) as c:
        started = _descendants(os.getpid()) - before
        yield c
    assert started and not _wait_gone(started), "the test cluster left processes running"


def test_every_ray_process_listens_on_loopback_only(cluster):
    import ray

    @ray.remote(num_cpus=0)
    def where() -> str:
        return ray.get_runtime_context().get_node_id()

    # touch every node so its workers are up too
    nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert len(nodes) == 3
    ran = set(ray.get([where.remote() for _ in range(12)]))
    assert ran <= nodes
    addresses = listening_addresses(_descendants(os.getpid()))
    assert addresses, "the cluster's processes were not found"
    beyond = [a for a in addresses if not _loopback(a.split()[1])]
    assert beyond == [], f"Ray listens beyond loopback: {beyond}"
    assert all(n["NodeManagerAddress"] == "127.0.0.1" for n in ray.nodes())


def test_connect_reuses_the_drivers_connection(cluster):
    ray = connect("127.0.0.1:1")  # already connected: no new connection, no error
    assert ray.is_initialized()


def test_an_unreachable_head_is_a_clear_error_within_seconds():
    port = free_port()  # nothing listens on it
    message = error_in_fresh_interpreter(
        f"from verifiers.ray import connect\nconnect('127.0.0.1:{port}', timeout=2)",
        "ClusterUnreachableError",
        timeout=60,
    )
    assert f"127.0.0.1:{port}" in message and "ray start --head" in message
    assert issubclass(vf.ClusterUnreachableError, vf.InfraError)


def test_importing_verifiers_does_not_import_ray():
    code = "import sys, verifiers, verifiers.sandbox; print('ray' in sys.modules)"
    out = python(code)
    assert out.stdout.strip() == "False", out.stderr
