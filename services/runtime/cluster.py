"""A local Redis Cluster of embedded FalkorDB servers, for tests and for people trying it.

Every node is the wheel's own ``redis-server`` with the FalkorDB module and
``--cluster-enabled yes``; no redis-cli is needed. The masters share the 16,384 slots in equal
ranges (``CLUSTER ADDSLOTSRANGE``), meet the first one (``CLUSTER MEET``), and each replica
follows its master (``CLUSTER REPLICATE``). Ready once every node says ``cluster_state:ok``
and every replica's link to its master is up.

With a data directory each node keeps its AOF and its ``nodes.conf`` under ``node-<i>/``, and
the ports are kept in ``cluster.json``: a cluster remembers its peers by address, so it starts
again on the same ports.
"""

from __future__ import annotations

import json
from pathlib import Path

import redis

from rescind.runtime.bootstrap import Node, bootstrap
from rescind.runtime.readiness import ServerError
from rescind.runtime.server import EmbeddedFalkorDB, free_port

NODE_TIMEOUT_MS = 2_000  # how long a master may be silent before its replica takes over


class ClusterNode(EmbeddedFalkorDB):
    """One node: an embedded server with cluster mode on, and a port of its own for the
    cluster's bus (by default the port plus 10,000, which a free port may not have)."""

    def __init__(self, data_dir: Path | None, port: int | None = None,
                 bus_port: int | None = None) -> None:
        super().__init__(data_dir, port)
        self.chosen = port is None and bus_port is None
        self.bus_port = bus_port or free_port()

    def choose_ports(self) -> None:
        self.port, self.bus_port = free_port(), free_port()

    def command(self) -> list[str]:
        return [*super().command(), "--cluster-enabled", "yes",
                "--cluster-port", str(self.bus_port),
                "--cluster-config-file", str(self.workdir / "nodes.conf"),
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS)]

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=5.0, socket_connect_timeout=2.0)


class EmbeddedCluster:
    """``masters`` masters with ``replicas`` replicas each, on loopback ports."""

    def __init__(self, masters: int = 3, replicas: int = 0,
                 data_dir: str | Path | None = None) -> None:
        if masters < 1 or replicas < 0:
            raise ValueError("a cluster needs at least one master, and no negative replicas")
        self.masters, self.replicas = masters, replicas
        self.data_dir = Path(data_dir) if data_dir else None
        ports = self._ports()
        self.nodes = [ClusterNode(self.data_dir / f"node-{i}" if self.data_dir else None, *pair)
                      for i, pair in enumerate(ports)]

    @property
    def url(self) -> str:
        """A master's URL: clients find the rest of the cluster from it."""
        return self.nodes[0].url

    @property
    def where(self) -> str:
        base = f"a cluster of {self.masters} master(s), {self.replicas} replica(s) each, " \
               f"from {self.url}"
        return f"{base}, data in {self.data_dir}" if self.data_dir else base

    def _ports(self) -> list[list[int]]:
        """Each node's port and bus port: free ones, or those the data directory's cluster
        had (its nodes know each other by address)."""
        n = self.masters * (1 + self.replicas)
        if self.data_dir is None:
            return [[free_port(), free_port()] for _ in range(n)]
        saved = self.data_dir / "cluster.json"
        if saved.exists():
            shape = json.loads(saved.read_text())
            if (shape["masters"], shape["replicas"]) != (self.masters, self.replicas):
                raise ServerError(f"{self.data_dir} holds a cluster of {shape['masters']} "
                                  f"master(s) with {shape['replicas']} replica(s) each; start it "
                                  "with that shape, or use another data directory")
            return shape["ports"]
        ports = [[free_port(), free_port()] for _ in range(n)]
        self.data_dir.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps({"masters": self.masters, "replicas": self.replicas,
                                     "ports": ports}) + "\n")
        return ports

    def start(self, timeout: float = 30.0, tries: int = 3) -> EmbeddedCluster:
        """Start every node and form the cluster. A port taken between choosing it and binding
        it (other servers start on this machine too) is chosen again, when it may be."""
        for attempt in range(tries):
            try:
                for node in self.nodes:
                    node.start()
                self._form(timeout)
                return self
            except ServerError as exc:
                self.stop()
                if "Address already in use" not in str(exc) or self.data_dir or \
                        attempt == tries - 1:
                    raise
                self.nodes = [ClusterNode(None, *pair) for pair in self._ports()]
            except BaseException:
                self.stop()
                raise
        raise AssertionError("unreachable")

    def _form(self, timeout: float) -> None:
        """Assign slots, meet, replicate, wait (``rescind.runtime.bootstrap``, as a deployment's
        bootstrap does); a cluster restarted from its data directory is formed already, and
        only waited for."""
        bootstrap([Node("127.0.0.1", n.port, n.bus_port) for n in self.nodes], self.replicas,
                  timeout=timeout)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> EmbeddedCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["ClusterNode", "EmbeddedCluster"]
