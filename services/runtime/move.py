"""Moving a tenant to another master of a Redis Cluster, while it serves.

A tenant is one hash slot: every key of tenant ``t`` carries the tag ``{t}``
(``rescind.contract.layout``), so moving the tenant is moving that slot, with Redis's own
resharding steps, sent through redis-py (no redis-cli):

1. on the target, ``CLUSTER SETSLOT <slot> IMPORTING <source id>``;
2. on the source, ``CLUSTER SETSLOT <slot> MIGRATING <target id>``;
3. until the source has none left: ``CLUSTER GETKEYSINSLOT <slot> <n>``, then
   ``MIGRATE <host> <port> "" 0 <timeout> KEYS k1 k2 …``; the graph is moved alone, in a
   MIGRATE of its own (FalkorDB serialises a graph for DUMP/RESTORE like for its RDB; the
   source is blocked while it does, the target while it loads it);
4. ``CLUSTER SETSLOT <slot> NODE <target id>`` on the target, the source, then every other
   master.

Meanwhile a command on a key still on the source is served there; one on a key already moved
(or a new key) is answered ``ASK`` and served by the target; after step 4, ``MOVED``. Rescind's
workers take both for a passing state of the server and try again (``rescind.workers.policy``),
on a client of the new master (``connection.redirected``).

Every other key that hashes to the same slot moves with it: tenants whose names share the slot
(``tenants_in``), say. Run again after a failure half-way, it resumes: the slot's states are
set again and the keys left on the source are moved.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import redis
from redis.cluster import ClusterNode, RedisCluster, key_slot

from rescind.contract import layout
from rescind.contract.errors import Invalid

KEYS_PER_MIGRATE = 100
# What one memory costs a MIGRATE of its graph (serialised on the source, sent, loaded and
# indexed on the target, both blocked meanwhile): the slowest of the medians measured on a
# loaded 2-core machine (docs/scaling.md, "Moving a tenant"). Used to refuse a move whose pause
# would outlast what the cluster tolerates of a silent master.
SECONDS_PER_MEMORY = 25e-6


class TooBig(Invalid):
    """The graph's MIGRATE would block both masters longer than the cluster tolerates."""


