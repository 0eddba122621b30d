"""Hand-made checks of the naive reference in tests/support/reference.py (no server needed)."""

from __future__ import annotations

import json

from tests.support.reference import run


def scenario(*ops: dict) -> str:
    return "\n".join(json.dumps(op) for op in ops) + "\n"


def src(id_, domain=None, kind="portal"):
    op = {"op": "source", "id": id_, "kind": kind}
    if domain is not None:
        op["domain"] = domain
    return op


def obs(id_, source, text, at="2024-05-01T10:00:00Z"):
    return {"op": "observe", "id": id_, "source": source, "text": text, "at": at}


def write(id_, text, premises, kind="belief", at="2024-05-01T11:00:00Z"):
    return {"op": "write", "id": id_, "kind": kind, "agent": "ap", "text": text,
            "premises": premises, "at": at}


def act(id_, premises, amount=None, executed=False, at="2024-05-01T12:00:00Z", **more):
    op = {"op": "act", "id": id_, "agent": "ap", "text": f"pay {id_}", "premises": premises,
          "at": at, "executed": executed, "payee": "ACME", **more}
    if amount is not None:
        op["amount"] = amount
    return op


def retract(id_, source, from_=None, to=None):
    op = {"op": "retract", "id": id_, "source": source, "reason": "phished", "by": "sec"}
    if from_ is not None:
        op["from"] = from_
    if to is not None:
        op["to"] = to
    return op


def test_cycle_without_support_is_out():
    """Two beliefs that only support each other go OUT when their outside support goes."""
    text = scenario(
        src("s1"), obs("o1", "s1", "bank account is DE12"),
        write("b1", "Pay to DE12", ["o1"]),
        write("b2", "vendor verified", ["b1"]),
        write("b3", "  pay TO   de12 ", ["b2"]),  # restates b1: closes the cycle b1 <-> b2
        act("a1", ["b3"]),
        retract("r1", "s1"),
    )
    report = run(text)
    assert {m: v["status"] for m, v in report["memories"].items()} == {
        "o1": "OUT", "b1": "OUT", "b2": "OUT", "b3": "OUT", "a1": "OUT"}
    assert report["held"] == ["a1"]
    assert report["fragility"] == {"a1": 0}


def test_corroborated_belief_survives():
    """A fact observed from two sources stays IN when one of them is retracted."""
    text = scenario(
        src("s1"), src("s2"),
        obs("o1", "s1", "Invoice 42 is due"), obs("o2", "s2", "invoice  42 IS due"),
        write("b1", "pay invoice 42", ["o1"]),
        act("a1", ["b1"], amount=6000, executed=True),
        retract("r1", "s1"),
    )
    report = run(text)
    assert report["memories"]["o1"]["status"] == "IN"
    assert report["memories"]["o2"]["status"] == "IN"
    assert report["memories"]["a1"]["status"] == "IN"
    assert report["recalls"] == []
    assert report["fragility"] == {"a1": 1}


def test_reinstating_one_of_two_overlapping_retractions_keeps_the_other():
    """Undoing one retraction leaves an observation OUT while another still covers it."""
    text = scenario(
        src("s1"), obs("o1", "s1", "new bank account", at="2024-05-01T10:00:00Z"),
        act("a1", ["o1"], amount=500, executed=True),
        retract("r1", "s1", from_="2024-05-01T09:00:00Z", to="2024-05-01T10:00:00Z"),
        retract("r2", "s1", from_="2024-05-01T10:00:00Z"),
        {"op": "reinstate", "retraction": "r1"},
    )
    report = run(text)
    assert report["memories"]["o1"]["status"] == "OUT"
    assert report["recalls"] == [
        {"action": "a1", "amount": 500, "payee": "ACME", "state": "drafted"}]
    text2 = text + json.dumps({"op": "reinstate", "retraction": "r2"}) + "\n"
    assert run(text2)["memories"]["o1"]["status"] == "IN"


def test_fragility_two_independent_domains_versus_one_shared():
    """Two sources in two domains give fragility 2; the same two in one domain give 1."""
    def case(d1, d2):
        return scenario(
            src("s1", d1), src("s2", d2),
            obs("o1", "s1", "contract says 12000"), obs("o2", "s2", "Contract says 12000"),
            act("a1", ["o1"], amount=12000),
            {"op": "gate", "action": "a1"},
        )
    independent = run(case(None, None))
    assert independent["fragility"] == {"a1": 2}
    assert independent["gates"] == [
        {"action": "a1", "allowed": True, "fragility": 2, "aggregate": 0, "line": 6}]
    shared = run(case("acme", "acme"))
    assert shared["fragility"] == {"a1": 1}
    assert shared["gates"] == [
        {"action": "a1", "allowed": False, "fragility": 1, "aggregate": 0, "line": 6}]


def _gates(*ops, rates=None):
    return [(g["allowed"], g["fragility"], g["aggregate"])
            for g in run(scenario(*ops), rates)["gates"]]


