"""Named stories from the product's design, replayed on the real FalkorDB."""

import json

from rescind.scenario.replay import replay_text

T = "2026-11-0{}T09:00:00Z"


def src(i, domain=None):
    line = {"op": "source", "id": i, "kind": "portal"}
    if domain:
        line["domain"] = domain
    return line


def obs(i, source, text, day=2):
    return {"op": "observe", "id": i, "source": source, "text": text, "at": T.format(day)}


def write(i, premises, text=None, kind="belief", day=3):
    return {"op": "write", "id": i, "kind": kind, "agent": "ap", "text": text or f"note {i}",
            "premises": premises, "at": T.format(day)}


def run(falkordb, tenant, *lines):
    return replay_text("\n".join(json.dumps(x) for x in lines), falkordb, tenant)


def status(report, i):
    m = report["memories"][i]
    return m["status"], m["cause"], m["hops"]


def test_a_second_independent_source_keeps_a_belief_in(falkordb, tenant_name):
    """A belief a second independent source still asserts survives retraction of the first."""
    r = run(falkordb, tenant_name, src("portal"), src("contract"),
            obs("o1", "portal", "remit to 1 Dock Road"), obs("o2", "contract", "signed remit"),
            write("b", ["o1"], "remit address is 1 Dock Road"),
            write("b-again", ["o2"], "Remit address is  1 dock road"),
            write("only-portal", ["o1"]),
            {"op": "retract", "id": "r", "source": "portal", "reason": "hacked", "by": "sec"})
    assert status(r, "b") == ("IN", None, None)
    assert status(r, "b-again") == ("IN", None, None)
    assert status(r, "only-portal") == ("OUT", "r", 1)


def test_withdrawing_a_belief_collapses_everything_downstream(falkordb, tenant_name):
    """Withdrawing the belief itself takes it and its dependents OUT, with honest hops."""
    r = run(falkordb, tenant_name, src("portal"), obs("o", "portal", "bank account X"),
            write("b", ["o"]), write("p", ["b"], kind="plan"), write("b2", ["b"]),
            {"op": "act", "id": "pay", "agent": "pay", "text": "pay", "premises": ["p", "b2"],
             "at": T.format(4), "amount": 100, "payee": "Acme", "executed": False},
            {"op": "withdraw", "id": "w", "memory": "b", "reason": "wrong", "by": "reviewer"})
    assert status(r, "o") == ("IN", None, None)
    assert status(r, "b") == ("OUT", "w", 0)
    assert status(r, "p") == ("OUT", "w", 1)
    assert status(r, "b2") == ("OUT", "w", 1)
    assert status(r, "pay") == ("OUT", "w", 2)
    assert r["held"] == ["pay"]


def test_memories_that_only_support_each_other_go_out_together(falkordb, tenant_name):
    """A cycle whose only outside reason is retracted goes OUT as a whole."""
    r = run(falkordb, tenant_name, src("portal"), obs("o", "portal", "x"),
            write("a", ["o"], "fact a"), write("b", ["a"], "fact b"),
            write("a-again", ["b"], "fact A"),  # restating a from b closes the cycle
            {"op": "retract", "id": "r", "source": "portal", "reason": "hacked", "by": "sec"})
    assert status(r, "a")[0] == "OUT" and status(r, "b")[0] == "OUT"
    assert status(r, "a") == status(r, "a-again")


def test_reinstating_one_of_two_overlapping_retractions(falkordb, tenant_name):
    """Undoing one retraction leaves what the other still covers OUT."""
    r = run(falkordb, tenant_name, src("portal"),
            obs("o-early", "portal", "early", day=1), obs("o-mid", "portal", "mid", day=3),
            obs("o-late", "portal", "late", day=5),
            write("b-early", ["o-early"]), write("b-mid", ["o-mid"]), write("b-late", ["o-late"]),
            {"op": "retract", "id": "r1", "source": "portal", "from": T.format(1),
             "to": T.format(3), "reason": "first", "by": "sec"},
            {"op": "retract", "id": "r2", "source": "portal", "from": T.format(3),
             "to": T.format(5), "reason": "second", "by": "sec"},
            {"op": "reinstate", "retraction": "r1"})
    assert status(r, "o-early") == ("IN", None, None)
    assert status(r, "o-mid") == ("OUT", "r2", 0)  # r2 still covers it, and is now its cause
    assert status(r, "b-mid") == ("OUT", "r2", 1)
    assert status(r, "o-late") == ("OUT", "r2", 0)


