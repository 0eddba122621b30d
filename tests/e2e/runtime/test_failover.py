"""A master of a local cluster dies while the agents write; its replica takes over, and no
acknowledged write is lost.

To make the loss a failover can cause happen on loopback, the master's replica is stopped
(SIGSTOP) and the master keeps only 64 KB of output for it, so that the master drops the link
and the writes made meanwhile exist on the master alone; then the master is killed and the
replica resumed, and promoted. Without waiting for a replica (WAIT) before acknowledging, 84
of 734 writes that the workers had acknowledged were gone after the failover (a one-off script
with these steps for the graph's master and ``connection.replicated`` made to answer True at
once; not kept as a test, since how much is lost depends on timing); with it, none.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.runtime.cluster import EmbeddedCluster
from rescind.transport import connection
from rescind.workers.app import WorkerSettings, WorkerThread

AT = ev.from_micros(1_800_000_000_000_000)
BIG = "x" * 19_000  # large writes fill the master's output for its stopped replica quickly


def port_of(client) -> int:
    return client.connection_pool.connection_kwargs["port"]


def tenant_on(conn, key_on_victim, key_elsewhere, victim: int) -> str:
    """A tenant one of whose keys is on the master at port ``victim`` and the other is not."""
    for i in range(1000):
        t = f"fo-{i}"
        if port_of(connection.node_for(conn, key_on_victim(t))) == victim and \
                port_of(connection.node_for(conn, key_elsewhere(t))) != victim:
            return t
    raise AssertionError("no such tenant")


@pytest.mark.parametrize("dies", ["the graph's master", "the stream's master"])
def test_a_master_killed_during_writes_loses_no_acknowledged_write(tmp_path, dies, caplog):
    """The master that dies is the one whose address the workers and the agents were given."""
    with EmbeddedCluster(3, 1) as cluster:
        conn = connect(cluster.url)
        master = cluster.nodes[0]
        keys = [layout.graph_key, layout.tenant_stream]
        if dies == "the stream's master":
            keys.reverse()
        t = tenant_on(conn, *keys, master.port)
        tenants.create(conn, t, by="tests")
        key = keys[0](t)
        master_client = connection.node_for(conn, key)
        replica_port = master_client.info("replication")["slave0"]["port"]
        replica = next(n for n in cluster.nodes if n.port == replica_port)
        master_client.config_set("client-output-buffer-limit", "replica 65536 65536 0")
        pub = Publisher(cluster.url, spool_dir=tmp_path / "spool", tenant=t)
        n = 0

        def write(text: str) -> None:
            nonlocal n
            pub.publish(ev.ObservationRecorded(event_id=f"o{n}", tenant=t, at=AT,
                                               source="portal:x", text=f"acct {n} {text}"))
            n += 1

        settings = WorkerSettings(url=cluster.url, worker_id="failover", reaper_idle_ms=2_000)
        try:
            with WorkerThread(settings, ("writer", "retraction", "reaper", "gate")):
                for _ in range(100):
                    write("")
                time.sleep(1.0)
                os.kill(replica.process.pid, signal.SIGSTOP)  # the replica falls behind...
                try:
                    start = time.monotonic()
                    while time.monotonic() - start < 1.5:
                        write(BIG)
                        time.sleep(0.005)
                finally:
                    os.kill(master.process.pid, signal.SIGKILL)  # ...and its master dies
                    os.kill(replica.process.pid, signal.SIGCONT)
                start = time.monotonic()  # the agents write on while the replica takes over
                while time.monotonic() - start < 5.0:
                    write("")
                    time.sleep(0.01)
                live = next(node.url for node in cluster.nodes if node is not master)
                graph = TenantGraph(connect(live), t)
                deadline, landed = time.monotonic() + 60, -1
                while time.monotonic() < deadline:
                    try:
                        landed = graph.rows("MATCH (m:Mem) RETURN count(m)")[0][0]
                    except Exception:  # noqa: BLE001 - the cluster still failing over
                        graph = TenantGraph(connect(live), t)
                    if landed == n:
                        break
                    time.sleep(0.2)
        finally:
            pub.close()
        promoted = connection.node_for(connect(live), key)
        assert port_of(promoted) == replica.port  # the replica took over
        assert landed == n, f"{n - landed} of {n} writes lost when {dies} died"
        assert pub.stats.published == n and pub.stats.dropped == 0
        said = [r.getMessage() for r in caplog.records if r.name == "rescind.workers"]
        # Said a few times, not once per try (a try is every 0.1-2 s for the whole failover):
        # the cluster says it failed only after its node timeout (2 s), and a node that answers
        # meanwhile reads as back. On a loaded machine the failover flaps longer (8 seen).
        assert len([m for m in said if m.startswith("lost FalkorDB")]) <= 10, said
