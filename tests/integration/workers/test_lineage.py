"""Issue 29, finding 8: lineage for identifiers. A note that states an IBAN none of its premises
states (the model had it from a channel Rescind does not see) rests on the tenant's
observations that state it (rule ``lineage``); with none, it is flagged as an ungrounded
identifier and a payment on it has no evidence. Sent as an agent sends its events (the API's
ingest), applied by the real writer and retraction workers, the gate asked through its worker."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from rescind.api import ops
from rescind.api.models import EventBatch
from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import GateRefused
from rescind.graph import queries as q
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.gate import GateClient
from rescind.operator.decisions import explain
from rescind.scenario.via_streams import wait_idle
from rescind.transport import connection

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
ATTACKER = "DE89 3704 0044 0532 0130 00"  # the portal's (compromised) account
HONEST = "GB33 BUKB 2020 1555 5555 55"


def send(url: str, t: str, *events: ev.Event) -> None:
    """Ingest ``events`` as the API does and wait until the writer and retraction worker have
    applied them."""
    conn = connection.connect(url)
    batch = EventBatch.model_validate({"events": [e.model_dump(mode="json", by_alias=True)
                                                  for e in events]})
    assert ops.ingest(conn, t, batch)["accepted"] == len(events)
    wait_idle(conn, layout.tenant_stream(t))


def compromise(url: str, t: str, source: str) -> None:
    """Security declares ``source`` compromised (on the tenant's stream, as the API's
    retraction does); wait until the workers have applied it."""
    conn = connection.connect(url)
    e = ev.SourceCompromised(**base(t), retraction=f"r-{source}", source=source, by="security")
    conn.xadd(layout.tenant_stream(t), layout.encode(e.model_dump_json(by_alias=True)))
    wait_idle(conn, layout.tenant_stream(t))


def base(t: str) -> dict:
    return {"tenant": t, "at": AT, "event_id": uuid.uuid4().hex}


def observe(t: str, source: str, text: str) -> tuple[ev.ObservationRecorded, str]:
    return (ev.ObservationRecorded(**base(t), source=source, text=text),
            ev.memory_id(t, "observation", text))


def note(t: str, text: str, premises: list[str], kind: str = "belief",
         rule: str = "turn-context") -> tuple[ev.MemoryWritten, str]:
    return (ev.MemoryWritten(**base(t), kind=kind, text=text, premises=premises, agent="ap",
                             rule=rule), ev.memory_id(t, kind, text))


def rules_of(graph: TenantGraph, mid: str) -> list[tuple[str, set[str]]]:
    """Each justification of ``mid``: its rule and premises."""
    return sorted(((r, set(p)) for _, r, p in graph.rows(q.JUSTIFICATION_RULES, {"ids": [mid]})),
                  key=lambda x: (x[0], sorted(x[1])))


def status(graph: TenantGraph, *ids: str) -> list[str]:
    st = graph.statuses(ids)
    return [st[i].status for i in ids]


def sources(url: str, t: str) -> None:
    send(url, t,
         ev.SourceDeclared(**base(t), source="portal:acme", source_kind="vendor_portal"),
         ev.SourceDeclared(**base(t), source="contract:acme", source_kind="signed_contract",
                           source_domain="signed-contracts"),
         ev.SourceDeclared(**base(t), source="user:clerk", source_kind="user"))


def test_a_laundered_note_rests_on_the_portal_and_falls_with_it(rescind_workers, tenant_name):
    """The portal states the attacker's IBAN; later a note restating it is written resting only
    on the user's message: the note gets a lineage justification (the message and the
    portal's observation), explain shows it; compromising the portal takes the note, the plan
    on it and the payment on the plan OUT."""
    url, t = rescind_workers, tenant_name
    sources(url, t)
    portal_e, portal = observe(t, "portal:acme", f"Acme Ltd supplier portal\nBank account: "
                                                 f"{ATTACKER}")
    said_e, said = observe(t, "user:clerk", "Pay Acme's INV-7, 34,500.00, today.")
    send(url, t, portal_e, said_e)  # read before: found through the identifier index
    note_e, laundered = note(t, f"Acme Ltd banks at {ATTACKER.replace(' ', '')}", [said])
    plan_e, plan = note(t, f"Pay INV-7 34,500.00 to Acme Ltd at {ATTACKER}", [laundered],
                        kind="plan", rule="matched")
    pay = ev.ActionProposed(**base(t), action="pay-7", text="pay INV-7", premises=[plan],
                            agent="payments", rule="matched", amount=34500, payee="Acme Ltd",
                            account=ATTACKER)
    send(url, t, note_e, plan_e, pay)
    graph = TenantGraph(connect(url), t)
    assert rules_of(graph, laundered) == [("lineage", {said, portal})]
    assert rules_of(graph, plan) == [("matched", {laundered})]  # its premise states it
    tree = explain(graph, laundered)
    assert tree["justification_rules"] == ["lineage"]
    assert {p["id"] for p in tree["justifications"][0]} == {said, portal}
    action = ev.action_id(t, "pay-7")
    assert status(graph, laundered, plan, action) == ["IN", "IN", "IN"]
    compromise(url, t, "portal:acme")
    assert status(graph, portal, said, laundered, plan, action) == ["OUT", "IN", "OUT", "OUT",
                                                                    "OUT"]


def test_a_second_source_stating_the_identifier_keeps_the_note_in(rescind_workers,
                                                                  tenant_name):
    """The portal and the signed contract both state the IBAN (the contract in the same batch
    as the note): the note rests on either, so compromising the portal leaves it IN."""
    url, t = rescind_workers, tenant_name
    sources(url, t)
    portal_e, portal = observe(t, "portal:acme", f"Bank account: {HONEST}")
    said_e, said = observe(t, "user:clerk", "Note Acme's bank details.")
    send(url, t, portal_e, said_e)
    contract_e, contract = observe(t, "contract:acme", f"MSA Acme Ltd, remit to IBAN {HONEST}")
    note_e, mid = note(t, f"Acme Ltd: IBAN {HONEST}", [said], rule="agent")
    send(url, t, contract_e, note_e)
    graph = TenantGraph(connect(url), t)
    got = rules_of(graph, mid)
    assert len(got) == 2 and {(r, frozenset(p)) for r, p in got} == {
        ("lineage", frozenset({said, contract})), ("lineage", frozenset({said, portal}))}
    compromise(url, t, "portal:acme")
    assert status(graph, portal, contract, mid) == ["OUT", "IN", "IN"]


def test_a_note_whose_premises_state_the_iban_gets_no_lineage(rescind_workers, tenant_name):
    """A note resting on the portal's observation, which states the IBAN, keeps exactly its
    own justification (no lineage), and is not flagged."""
    url, t = rescind_workers, tenant_name
    sources(url, t)
    portal_e, portal = observe(t, "portal:acme", f"Bank account: {ATTACKER}")
    contract_e, _ = observe(t, "contract:acme", f"Remit to {ATTACKER}")
    send(url, t, portal_e, contract_e)
    note_e, mid = note(t, f"Acme banks at {ATTACKER}", [portal], rule="matched")
    send(url, t, note_e)
    graph = TenantGraph(connect(url), t)
    assert rules_of(graph, mid) == [("matched", {portal})]
    assert not graph.memories([mid])[0].get("ungrounded")


def test_an_ungrounded_iban_is_flagged_and_a_payment_on_it_refused(rescind_workers,
                                                                   tenant_name):
    """An IBAN no observation states: the note is flagged as an ungrounded identifier (explain
    shows it) and keeps its own justification; a $34,500 payment resting on it is refused
    by the gate with fragility 0 (no domain vouches for the account)."""
    url, t = rescind_workers, tenant_name
    sources(url, t)
    said_e, said = observe(t, "user:clerk", "Pay Acme's INV-9, 34,500.00.")
    invoice_e, invoice = observe(t, "contract:acme", "INV-9 Acme Ltd 34,500.00 due 2026-12-01")
    send(url, t, said_e, invoice_e)
    note_e, mid = note(t, f"Acme Ltd banks at {ATTACKER}", [said, invoice])
    send(url, t, note_e)
    graph = TenantGraph(connect(url), t)
    key = ATTACKER.replace(" ", "")
    assert graph.memories([mid])[0]["ungrounded"] == [key]
    assert explain(graph, mid)["ungrounded"] == [key]
    assert rules_of(graph, mid) == [("turn-context", {said, invoice})]
    with pytest.raises(GateRefused):
        GateClient(url, t, 10).ask("pay-9", [mid], 34500.0, "Acme Ltd", account=ATTACKER)
    [decision] = ops.gates(graph, limit=1)
    assert (decision["allowed"], decision["fragility"]) == (False, 0), decision