def test_only_sources_stating_the_account_count_and_never_a_user():
    """Two domains, but one of them does not state the account (or is a user): one left."""
    def case(second_text, second_kind="contract"):
        return _gates(src("s1"), src("s2", kind=second_kind),
                      obs("o1", "s1", "pay to DE12 5001 0517"), obs("o2", "s2", second_text),
                      write("b", "pay acme", ["o1"]), write("b2", "pay acme", ["o2"]),
                      act("a1", ["b"], amount=12000, account="de1250010517"),
                      {"op": "gate", "action": "a1"})
    assert case("the contract names DE12 5001 0517") == [(True, 2, 0)]
    assert case("the contract names no account") == [(False, 1, 0)]
    assert case("my account is DE12 5001 0517", "user") == [(False, 1, 0)]


def test_split_payments_add_up_and_a_currency_without_rate_is_refused():
    base = [src("s1"), obs("o1", "s1", "pay ACME")]
    gates = _gates(*base, *(act(f"a{i}", ["o1"], amount=4000) for i in range(3)),
                   *({"op": "gate", "action": f"a{i}"} for i in range(3)))
    assert gates == [(True, 1, 0), (True, 1, 4000), (False, 1, 8000)]
    assert _gates(*base, act("y", ["o1"], amount=2_000_000, currency="JPY"),
                  {"op": "gate", "action": "y"}) == [(False, 1, 0)]
    assert _gates(*base, act("y", ["o1"], amount=9000, currency="EUR"),
                  {"op": "gate", "action": "y"}, rates={"EUR": 1.2}) == [(False, 1, 0)]


def test_a_release_must_name_the_proposals_values():
    base = [src("s1"), obs("o1", "s1", "pay ACME at X12345"),
            act("a", ["o1"], amount=500, account="X12345")]
    assert _gates(*base, {"op": "gate", "action": "a", "args": {"amount": 5000}}) == [
        (False, 0, 0)]
    assert _gates(*base, {"op": "gate", "action": "a", "args": {"amount": 500, "account": "x 123 45",
                                                               "currency": "USD"}}) == [
        (True, 1, 0)]


def test_correction_rests_on_reviewer_and_reinstate_undoes_it():
    """A correction withdraws the old memory; its new memory rests only on the reviewer."""
    text = scenario(
        src("s1"), obs("o1", "s1", "account DE12"),
        write("b1", "pay to DE12", ["o1"]),
        {"op": "correct", "id": "c1", "memory": "b1", "text": "pay to DE99", "by": "alice"},
        act("a1", ["c1"], amount=20000),
        {"op": "gate", "action": "a1"},
        retract("r1", "s1"),
    )
    report = run(text)
    assert report["memories"]["b1"]["status"] == "OUT"
    assert report["memories"]["c1"]["status"] == "IN"
    assert report["fragility"] == {"a1": 1}
    assert report["gates"][0]["allowed"] is False
    undone = run(text + json.dumps({"op": "reinstate", "retraction": "c1"}) + "\n")
    assert undone["memories"]["c1"]["status"] == "OUT"
    assert undone["memories"]["b1"]["status"] == "OUT"  # o1 is retracted
    assert undone["held"] == ["a1"]


def test_a_gate_asked_again_counts_its_action_once_and_no_amount_is_refused():
    """Issue 28, findings 8 and 5: the same action gated twice is not added to its own
    aggregate; an action with no amount is refused."""
    base = [src("s1"), obs("o1", "s1", "pay ACME at DE12 5001 0517")]
    again = _gates(*base, act("a", ["o1"], amount=9000, account="DE12 5001 0517"),
                   {"op": "gate", "action": "a"}, {"op": "gate", "action": "a"})
    assert again == [(True, 1, 0), (True, 1, 0)]
    assert _gates(*base, act("n", ["o1"], account="DE12 5001 0517"),
                  {"op": "gate", "action": "n"}) == [(False, 1, 0)]


def test_a_premise_not_stating_the_account_neither_holds_nor_brings_down():
    """Finding 7: the user's message and the contract, the contract stating the account, is
    fragility 1 (not 0); through a note the portal also backs, 2."""
    base = [src("u", kind="user"), src("c", "signed-contracts", kind="contract"), src("p"),
            obs("said", "u", "Pay Umbrella's INV-5."),
            obs("oc", "c", "Remit to DE12 5001 0517"), obs("op", "p", "IBAN DE12 5001 0517")]
    assert _gates(*base, act("a", ["said", "oc"], amount=15000, account="DE1250010517"),
                  {"op": "gate", "action": "a"}) == [(False, 1, 0)]
    assert _gates(*base, write("n", "Umbrella banks at DE12 5001 0517", ["oc"]),
                  write("n2", "Umbrella banks at DE12 5001 0517", ["op"]),
                  act("a", ["said", "n"], amount=15000, account="DE1250010517"),
                  {"op": "gate", "action": "a"}) == [(True, 2, 0)]
