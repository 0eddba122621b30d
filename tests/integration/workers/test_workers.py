"""The writer and retraction workers on the real server: dead letters, late premises,
duplicates and reordering, and a publisher that outlives an absent Redis."""

from __future__ import annotations

import json
import random
import time
from datetime import UTC, datetime

import pytest

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.middleware.status import StatusCache
from rescind.operator.recalls import recall_list
from rescind.scenario.via_streams import wait_idle
from rescind.transport import connection
from rescind.workers.app import WorkerSettings, WorkerThread
from tests.support.dead import dead_since, last_dead_id

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def workers(falkordb):
    """Writer and retraction workers for this module's tests."""
    with WorkerThread(WorkerSettings(url=falkordb, worker_id="wtest", reaper_idle_ms=2_000),
                      ("writer", "retraction", "reaper")):
        yield falkordb


def world(tenant: str) -> list[ev.Event]:
    """A source, two observations, a belief on both, a plan and a payment."""
    t = tenant
    o1, o2 = ev.memory_id(t, "observation", "acct 1"), ev.memory_id(t, "observation", "acct 2")
    b = ev.memory_id(t, "belief", "pay to acct")
    p = ev.memory_id(t, "plan", "pay inv 1")
    return [
        ev.SourceDeclared(event_id="s", tenant=t, at=AT, source="portal", source_kind="portal"),
        ev.ObservationRecorded(event_id="o1", tenant=t, at=AT, source="portal", text="acct 1"),
        ev.ObservationRecorded(event_id="o2", tenant=t, at=AT, source="contract", text="acct 2",
                               source_kind="contract", source_domain="legal"),
        ev.MemoryWritten(event_id="b", tenant=t, at=AT, kind="belief", text="pay to acct",
                         premises=[o1, o2], agent="ap"),
        ev.MemoryWritten(event_id="p", tenant=t, at=AT, kind="plan", text="pay inv 1",
                         premises=[b], agent="payments"),
        ev.ActionProposed(event_id="a", tenant=t, at=AT, action="pay-1", text="wire 500",
                          premises=[p], agent="payments", amount=500, payee="Acme"),
    ]


def statuses(url: str, tenant: str) -> dict[str, str]:
    g = TenantGraph(connect(url), tenant)
    return {r[0]: r[1] for r in g.rows("MATCH (m:Mem)-[st:STATUS]->() RETURN m.id, st.status")}


def publish_raw(conn, tenant: str, data) -> None:
    body = data if isinstance(data, str) else json.dumps(data)
    conn.xadd(layout.tenant_stream(tenant), layout.encode(body))


def test_bad_entries_go_to_the_dead_letter_stream_and_the_worker_goes_on(workers, tenant_name):
    """Malformed, unknown-version, invalid and oversized entries are dead-lettered with a reason;
    nothing is written for them, and a valid event after them is applied."""
    conn = connection.connect(workers)
    start = last_dead_id(conn)
    good = world(tenant_name)[1].model_dump(mode="json", by_alias=True)
    publish_raw(conn, tenant_name, "this is not json")
    publish_raw(conn, tenant_name, {**good, "schema": 2, "event_id": "v2"})
    publish_raw(conn, tenant_name, {**good, "event_id": "bad", "text": ""})
    publish_raw(conn, tenant_name, {**good, "event_id": "big", "text": "x" * (300 * 1024)})
    wait_idle(conn, layout.tenant_stream(tenant_name))
    reasons = [d["reason"] for d in dead_since(conn, start)]
    assert any(r.startswith("malformed") for r in reasons)
    assert any("unknown schema version 2" in r for r in reasons)
    assert any(r.startswith("invalid event: text") for r in reasons)
    assert any(r.startswith("oversized") for r in reasons)
    assert not TenantGraph(connect(workers), tenant_name).exists()
    publish_raw(conn, tenant_name, good)
    wait_idle(conn, layout.tenant_stream(tenant_name))
    assert list(statuses(workers, tenant_name).values()) == ["IN"]


def test_a_write_whose_premise_arrives_later_is_applied(workers, tenant_name):
    """A belief published before its observation waits, unacknowledged, and lands when it can."""
    conn = connection.connect(workers)
    start = last_dead_id(conn)
    events = world(tenant_name)
    pub = Publisher(workers)
    for e in [events[0], events[3], events[4], events[5]]:  # belief, plan, payment first
        pub.publish(e)
    pub.flush()
    deadline = time.monotonic() + 30
    while not any(f.decode().startswith(f"{tenant_name} ")  # until the writer has tried them
                  for f in conn.hkeys(layout.WAITING)):      # and found them waiting
        assert time.monotonic() < deadline, "the writer never took up the early events"
        time.sleep(0.01)
    assert len(statuses(workers, tenant_name)) == 0  # nothing can stand yet
    for e in events[1:3]:
        pub.publish(e)
    pub.close()
    wait_idle(conn, layout.tenant_stream(tenant_name), timeout=30)
    got = statuses(workers, tenant_name)
    assert len(got) == 5 and set(got.values()) == {"IN"}
    assert dead_since(conn, start) == []


