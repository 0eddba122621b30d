"""LangGraph's own prebuilt agent, unmodified, wrapped from outside: its justifications land in
FalkorDB through the streams, OUT memories disappear from what it reads, and the gate stops a
payment the model insists on."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.graph.store import TenantGraph, connect
from rescind.middleware import Recorder
from rescind.operator import decisions
from rescind.transport import connection
from tests.support.agent import (
    PAID,
    PORTAL,
    SCHEDULED,
    agent,
    call,
    note_id,
    note_key,
    run,
    settle,
)


def test_an_unmodified_prebuilt_agent_leaves_its_justifications_in_falkordb(rescind_workers,
                                                                             tenant_name):
    """Portal read -> note -> payment: the note rests on the portal observation (found by the
    account it repeats: rule ``matched``); the payment, whose arguments state nothing
    delivered, on the tool result the model was shown (rule ``turn-context``: a tool result
    before the run's own note); the rule used is recorded; the small payment ran."""
    note = "Acme is paid to IBAN GB33 BUKB 2020 1555 5555 55"
    wrapped = agent([
        call("read_vendor_portal", {"vendor": "acme"}, 1),
        call("save_note", {"text": note}, 2),
        call("pay_invoice", {"vendor": "acme", "amount": 600}, 3),
        AIMessage(content="done"),
    ], rescind_workers, tenant_name)
    PAID.clear()
    run(wrapped, "pay acme's invoice")
    settle(rescind_workers, wrapped)
    g = TenantGraph(connect(rescind_workers), tenant_name)
    obs = ev.memory_id(tenant_name, "observation", PORTAL["acme"])
    belief = note_id(tenant_name, note)
    rows = g.rows("MATCH (p:Mem)-[:PREMISE_OF]->(j:Justification)-[:JUSTIFIES]->(m:Mem) "
                  "RETURN m.kind, m.id, p.id, j.rule ORDER BY m.kind")
    assert [r for r in rows if r[0] == "belief"] == [["belief", belief, obs, "matched"]]
    tree = decisions.explain(g, belief)  # explain (and the API, the console) show the rule
    assert tree["justification_rules"] == ["matched"]
    assert [p["id"] for p in tree["justifications"][0]] == [obs]
    assert [r[2:] for r in rows if r[0] == "action"] == [[obs, "turn-context"]]
    assert g.rows("MATCH (s:Source)-[:SAID]->(m:Mem {id: $id}) RETURN s.id, s.kind",
                  {"id": obs}) == [["portal:acme", "vendor_portal"]]
    assert PAID == [{"vendor": "acme", "amount": 600}]
    assert g.rows("MATCH (m:Mem {kind: 'action'}) RETURN m.executed, m.amount") == [[True, 600]]
    wrapped.rescind.close()


def test_the_gate_stops_a_large_payment_on_one_domain_whatever_the_model_says(rescind_workers,
                                                                               tenant_name):
    """34,500 resting on the portal alone: the tool does not run, the agent gets the refusal."""
    wrapped = agent([
        call("read_vendor_portal", {"vendor": "acme"}, 1),
        call("pay_invoice", {"vendor": "acme", "amount": 34500}, 2),
        AIMessage(content="done"),
    ], rescind_workers, tenant_name)
    PAID.clear()
    with pytest.raises(Exception, match="refused"):
        run(wrapped, "pay the big invoice")
    assert PAID == []
    wrapped.rescind.close()


def test_after_a_retraction_the_agent_no_longer_reads_the_contaminated_note(rescind_workers,
                                                                            tenant_name):
    """Once the portal is compromised, the note resting on it is filtered out of store reads;
    an agent process started later hides it too, though the status events were trimmed away
    (it starts from a snapshot of the graph)."""
    note = "Acme is paid to IBAN GB33 BUKB 2020 1555 5555 55"
    wrapped = agent([
        call("read_vendor_portal", {"vendor": "acme"}, 1),
        call("save_note", {"text": note}, 2),
        AIMessage(content="noted"),
        call("recall_notes", {}, 3),
        AIMessage(content="recalled"),
    ], rescind_workers, tenant_name)
    run(wrapped, "note acme's account")
    settle(rescind_workers, wrapped)
    store = wrapped.store
    assert [i.value["text"] for i in store.search(("notes",))] == [note]
    from rescind.middleware.publisher import Publisher

    pub = Publisher(rescind_workers)
    pub.publish(ev.SourceCompromised(event_id="r", tenant=tenant_name, at=ev.from_micros(0),
                                     retraction="r1", source="portal:acme", reason="hacked",
                                     by="security"))
    pub.close()
    settle(rescind_workers, wrapped)
    wrapped.rescind.status.refresh()
    assert store.search(("notes",)) == []
    result = run(wrapped, "what do we know?")
    [recalled] = [m for m in result["messages"] if getattr(m, "name", None) == "recall_notes"]
    assert recalled.content == ""  # the tool, reading through the store, saw no notes
    wrapped.rescind.close()
    connection.connect(rescind_workers).xtrim(layout.status_stream(tenant_name), maxlen=0,
                                                approximate=False)
    later = Recorder(wrapped.rescind.config)
    assert later.status.synced and not later.delivered(
        "t-later", f"notes/{note_key(note)}", {"kind": "belief", "text": note})
    later.close()


def test_a_scheduled_payment_stays_pending_and_its_release_is_judged_by_the_proposal(
        rescind_workers, tenant_name):
    """Scheduling records a pending action without asking the gate; releasing it asks the gate
    about the stored 34,500 (not the amount the model now passes), which refuses it; releasing
    something never proposed is refused too."""
    wrapped = agent([
        call("read_vendor_portal", {"vendor": "acme"}, 1),
        call("schedule_payment", {"invoice": "INV-9", "vendor": "acme", "amount": 34500}, 2),
        AIMessage(content="scheduled"),
    ], rescind_workers, tenant_name)
    PAID.clear()
    run(wrapped, "schedule acme's big invoice")
    settle(rescind_workers, wrapped)
    g = TenantGraph(connect(rescind_workers), tenant_name)
    mid = ev.action_id(tenant_name, "payment:INV-9")
    [facts] = g.actions_in([mid])
    assert (facts["amount"], facts.get("executed") or False, facts["status"]) == (34500, False, "IN")
    assert SCHEDULED["INV-9"]["amount"] == 34500
    release = agent([call("release_payment", {"invoice": "INV-9", "amount": 5}, 1),
                     AIMessage(content="released")], rescind_workers, tenant_name)
    with pytest.raises(Exception, match="refused payment:INV-9: blocked: 34,500.00"):
        run(release, "release INV-9")
    assert PAID == [] and "INV-9" in SCHEDULED
    ghost = agent([call("release_payment", {"invoice": "INV-404"}, 1), AIMessage(content="x")],
                  rescind_workers, tenant_name)
    SCHEDULED["INV-404"] = {"vendor": "nobody", "amount": 1}
    with pytest.raises(Exception, match="no proposal named 'payment:INV-404'"):
        run(ghost, "release INV-404")
    assert PAID == []
    settle(rescind_workers, wrapped)
    [facts] = g.actions_in([mid])
    assert not facts.get("executed")
    for w in (wrapped, release, ghost):
        w.rescind.close()


@pytest.mark.parametrize("amount", ["34,500", "lots", float("nan"), -5, None])
def test_an_amount_that_is_not_a_number_stops_the_action(rescind_workers, tenant_name, amount):
    """A payment whose amount argument is not a finite, non-negative number: refused before the
    gate is asked, the tool does not run, nothing is proposed."""
    args = {"vendor": "acme"} if amount is None else {"vendor": "acme", "amount": amount}
    wrapped = agent([call("read_vendor_portal", {"vendor": "acme"}, 1),
                     call("pay_invoice", args, 2), AIMessage(content="done")],
                    rescind_workers, tenant_name)
    PAID.clear()
    with pytest.raises(Exception, match="is not a number"):
        run(wrapped, "pay acme")
    settle(rescind_workers, wrapped)
    assert PAID == []
    g = TenantGraph(connect(rescind_workers), tenant_name)
    assert g.rows("MATCH (m:Mem {kind: 'action'}) RETURN m.id") == []
    wrapped.rescind.close()