def test_a_memory_that_gained_a_reason_while_retracted_comes_back(falkordb, tenant_name):
    """A new independent reason written while OUT brings the memory and its dependents back."""
    r = run(falkordb, tenant_name, src("portal"), src("contract"),
            obs("o1", "portal", "remit X"), write("b", ["o1"], "remit is X"),
            write("p", ["b"], kind="plan"),
            {"op": "retract", "id": "r", "source": "portal", "reason": "hacked", "by": "sec"},
            obs("o2", "contract", "contract says remit X", day=6),
            write("b-again", ["o2"], "REMIT is X", day=6))
    assert status(r, "b") == ("IN", None, None)
    assert status(r, "p") == ("IN", None, None)
    assert status(r, "o1") == ("OUT", "r", 0)


def test_a_correction_cites_the_reviewer_not_the_original(falkordb, tenant_name):
    """The corrected memory rests on the reviewer; retracting the old evidence leaves it IN."""
    r = run(falkordb, tenant_name, src("portal"), obs("o", "portal", "account 123"),
            write("b", ["o"], "Acme account is 123"), write("p", ["b"], kind="plan"),
            {"op": "correct", "id": "c", "memory": "b", "text": "Acme account is 456",
             "by": "reviewer:alice"},
            write("p2", ["c"], "plan on 456", kind="plan", day=6),
            {"op": "retract", "id": "r", "source": "portal", "reason": "hacked", "by": "sec"})
    assert status(r, "b") == ("OUT", "c", 0)
    assert status(r, "p") == ("OUT", "c", 1)
    assert status(r, "c") == ("IN", None, None)
    assert status(r, "p2") == ("IN", None, None)
    undo = run(falkordb, tenant_name + "u", src("portal"), obs("o", "portal", "account 123"),
               write("b", ["o"], "Acme account is 123"),
               {"op": "correct", "id": "c", "memory": "b", "text": "Acme account is 456",
                "by": "reviewer:alice"},
               {"op": "reinstate", "retraction": "c"})
    assert status(undo, "b") == ("IN", None, None)
    assert status(undo, "c") == ("OUT", "c", 0)


def test_correction_graph_shape(falkordb, tenant_name):
    """The new memory is SAID by the reviewer source and SUPERSEDES the old one."""
    from rescind.graph.store import TenantGraph, connect

    run(falkordb, tenant_name, src("portal"), obs("o", "portal", "account 123"),
        write("b", ["o"], "Acme account is 123"),
        {"op": "correct", "id": "c", "memory": "b", "text": "Acme account is 456",
         "by": "reviewer:alice"})
    g = TenantGraph(connect(falkordb), tenant_name)
    rows = g.rows("MATCH (s:Source)-[:SAID]->(n:Mem)-[:SUPERSEDES]->(o:Mem) "
                  "RETURN s.id, s.kind, s.domain, n.text, o.text")
    assert rows == [["reviewer:alice", "reviewer", "reviewer:alice", "Acme account is 456",
                     "Acme account is 123"]]
    premises = g.rows("MATCH (p:Mem)-[:PREMISE_OF]->(:Justification)-[:JUSTIFIES]->"
                      "(n:Mem {text: 'Acme account is 456'}) RETURN p.id")
    assert premises == []


def test_the_gate_needs_two_independent_domains_above_the_threshold(falkordb, tenant_name):
    """A large payment resting on one trust domain is refused; on two, allowed. Each payee is
    paid once here; with one payee, what was allowed to it counts toward the next payment."""
    pay = {"op": "act", "agent": "pay", "text": "pay", "at": T.format(4), "executed": False}
    lines = [src("portal", "d1"), src("portal2", "d1"), src("contract", "d2"),
             obs("o1", "portal", "acct"), obs("o2", "portal2", "acct again"),
             obs("o3", "contract", "acct signed"),
             write("b", ["o1"], "acct is X"), write("b2", ["o2"], "acct is x"),
             write("b3", ["o3"], "ACCT is X")]
    payments = [
        {**pay, "id": "big-one-domain", "premises": ["o1", "o2"], "amount": 34500},
        {**pay, "id": "big-two-domains", "premises": ["b"], "amount": 34500},
        {**pay, "id": "small", "premises": ["o1"], "amount": 9000},
        {**pay, "id": "edge", "premises": ["o1"], "amount": 10000}]
    gates = [{"op": "gate", "action": p["id"]} for p in payments]
    r = run(falkordb, tenant_name, *lines, *({**p, "payee": p["id"]} for p in payments), *gates)
    got = {g["action"]: (g["allowed"], g["fragility"]) for g in r["gates"]}
    assert got == {"big-one-domain": (False, 1), "big-two-domains": (True, 2),
                   "small": (True, 1), "edge": (True, 1)}
    one_payee = run(falkordb, f"{tenant_name}-one", *lines,
                    *({**p, "payee": "Acme"} for p in payments), *gates)["gates"]
    assert [(g["action"], g["allowed"], g["aggregate"]) for g in one_payee] == [
        ("big-one-domain", False, 0), ("big-two-domains", True, 0),
        ("small", False, 34500), ("edge", False, 34500)]