def test_duplicated_and_reordered_deliveries_give_the_same_graph(workers, tenant_name,
                                                                 another_tenant):
    """Every event three times, in a random order: the same memories and statuses as once."""
    conn = connection.connect(workers)
    events = world(tenant_name)
    once = world(another_tenant("x"))
    pub = Publisher(workers)
    for e in once:
        pub.publish(e)
    shuffled = events * 3
    random.Random(5).shuffle(shuffled)
    for e in shuffled:
        pub.publish(e)
    pub.close()
    for t in (tenant_name, tenant_name + "x"):
        wait_idle(conn, layout.tenant_stream(t), timeout=30)
    g = TenantGraph(connect(workers), tenant_name)
    assert g.rows("MATCH (j:Justification) RETURN count(j)") == [[3]]
    assert g.rows("MATCH ()-[s:SAID]->() RETURN count(s)") == [[2]]
    assert sorted(statuses(workers, tenant_name).values()) == sorted(
        statuses(workers, tenant_name + "x").values())


def test_a_compromise_event_takes_out_what_rests_on_the_source(workers, tenant_name):
    """SourceCompromised through the retraction worker: OUT downstream, StatusChanged emitted."""
    conn = connection.connect(workers)
    pub = Publisher(workers)
    for e in world(tenant_name)[:2] + [
        ev.MemoryWritten(event_id="b1", tenant=tenant_name, at=AT, kind="belief",
                         text="only portal", agent="ap",
                         premises=[ev.memory_id(tenant_name, "observation", "acct 1")])]:
        pub.publish(e)
    pub.flush()
    wait_idle(conn, layout.tenant_stream(tenant_name))
    pub.publish(ev.SourceCompromised(event_id="r", tenant=tenant_name, at=AT, retraction="r1",
                                     source="portal", reason="hacked", by="sec"))
    pub.close()
    wait_idle(conn, layout.tenant_stream(tenant_name))
    assert set(statuses(workers, tenant_name).values()) == {"OUT"}
    mine = [layout.decode(f).event() for _, f in conn.xrange(layout.status_stream(tenant_name))]
    assert {c["status"] for c in mine} == {"OUT"} and len(mine) == 2
    assert all(c["cause"] == "r1" for c in mine)


def test_writes_that_change_statuses_are_published_for_the_agents_caches(workers, tenant_name):
    """A memory written on an OUT premise is born OUT (here one planned in the writer's
    pipeline, and one held for its premise and retried), and a new reason brings an OUT memory
    back IN: the writer publishes each on the tenant's status stream once its batch landed, and
    an agent's cache started before learns them all."""
    t, conn, pub = tenant_name, connection.connect(workers), Publisher(workers)
    cache = StatusCache(workers, t)
    stream = layout.tenant_stream(t)

    def settle() -> None:
        pub.flush()
        wait_idle(conn, stream)

    def changes() -> dict[str, list[str]]:
        seen: dict[str, list[str]] = {}
        for _, f in conn.xrange(layout.status_stream(t)):
            c = layout.decode(f).event()
            seen.setdefault(c["memory"], []).append(c["status"])
        return seen

    def note(eid: str, text: str, premises: list[str]) -> ev.MemoryWritten:
        return ev.MemoryWritten(event_id=eid, tenant=t, at=AT, kind="belief", text=text,
                                premises=premises, agent="ap")

    o1, o2 = ev.memory_id(t, "observation", "acct 1"), ev.memory_id(t, "observation", "acct 2")
    b, later, held = (ev.memory_id(t, "belief", x) for x in ("on acct", "later", "held"))
    for e in world(t)[:3]:
        pub.publish(e)
    settle()
    pub.publish(ev.SourceCompromised(event_id="r", tenant=t, at=AT, retraction="r1",
                                     source="portal", reason="hacked", by="sec"))
    settle()
    assert changes() == {o1: ["OUT"]}
    pub.publish(note("b", "on acct", [o1]))  # born OUT
    pub.publish(note("h", "held", [later]))  # its premise is not there yet
    deadline = time.monotonic() + 5  # until that batch landed (the held write stays pending)
    while time.monotonic() < deadline and b not in changes():
        time.sleep(0.01)
    pub.publish(note("l", "later", [o1]))  # born OUT; then the held write, born OUT too
    settle()
    pub.publish(note("b2", "on acct", [o2]))  # a reason that stands: b comes back IN
    settle()
    pub.close()
    assert statuses(workers, t) == {o1: "OUT", o2: "IN", b: "IN", later: "OUT", held: "OUT"}
    assert changes() == {o1: ["OUT"], b: ["OUT", "IN"], later: ["OUT"], held: ["OUT"]}
    deadline = time.monotonic() + 5
    while cache.out != {o1, later, held} and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cache.out == {o1, later, held}
    cache.close()


