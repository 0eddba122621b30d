"""`rescind cluster bootstrap` forms a Redis Cluster of bare FalkorDB nodes as a deployment
starts them (a password, masterauth, nodes announcing host names), finishes one half formed,
and changes nothing on a formed one, even after a failover."""

from __future__ import annotations

import contextlib
import json
import time

import pytest
import redis
from typer.testing import CliRunner

from rescind.cli.main import app
from rescind.runtime.bootstrap import BootstrapError, Node, View, bootstrap, slot_ranges
from rescind.runtime.cluster import ClusterNode, EmbeddedCluster
from rescind.runtime.server import EmbeddedFalkorDB, free_port
from rescind.transport import connection

PASSWORD = "s3cret-for-tests"


@contextlib.contextmanager
def bare_nodes(n: int):
    """``n`` cluster-enabled nodes, not introduced to each other, each set up as the
    Kubernetes StatefulSet sets its pods: requirepass and masterauth, and a host name announced
    to clients (here `localhost`, which the bootstrap resolves to the IP it meets by)."""
    nodes = [ClusterNode(None) for _ in range(n)]  # ports chosen again if taken meanwhile
    try:
        for node in nodes:
            node.start()
            c = node.client()
            c.config_set("cluster-announce-hostname", "localhost")
            c.config_set("cluster-preferred-endpoint-type", "hostname")
            c.config_set("masterauth", PASSWORD)
            c.config_set("requirepass", PASSWORD)
            c.close()
        yield nodes
    finally:
        for node in nodes:
            node.stop()


def client(node: ClusterNode) -> redis.Redis:
    return redis.Redis(port=node.port, password=PASSWORD, socket_timeout=5.0,
                       decode_responses=True)


def topology(nodes: list[ClusterNode]) -> list[tuple]:
    """Each node's line about itself in CLUSTER NODES: id, role, master, config epoch, slots
    (the address, the pings and the link state left out)."""
    found = []
    for node in nodes:
        with client(node) as c:
            c.set_response_callback("CLUSTER NODES", lambda r, **_: r)
            [me] = [line.split() for line in c.execute_command("CLUSTER", "NODES").splitlines()
                    if "myself" in line.split()[2]]
            flags = set(me[2].split(",")) - {"myself"}
            found.append((me[0], flags, me[3], me[6], me[8:]))
    return found


def cluster_info(c: redis.Redis) -> dict[str, str]:
    return dict(line.split(":", 1) for line in c.execute_command("CLUSTER", "INFO").split())


def addresses(nodes: list[ClusterNode]) -> list[Node]:
    return [Node("localhost", n.port, n.bus_port) for n in nodes]


def test_six_bare_nodes_become_three_masters_with_a_replica_each_and_stay_so():
    with bare_nodes(6) as nodes:
        changed = bootstrap(addresses(nodes), replicas=1, password=PASSWORD, timeout=60)
        assert len([s for s in changed if ": slots " in s]) == 3
        assert len([s for s in changed if ": met " in s]) == 5
        assert len([s for s in changed if ": replica of " in s]) == 3

        ids = [t[0] for t in topology(nodes)]
        for i, (node, (lo, hi)) in enumerate(zip(nodes[:3], slot_ranges(3), strict=True)):
            with client(node) as c:
                info = cluster_info(c)
                assert info["cluster_state"] == "ok" and int(info["cluster_slots_ok"]) == 16_384
                assert c.info("replication")["role"] == "master"
            assert topology(nodes)[i][4] == [f"{lo}-{hi}"]
        for j, node in enumerate(nodes[3:]):
            with client(node) as c:
                assert c.info("replication")["master_link_status"] == "up"  # masterauth works
            assert topology(nodes)[3 + j][2] == ids[j]
        with client(nodes[0]) as c:  # clients are sent to host names, not pod IPs
            endpoints = {shard[2][0] for shard in c.execute_command("CLUSTER", "SLOTS")}
        assert endpoints == {"localhost"}

        # Rescind, given one node's URL, works on the whole cluster, and a replica confirms
        conn = connection.connect(f"redis://:{PASSWORD}@localhost:{nodes[4].port}")
        assert connection.clustered(conn) and len(connection.primaries(conn)) == 3
        for tenant in ("acme", "globex", "initech", "umbrella"):
            conn.set(f"rescind:{{{tenant}}}:probe", tenant)
            assert conn.get(f"rescind:{{{tenant}}}:probe") == tenant.encode()
            assert connection.replicated(conn, f"rescind:{{{tenant}}}:probe")
        conn.close()

        # again: nothing to do, nothing changed (ids, roles, slots, epochs)
        before = topology(nodes)
        assert bootstrap(addresses(nodes), replicas=1, password=PASSWORD, timeout=60) == []
        assert topology(nodes) == before

        # after a failover the former replica is master: formed, and left so (the CLI, too)
        with client(nodes[3]) as c:
            c.execute_command("CLUSTER", "FAILOVER")
            _wait(lambda: c.info("replication")["role"] == "master")
        # the old master learns it was demoted a moment later (by gossip): wait for that too,
        # or "promoted" is a topology still in flight
        _wait(lambda: topology(nodes)[0][1] == {"slave"} and topology(nodes)[0][2] == ids[3])
        promoted = topology(nodes)
        result = CliRunner().invoke(app, [
            "cluster", "bootstrap", "--replicas", "1", "--timeout", "60", "--nodes",
            ",".join(f"localhost:{n.port}@{n.bus_port}" for n in nodes)],
            env={"FALKORDB_PASSWORD": PASSWORD})
        assert result.exit_code == 0, result.output
        assert "nothing to do: the cluster of 3 master(s) with 1 replica(s) each is formed" \
            in result.output
        as_json = CliRunner().invoke(app, [
            "cluster", "bootstrap", "--replicas", "1", "--timeout", "60", "--json", "--nodes",
            ",".join(f"localhost:{n.port}@{n.bus_port}" for n in nodes)],
            env={"FALKORDB_PASSWORD": PASSWORD})
        assert as_json.exit_code == 0, as_json.output
        assert json.loads(as_json.stdout) == {"masters": 3, "replicas": 1, "changes": []}
        assert topology(nodes) == promoted and promoted[0][1] == {"slave"}


