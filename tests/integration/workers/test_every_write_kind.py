"""Every write kind the registry names, sent as an agent sends it (the API's EventBatch and
ingest) and applied by the real writer through its handler table (rescind.workers.ingest.WRITE)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rescind.api import ops
from rescind.api.models import EventBatch
from rescind.contract import events as ev
from rescind.contract import layout
from rescind.graph.queries import versions as vq
from rescind.graph.store import TenantGraph, connect
from rescind.scenario.via_streams import wait_idle
from rescind.transport import connection
from rescind.workers.app import WorkerSettings, WorkerThread

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def writer(falkordb):
    """A writer for this module's tests."""
    with WorkerThread(WorkerSettings(url=falkordb, worker_id="kinds"), ("writer",)):
        yield falkordb


def one_of_each(t: str) -> list[ev.Event]:
    """One event of every write kind, in an order the writer applies in one batch."""
    obs = ev.memory_id(t, "observation", "IBAN DE02 1234")
    base = {"tenant": t, "at": AT}
    return [
        ev.ObservationRecorded(**base, event_id="o", source="portal:acme",
                               text="IBAN DE02 1234"),
        # After the observation, yet the declaration names the source (its kind, portal).
        ev.SourceDeclared(**base, event_id="s", source="portal:acme", source_kind="portal",
                          name="Acme's portal"),
        ev.MemoryWritten(**base, event_id="w", kind="belief", text="Acme banks at DE02",
                         premises=[obs], agent="ap", key="vendors/acme"),
        ev.MemoryAdopted(**base, event_id="ad", kind="belief", key="vendors/old",
                         text="Old Co banks at FR76"),
        ev.ActionProposed(**base, event_id="p1", action="pay-1", text="wire 500 to Acme",
                          premises=[obs], agent="payments", amount=500, payee="Acme"),
        ev.ActionProposed(**base, event_id="p2", action="pay-2", text="wire 700 to Acme",
                          premises=[obs], agent="payments", amount=700, payee="Acme"),
        ev.ActionExecuted(**base, event_id="x1", action="pay-1", amount=500, currency="EUR",
                          reference="BANK-1"),
        ev.ActionFailed(**base, event_id="f2", action="pay-2", reason="bank down"),
        ev.MemoryDeleted(**base, event_id="d", key="vendors/acme", agent="ap",
                         memory=ev.store_memory_id(t, "belief", "vendors/acme",
                                                   "Acme banks at DE02")),
    ]


def test_every_write_kind_sent_through_the_api_is_applied_by_the_writer(writer, tenant_name):
    """A batch with one event of each write kind is accepted as the API accepts it and lands:
    the source named, the memories made, the adopted item on store:preexisting, the executed
    payment paid, the failed one failed, and the deleted version no longer current."""
    t = tenant_name
    events = one_of_each(t)
    assert {type(e) for e in events} == set(ev.WRITES)  # a new write kind belongs here too
    conn = connection.connect(writer)
    batch = EventBatch.model_validate({"events": [e.model_dump(mode="json", by_alias=True)
                                                  for e in events]})
    assert ops.ingest(conn, t, batch)["accepted"] == len(events)
    wait_idle(conn, layout.tenant_stream(t), only=(layout.WRITER_GROUP,))
    graph = TenantGraph(connect(writer), t)
    written = ev.store_memory_id(t, "belief", "vendors/acme", "Acme banks at DE02")
    adopted = events[3].memory()
    obs = ev.memory_id(t, "observation", "IBAN DE02 1234")
    assert set(graph.statuses([obs, written, adopted])) == {obs, written, adopted}
    facts = graph.source_facts(["portal:acme", ev.PREEXISTING])
    assert facts == {"portal:acme": ("portal:acme", "portal"),
                     ev.PREEXISTING: (ev.PREEXISTING, "store")}
    grounded = graph.rows("MATCH (s:Source)-[:SAID]->(m:Mem {id: $m}) RETURN s.id",
                          {"m": adopted})
    assert grounded == [[ev.PREEXISTING]]
    pay1, pay2 = (ev.action_id(t, a) for a in ("pay-1", "pay-2"))
    actions = {a["id"]: a for a in graph.actions_in([pay1, pay2])}
    assert actions[pay1].get("executed") is True and actions[pay1].get("paid_reference") == \
        "BANK-1"
    assert actions[pay2].get("failed") is True and not actions[pay2].get("executed")
    not_current = dict(graph.rows(vq.NOT_CURRENT, {"ids": [written, adopted]}))
    assert not_current == {written: "deleted"}
