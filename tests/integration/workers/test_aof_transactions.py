"""The AOF the product leaves holds no graph command inside MULTI/EXEC: FalkorDB 4.16 may abort
replaying one at a restart (``ASSERTION FAILED '!server.in_exec'``: it yields while loading,
and a client's command arriving then finds the server inside EXEC; issue 30)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import GateRefused
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.gate import GateClient
from rescind.middleware.publisher import Publisher
from rescind.scenario.via_streams import replay_via_streams, wait_idle
from rescind.workers.app import WorkerSettings, WorkerThread
from tests.support.aof import NoRewrite
from tests.support.aof_files import commands, graph_commands_in_transactions
from tests.support.paths import ROOT

AT = datetime(2026, 11, 4, 9, 0, tzinfo=UTC)
INVOICE = "Invoice INV-1041 from Acme: 6,000.00 due 2026-11-05"  # observed in the story

# After the vendor-portal story: every decision a scenario can make, so the retraction worker
# runs each of its paths (withdraw, correct, reinstate, execute).
DECISIONS = [
    {"op": "withdraw", "id": "w-remit", "memory": "n-remit", "reason": "wrong address",
     "by": "ops@example.com"},
    {"op": "correct", "id": "c-remit", "memory": "n-remit-contract",
     "text": "Acme remit address is 2 Dock Road, Leeds", "by": "reviewer:ops"},
    {"op": "reinstate", "retraction": "w-remit"},
    {"op": "execute", "action": "pay-1042", "at": "2026-11-04T08:00:00Z"},
]


def test_the_workers_put_no_graph_command_in_a_transaction_of_the_aof(tmp_path):
    """Writes, retractions, withdrawals, corrections, reinstatements, store deletions and
    adoptions and gate questions, each through the real workers on a server with appendonly
    on: the AOF replays many graph writes, none between a MULTI and its EXEC."""
    data = tmp_path / "data"
    server = NoRewrite(data_dir=data).start()  # no rewrite: every command stays in the AOF
    t = "aof"
    try:
        settings = WorkerSettings(url=server.url, worker_id="aof", reaper_idle_ms=2_000)
        with WorkerThread(settings, ("writer", "retraction", "gate", "reaper")):
            story = (ROOT / "examples" / "vendor-portal.jsonl").read_text()
            text = story + "".join(json.dumps(d) + "\n" for d in DECISIONS)
            # The replay creates the tenant, as every harness does (tenants.create).
            report = replay_via_streams(text, server.url, t, start_workers=False)
            assert report["gates"], report  # the story asked the gate (directly)
            _store_events(server.url, t, tmp_path / "spool")
            _gate_questions(server.url, t)
        graph = TenantGraph(connect(server.url), t)
        keys = graph.rows("MATCH (m:Mem) WHERE m.key IS NOT NULL RETURN m.key ORDER BY m.key")
        assert keys == [["notes/acme"], ["notes/old"]]  # the store item and the adopted one
    finally:
        server.stop()  # SIGTERM: the AOF is flushed
    replayed = list(commands(data))
    graph_writes = [c for c in replayed if c[0].upper() == b"GRAPH.QUERY"
                    and c[1] == f"rescind:{{{t}}}".encode()]
    assert len(graph_writes) >= 10, len(graph_writes)  # the AOF was read, and holds the writes
    assert any(c[0].upper() == b"MULTI" for c in replayed)  # the product does use transactions
    inside = graph_commands_in_transactions(data)
    assert inside == [], [c[:2] + [c[2][:200]] for c in inside]


def _store_events(url: str, tenant: str, spool: Path) -> None:
    """A store item written, deleted, and an older one adopted, through the publisher."""
    written = ev.MemoryWritten(event_id="s-1", tenant=tenant, at=AT, kind="belief",
                               text="Acme prefers email", agent="ap-agent",
                               premises=[ev.memory_id(tenant, "observation", INVOICE)],
                               key="notes/acme")
    pub = Publisher(url, spool_dir=str(spool))
    try:
        pub.publish(written)
        pub.publish(ev.MemoryAdopted(event_id="s-2", tenant=tenant, at=AT, kind="belief",
                                     key="notes/old", text="Acme prefers post"))
        pub.publish(ev.MemoryDeleted(event_id="s-3", tenant=tenant, at=AT,
                                     memory=written.memory(), key="notes/acme",
                                     agent="ap-agent"))
        assert pub.flush(30)
        wait_idle(connect(url), pub.stream_of(tenant))
    finally:
        pub.close()


def _gate_questions(url: str, tenant: str) -> None:
    """Through the gate worker: one payment it allows (and remembers), and the story's payment
    resting on the compromised portal, which it blocks."""
    gate = GateClient(url, tenant, 10)
    answer = gate.ask("pay-new", [ev.memory_id(tenant, "observation", INVOICE)], 10.0,
                      "Acme Ltd", at=AT)
    assert answer.allowed, answer
    with pytest.raises(GateRefused):
        gate.ask("pay-1042", [], None, None, proposed=True, at=AT)
    wait_idle(connect(url), layout.GATE)