def test_a_half_formed_cluster_is_finished():
    """A bootstrap that stopped after the first master took its slots is taken up where it
    stopped: the others get theirs, nobody's are moved."""
    with bare_nodes(3) as nodes:
        lo, hi = slot_ranges(3)[0]
        with client(nodes[0]) as c:
            c.execute_command("CLUSTER", "ADDSLOTSRANGE", lo, hi)
        changed = bootstrap(addresses(nodes), replicas=0, password=PASSWORD, timeout=60)
        assert [s for s in changed if ": slots " in s] == [
            f"localhost:{nodes[1].port}: slots 5461-10921",
            f"localhost:{nodes[2].port}: slots 10922-16383"]
        for node in nodes:
            with client(node) as c:
                assert cluster_info(c)["cluster_state"] == "ok"


def test_it_says_clearly_what_it_cannot_do():
    with EmbeddedFalkorDB() as single, pytest.raises(
            BootstrapError, match="not in cluster mode: start it with --cluster-enabled yes"):
        bootstrap([Node("127.0.0.1", single.port, single.port + 1)], replicas=0, timeout=5)
    with pytest.raises(BootstrapError, match=r"no answer from 127\.0\.0\.1:\d+ in 1s"):
        bootstrap([Node("127.0.0.1", free_port(), free_port())], replicas=0, timeout=1)
    with bare_nodes(1) as [node]:
        for wrong in (None, "wrong"):
            with pytest.raises(BootstrapError, match="refused the password .*FALKORDB_PASSWORD"):
                bootstrap([Node("127.0.0.1", node.port, node.bus_port)], replicas=0,
                          password=wrong, timeout=30)


def _wait(check, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_a_cluster_whose_every_node_came_back_on_a_new_address_is_met_again(tmp_path):
    """A whole cluster rescheduled: every node restarts with its data, but the addresses its
    nodes.conf holds for the others are gone (here 127.0.0.2, where nobody listens), so no node
    reaches another and the cluster stays failed. The bootstrap meets each node with the first
    at its address now, and the nodes, which know each other's ids, take the new addresses: the
    same three masters serve their slots and their data again."""
    with EmbeddedCluster(3, 0, data_dir=tmp_path) as cluster:
        conn = connection.connect(cluster.url)
        conn.set("{moved}:k", "kept")
        ids = sorted(_node_ids(cluster))
        for node in cluster.nodes:  # the AOF on disk before the stop
            assert connection.rewrite_aof(node.client(), finished=True)
    for conf in tmp_path.glob("node-*/nodes.conf"):
        conf.write_text(conf.read_text().replace("127.0.0.1:", "127.0.0.2:"))

    with EmbeddedCluster(3, 0, data_dir=tmp_path) as cluster:  # forms it with the bootstrap
        for node in cluster.nodes:
            assert b"cluster_state:ok" in node.client().execute_command("CLUSTER", "INFO")
        assert sorted(_node_ids(cluster)) == ids
        assert connection.connect(cluster.url).get("{moved}:k") == b"kept"


def _node_ids(cluster: EmbeddedCluster) -> list[str]:
    return [View.parse(n.client().execute_command("CLUSTER", "NODES").decode()).id
            for n in cluster.nodes]