def test_a_spool_sent_again_whole_changes_nothing(workers, tenant_name, another_tenant):
    """What the publisher's spool does after a crash: every event sent a second time, in order,
    after the first copies were applied; writes, an ActionExecuted and a SourceCompromised
    among them. The graph is the one of a single delivery: each write applied once (the copies
    coming after the retraction revive nothing), the payment executed, OUT and its recall
    drafted, the retraction recorded once, nothing dead-lettered."""
    conn = connection.connect(workers)
    start = last_dead_id(conn)

    def history(t: str) -> list[ev.Event]:
        return world(t) + [
            ev.ActionExecuted(event_id="x", tenant=t, at=AT, action="pay-1"),
            ev.SourceCompromised(event_id="r", tenant=t, at=AT, retraction="r1",
                                 source="portal", reason="hacked", by="sec")]

    pub = Publisher(workers)
    # One tenant at a time: the writer keys what it holds back (here the ActionExecuted that
    # arrives with its proposal) by entry id alone, and two streams can give one id twice.
    for t in (another_tenant("x"), tenant_name, tenant_name):  # the last: the segment again
        for e in history(t):
            pub.publish(e)
        pub.flush()
        wait_idle(conn, layout.tenant_stream(t), timeout=30)
    pub.close()

    def shape(t: str) -> dict:
        g = TenantGraph(connect(workers), t)
        return {"statuses": sorted(statuses(workers, t).values()),
                "justifications": g.rows("MATCH (j:Justification) RETURN count(j)"),
                "retractions": g.rows("MATCH ()-[r:RETRACTION]->() RETURN count(r)"),
                "action": g.rows("MATCH (m:Mem {kind: 'action'})-[st:STATUS]->() "
                                 "RETURN m.executed, st.status"),
                "recalls": [r.state for r in recall_list(g)]}

    twice, once = shape(tenant_name), shape(tenant_name + "x")
    assert twice == once
    assert twice["action"] == [[True, "OUT"]] and twice["recalls"] == ["drafted"]
    assert twice["retractions"] == [[1]]
    assert dead_since(conn, start) == []


def test_a_failure_of_an_earlier_try_does_not_mark_the_retry_failed(graph):
    """The first try's failure can reach the writer after the retry's proposal (it was held
    while the first proposal was in flight): it names the try it failed (``seq``), so the
    retry stays releasable; the retry's own failure still marks it."""
    from rescind.workers.ingest import apply_writes

    graph.ensure_schema()
    t, at = graph.tenant, datetime(2026, 11, 20, tzinfo=UTC)
    base = {"tenant": t, "at": at}
    seen = ev.ObservationRecorded(event_id="o", source="portal:acme", source_kind="portal",
                                  text="Acme account ZZ97", **base)
    premise = ev.memory_id(t, "observation", seen.text)

    def propose(eid: str, amount: float, seq: int) -> tuple[str, ev.Event]:
        return eid, ev.ActionProposed(event_id=eid, action="payment:INV-1002", text=f"pay {amount}",
                                      premises=[premise], agent="ap", amount=amount, seq=seq,
                                      **base)

    def failed(eid: str, seq: int) -> tuple[str, ev.Event]:
        return eid, ev.ActionFailed(event_id=eid, action="payment:INV-1002", seq=seq,
                                    reason="ValueError: bad date", **base)

    assert apply_writes(graph, [("o", seen), propose("p1", 3450, 1), propose("p2", 34500, 2)]) == []
    assert apply_writes(graph, [failed("f1", 1)]) == []
    [action] = graph.actions()
    assert action["amount"] == 34500 and not action.get("failed")
    apply_writes(graph, [failed("f2", 2)])
    [action] = graph.actions()
    assert action["failed"] is True and action["failed_reason"] == "ValueError: bad date"