@dataclass
class MoveReport:
    """What one move did: the slot, both masters, the keys moved and how long each step took."""

    slot: int
    source: str
    target: str
    keys: int = 0
    graphs: list[str] = field(default_factory=list)
    migrate_s: list[float] = field(default_factory=list)  # one per MIGRATE command
    graph_migrate_s: float = 0.0  # the MIGRATE of the graph key(s)
    seconds: float = 0.0  # from the first SETSLOT to the last

    def as_dict(self) -> dict:
        return {"slot": self.slot, "source": self.source, "target": self.target,
                "keys": self.keys, "graphs": self.graphs,
                "graph_migrate_s": round(self.graph_migrate_s, 4),
                "migrates": len(self.migrate_s), "seconds": round(self.seconds, 4)}


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _master(conn: RedisCluster, address: str) -> ClusterNode:
    """The master at ``host:port`` (Invalid if the cluster has no such master)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise Invalid(f"a master is named host:port, not {address!r}")
    conn.nodes_manager.initialize()  # the cluster as it is now, not as it was at connect
    for node in conn.get_primaries():
        same_host = node.host == host or {node.host, host} <= {"127.0.0.1", "localhost"}
        if same_host and node.port == int(port):
            return node
    masters = ", ".join(sorted(f"{n.host}:{n.port}" for n in conn.get_primaries()))
    raise Invalid(f"{address} is not a master of this cluster (its masters: {masters})")


def _owner(conn: RedisCluster, slot: int) -> ClusterNode:
    conn.nodes_manager.initialize()
    return conn.nodes_manager.get_node_from_slot(slot)


def _node_id(node: ClusterNode) -> str:
    return _text(node.redis_connection.execute_command("CLUSTER", "MYID"))


def keys_in(node: redis.Redis, slot: int, count: int = KEYS_PER_MIGRATE) -> list[bytes]:
    return list(node.execute_command("CLUSTER", "GETKEYSINSLOT", slot, count))


def tenants_in(conn: RedisCluster, slot: int) -> list[str]:
    """The tenants whose graphs are in ``slot`` (they all move together)."""
    node = _owner(conn, slot).redis_connection
    found, keys = [], keys_in(node, slot, 1_000_000)
    for key in keys:
        tenant = layout.tenant_of_graph(_text(key))
        if tenant is not None:
            found.append(tenant)
    return sorted(found)


def node_timeout_s(node: redis.Redis) -> float:
    """How long the cluster lets a master be silent before it counts it as failed."""
    return int(node.config_get("cluster-node-timeout")["cluster-node-timeout"]) / 1000


def memories_in(node: redis.Redis, slot: int) -> int:
    """Memories of the graphs in ``slot`` (a label count: no scan)."""
    total = 0
    for key in keys_in(node, slot, 1_000_000):
        name = _text(key)
        if layout.tenant_of_graph(name) is not None:
            reply = node.execute_command("GRAPH.RO_QUERY", name, "MATCH (m:Mem) RETURN count(m)")
            total += int(reply[1][0][0])
    return total


def expected_pause_s(memories: int) -> float:
    return memories * SECONDS_PER_MEMORY


def move_slot(conn: RedisCluster, slot: int, target: str, timeout_ms: int = 600_000,
              keys_per_migrate: int = KEYS_PER_MIGRATE,
              max_pause_s: float | None = None) -> MoveReport:
    """Move ``slot`` to the master at ``target`` (``host:port``), keys and all.

    Refused (TooBig) before anything changes when the graphs' MIGRATE is expected to block the
    masters longer than ``max_pause_s`` (by default half the cluster's node timeout: past it the
    other masters count the source as failed, the target refuses the graph with CLUSTERDOWN,
    and a replica would take over). A MIGRATE that fails before any key moved puts the slot
    back as it was; one that fails later leaves it migrating, and running again resumes."""
    if not isinstance(conn, RedisCluster):
        raise Invalid("moving a tenant needs a Redis Cluster; this is a single server")
    dest = _master(conn, target)
    source = _owner(conn, slot)
    report = MoveReport(slot, f"{source.host}:{source.port}", f"{dest.host}:{dest.port}")
    if source.name == dest.name:
        raise Invalid(f"slot {slot} is on {report.target} already")
    src, dst = source.redis_connection, dest.redis_connection
    limit = max_pause_s if max_pause_s is not None else node_timeout_s(src) / 2
    memories = memories_in(src, slot)
    if expected_pause_s(memories) > limit:
        raise TooBig(
            f"slot {slot} holds {memories:,} memories: moving them would block {report.source} "
            f"and {report.target} for about {expected_pause_s(memories):.0f} s, more than "
            f"{limit:g} s (half the cluster-node-timeout, or --max-pause); see docs/scaling.md, "
            "\"Moving a tenant\", for the way that works")
    src_id, dst_id = _node_id(source), _node_id(dest)
    start = time.perf_counter()
    dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
    src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
    try:
        _migrate_keys(src, dest, slot, report, timeout_ms, keys_per_migrate)
    except Exception:
        if report.keys == 0 and not keys_in(dst, slot, 1):  # nothing moved: as it was
            for node in (src, dst):
                node.execute_command("CLUSTER", "SETSLOT", slot, "STABLE")
        raise
    # The target first: once it owns the slot, a client sent there by the source stays there.
    others = [n for n in conn.get_primaries() if n.name not in (source.name, dest.name)]
    for node in (dest, source, *others):
        node.redis_connection.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
    report.seconds = time.perf_counter() - start
    conn.nodes_manager.initialize()
    return report


def _migrate_keys(src: redis.Redis, dest: ClusterNode, slot: int, report: MoveReport,
                  timeout_ms: int, keys_per_migrate: int) -> None:
    graphs = {_text(k) for k in src.execute_command("GRAPH.LIST")}
    while keys := keys_in(src, slot, keys_per_migrate):
        names = [_text(k) for k in keys]
        big = [k for k in names if k in graphs]
        # A graph alone in its MIGRATE: its time is the pause everyone on both masters sees.
        for part in ([[k] for k in big] + ([[k for k in names if k not in graphs]]
                                           if len(big) < len(names) else [])):
            t = time.perf_counter()
            try:
                src.execute_command("MIGRATE", dest.host, dest.port, "", 0, timeout_ms,
                                    "KEYS", *part)
            except redis.ResponseError as exc:
                if "BUSYKEY" in str(exc):
                    raise Invalid(f"{report.target} holds {part[0]!r} already: not moving over it; "
                                  "see docs/scaling.md, \"Moving a tenant\"") from exc
                raise
            spent = time.perf_counter() - t
            report.migrate_s.append(spent)
            report.keys += len(part)
            if part[0] in graphs:
                report.graphs.append(part[0])
                report.graph_migrate_s += spent


def move_tenant(conn: RedisCluster, tenant: str, target: str, **options) -> MoveReport:
    """Move every key of ``tenant`` (its slot) to the master at ``target``."""
    return move_slot(conn, key_slot(layout.graph_key(tenant).encode()), target, **options)


__all__ = ["SECONDS_PER_MEMORY", "MoveReport", "TooBig", "expected_pause_s", "keys_in",
           "memories_in", "move_slot", "move_tenant", "node_timeout_s", "tenants_in"]
