"""Forming a Redis Cluster of FalkorDB nodes, or finishing one half formed: what ``rescind
cluster bootstrap`` runs in a deployment, and what ``rescind up --cluster`` runs locally.

The nodes are given in order; with R replicas per master the first N = len(nodes) / (1 + R)
are the masters and share the 16,384 slots in equal ranges (``CLUSTER ADDSLOTSRANGE``); every
other node meets the first one (``CLUSTER MEET``, by the IP its name resolves to: Redis takes
no host name there), and replica j follows master j mod N (``CLUSTER REPLICATE``). Done once
every node says ``cluster_state:ok`` and every replica's link to its master is up.

Each step is taken only where it is missing, so running it on a formed cluster changes nothing:
slots are assigned only to a master that owns none, and only a range nobody owns; a node meets
the first one only if it does not know it; only a master without slots is made a replica. A
cluster after a failover (a former replica now master) is formed, and stays as it is; a node
that comes back empty (its volume lost) is met and made a replica of the master with the
fewest; nodes that know each other at addresses that are gone (a whole cluster rescheduled on
new IPs) are met again at their addresses now.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import redis

from rescind.contract.errors import Invalid
from rescind.runtime.readiness import ServerError

SLOTS = 16_384


class BootstrapError(ServerError):
    """The cluster cannot be formed as asked (a node unreachable, a layout of someone else's)."""


@dataclass(frozen=True)
class Node:
    """A node's address: ``host:port``, and its cluster bus port (``@bus``, default port +
    10,000, as Redis's own)."""

    host: str
    port: int
    bus_port: int

    @classmethod
    def parse(cls, text: str) -> Node:
        address, _, bus = text.strip().partition("@")
        host, _, port = address.rpartition(":")
        try:
            port_n = int(port)
            bus_n = int(bus) if bus else port_n + 10_000
        except ValueError:
            port_n = bus_n = 0
        if not host or not 0 < port_n < 65_536 or not 0 < bus_n < 65_536:
            raise Invalid(f"not a node address: {text!r} (expected host:port or "
                          "host:port@busport)")
        return cls(host.strip("[]"), port_n, bus_n)

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_nodes(text: str) -> list[Node]:
    """``host:port[@bus],...`` into nodes, refusing an empty list and a node given twice."""
    nodes = [Node.parse(t) for t in text.split(",") if t.strip()]
    if not nodes:
        raise Invalid("no nodes given (expected host:port,host:port,...)")
    twice = {str(n) for n in nodes if [str(m) for m in nodes].count(str(n)) > 1}
    if twice:
        raise Invalid(f"node(s) given twice: {', '.join(sorted(twice))}")
    return nodes


def masters_of(nodes: int, replicas: int) -> int:
    """How many of ``nodes`` are masters with ``replicas`` replicas each."""
    if replicas < 0 or nodes < 1 or nodes % (1 + replicas):
        raise Invalid(f"{nodes} node(s) cannot be masters with {replicas} replica(s) each: "
                      f"give a multiple of {1 + replicas} nodes")
    return nodes // (1 + replicas)


def slot_ranges(masters: int) -> list[tuple[int, int]]:
    """The slots of each master, first to last: equal ranges covering 0..16383 once."""
    if not 1 <= masters <= SLOTS:
        raise Invalid(f"a cluster has 1 to {SLOTS} masters, not {masters}")
    return [(i * SLOTS // masters, (i + 1) * SLOTS // masters - 1) for i in range(masters)]


@dataclass
class View:
    """What one node says (``CLUSTER NODES``): its id, whether it is a replica, the slots it
    owns, and the ids it knows (handshakes excluded)."""

    id: str
    replica: bool
    slots: set[int]
    known: set[str]
    masters: dict[str, set[int]] = field(default_factory=dict)  # id -> slots, as it sees them
    replicas_of: dict[str, int] = field(default_factory=dict)  # master id -> replicas known
    linked: set[str] = field(default_factory=set)  # ids it has a connected link to

    @classmethod
    def parse(cls, text: str) -> View:
        me: tuple[str, bool, set[int]] | None = None
        known: set[str] = set()
        masters: dict[str, set[int]] = {}
        replicas_of: dict[str, int] = {}
        linked: set[str] = set()
        for line in text.splitlines():
            parts = line.split()
            if len(parts) < 8:
                continue
            node_id, flags, master = parts[0], set(parts[2].split(",")), parts[3]
            if "handshake" in flags:
                continue
            known.add(node_id)
            if parts[7] == "connected":
                linked.add(node_id)
            slots: set[int] = set()
            for s in parts[8:]:
                if s.startswith("["):  # a slot being moved: [slot->-id] / [slot-<-id]
                    continue
                lo, _, hi = s.partition("-")
                slots.update(range(int(lo), int(hi or lo) + 1))
            if "master" in flags and "fail" not in flags:
                masters[node_id] = slots
            if "slave" in flags and master != "-":
                replicas_of[master] = replicas_of.get(master, 0) + 1
            if "myself" in flags:
                me = (node_id, "slave" in flags, slots)
        if me is None:
            raise BootstrapError("CLUSTER NODES names no node as myself")
        return cls(me[0], me[1], me[2], known, masters, replicas_of, linked)


def _client(node: Node, password: str | None) -> redis.Redis:
    c = redis.Redis(host=node.host, port=node.port, password=password or None,
                    socket_timeout=10.0, socket_connect_timeout=3.0)
    c.set_response_callback("CLUSTER NODES", lambda r, **_: r)  # the text, parsed here
    return c


def _view(client: redis.Redis) -> View:
    reply = client.execute_command("CLUSTER", "NODES")
    return View.parse(reply.decode() if isinstance(reply, bytes) else str(reply))


def _ip(node: Node) -> str:
    """The IP a connection to ``node`` reaches (its name resolved as a client would)."""
    with socket.create_connection((node.host, node.port), timeout=3.0) as s:
        return s.getpeername()[0]


def _answers(node: Node, client: redis.Redis) -> bool:
    """Whether ``node`` answers; a refused password is told at once, not waited out."""
    try:
        return bool(client.ping())
    except redis.AuthenticationError as exc:
        raise BootstrapError(f"{node} refused the password ({exc}): give the nodes' "
                             "requirepass in FALKORDB_PASSWORD") from None


def _until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while True:
        try:
            if check():
                return
        except (redis.RedisError, OSError) as exc:
            last = exc
        if time.monotonic() > deadline:
            why = f" (last error: {last})" if last else ""
            raise BootstrapError(f"the cluster did not form: no {what} in {timeout:g}s{why}")
        time.sleep(0.1)


def bootstrap(nodes: list[Node], replicas: int = 1, password: str | None = None,
              timeout: float = 300.0, say: Callable[[str], None] = lambda _: None) -> list[str]:
    """Form the cluster of ``nodes`` (masters first), or finish forming it; wait until it is
    ready. Returns what was changed, empty when nothing was (``say`` is told each step, and
    each wait, as it happens). ``timeout`` bounds each wait: for the nodes to answer (pods
    starting), to know each other, to be ok."""
    n_masters = masters_of(len(nodes), replicas)
    plan = slot_ranges(n_masters)
    clients = [_client(n, password) for n in nodes]
    changed: list[str] = []

    def did(step: str) -> None:
        changed.append(step)
        say(step)

    try:
        say(f"waiting for {len(nodes)} node(s) to answer")
        for node, c in zip(nodes, clients, strict=True):
            _until(lambda node=node, c=c: _answers(node, c), timeout, f"answer from {node}")
            if c.info("cluster").get("cluster_enabled") != 1:
                raise BootstrapError(f"{node} is not in cluster mode: start it with "
                                     "--cluster-enabled yes")
        views = [_view(c) for c in clients]
        ids = [v.id for v in views]

        # 1. slots: to each master that owns none, its range, if nobody owns any of it
        owned = set().union(*(v.slots for v in views))
        for i, (lo, hi) in enumerate(plan):
            if views[i].slots or len(owned) == SLOTS:
                continue
            if owned & set(range(lo, hi + 1)):
                raise BootstrapError(
                    f"slots {lo}-{hi}, which {nodes[i]} would take, are partly owned by other "
                    "nodes: this cluster was formed differently; assign the unowned slots by "
                    "hand (CLUSTER ADDSLOTSRANGE)")
            clients[i].execute_command("CLUSTER", "ADDSLOTSRANGE", lo, hi)
            owned |= set(range(lo, hi + 1))
            did(f"{nodes[i]}: slots {lo}-{hi}")
        if len(owned) != SLOTS:
            raise BootstrapError(f"{SLOTS - len(owned)} slot(s) are owned by no node, and no "
                                 "master without slots is left to take them")

        # 2. membership: every node meets the first one, unless they know each other and their
        #    link is up at the addresses they have now. Nodes that know each other's ids at
        #    addresses that are gone (every pod rescheduled on a new IP) are met both ways:
        #    each takes the other's new address, and a node learns its own from a MEET.
        first = nodes[0]
        first_ip = None
        for j in range(1, len(nodes)):
            if ids[0] in views[j].known and ids[j] in views[0].known and \
                    ids[0] in views[j].linked and ids[j] in views[0].linked:
                continue
            first_ip = first_ip or _ip(first)
            clients[j].execute_command("CLUSTER", "MEET", first_ip, first.port, first.bus_port)
            did(f"{nodes[j]}: met {first} ({first_ip})")
            if ids[0] in views[j].known:  # known already: its link was down, so both ways
                ip = _ip(nodes[j])
                clients[0].execute_command("CLUSTER", "MEET", ip, nodes[j].port,
                                           nodes[j].bus_port)
                did(f"{first}: met {nodes[j]} ({ip})")
        say("waiting for every node to know every other")
        _until(lambda: all(set(ids) <= _view(c).known for c in clients), timeout,
               "node knowing every other")

        # 3. replicas: each master without slots follows its master in the plan, or the master
        #    with the fewest replicas if that one no longer is a master
        added: dict[str, int] = {}
        for j in range(len(nodes)):
            mine = _view(clients[j])
            if mine.replica or mine.slots:
                continue
            _until(lambda j=j: len(set().union(*_view(clients[j]).masters.values())) == SLOTS,
                   timeout, f"view of every slot's master from {nodes[j]}")
            seen = _view(clients[j])
            serving = [m for m, s in seen.masters.items() if s]
            planned = ids[(j - n_masters) % n_masters] if j >= n_masters else None
            target = planned if planned in serving else min(
                serving, key=lambda m: (seen.replicas_of.get(m, 0) + added.get(m, 0), m))
            clients[j].execute_command("CLUSTER", "REPLICATE", target)
            added[target] = added.get(target, 0) + 1
            did(f"{nodes[j]}: replica of {nodes[ids.index(target)] if target in ids else target}")

        # 4. ready
        say("waiting for cluster_state:ok on every node and every replica's link")
        _until(lambda: all(b"cluster_state:ok" in c.execute_command("CLUSTER", "INFO")
                           for c in clients), timeout, "cluster_state:ok on every node")
        _until(lambda: all(c.info("replication").get("master_link_status") == "up"
                           for c in clients if _view(c).replica), timeout,
               "replica's link to its master")
        return changed
    finally:
        for c in clients:
            c.close()


__all__ = ["SLOTS", "BootstrapError", "Node", "View", "bootstrap", "masters_of", "parse_nodes",
           "slot_ranges"]
