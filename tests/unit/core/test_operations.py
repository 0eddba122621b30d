"""Previewing a retraction on plain facts, without a server: the region the engine read is
settled under the new rules, and the blast radius and status changes come out of it."""

from rescind.core.belief import Grounding, Node, Rules, Status, Window
from rescind.core.operations import Reinstate, Retract, drop, same, settle_preview
from rescind.core.shapes import BlastItem, Mutation, Region

IN = Status("IN")


def read_region() -> Region:
    """What the engine would read downstream of the portal's observation: a belief, a plan,
    an executed and a pending payment, and a note that the contract also supports."""
    reg = Region()
    facts = {  # memory: (node id, kind, hops, justifications)
        "o": (1, "observation", 0, []), "b": (2, "belief", 1, [("o",)]),
        "p": (3, "plan", 2, [("b",)]), "paid": (4, "action", 3, [("p",)]),
        "pending": (5, "action", 2, [("b",)]), "note": (6, "belief", 1, [("o",), ("c",)]),
    }
    for mid, (node, kind, hops, justs) in facts.items():
        reg.mid[node] = mid
        reg.nodes[mid] = Node(mid, kind, justifications=list(justs))
        reg.status[mid], reg.kinds[mid], reg.hops[mid] = IN, kind, hops
    reg.nodes["o"].groundings.append(Grounding("portal", 10))
    reg.executed.add("paid")
    reg.status["c"] = IN  # the contract's observation, outside the region: the note's other reason
    return reg


def test_a_retraction_takes_out_what_rests_on_the_source_alone_and_keeps_the_rest():
    """Everything downstream goes OUT nearest first, the executed payment to recall and the
    pending one to hold; the note with an independent reason stays IN and is not listed."""
    rules = Rules(windows=[Window("r1", "portal", None, None, order=8)])
    mutation = Mutation(op="retract")
    p = settle_preview(Retract("r1", "portal"), 7, read_region(), {}, mutation, rules, at=99)
    radius = p.blast_radius()
    assert radius.direction == "OUT"
    assert radius.observations == [BlastItem("o", 0)] and radius.beliefs == [BlastItem("b", 1)]
    assert radius.plans == [BlastItem("p", 2)]
    assert radius.executed_actions == [BlastItem("paid", 3)]
    assert radius.pending_actions == [BlastItem("pending", 2)]
    assert p.after["note"].is_in and "note" not in p.changed
    # One group of node ids per status set, each with its history line at rev + 1.
    by_node = {n: (g["status"], g["cause"], g["hops"]) for g in mutation.changes for n in g["ids"]}
    assert by_node == {1: ("OUT", "r1", 0), 2: ("OUT", "r1", 1), 3: ("OUT", "r1", 2),
                       4: ("OUT", "r1", 3), 5: ("OUT", "r1", 2)}
    assert all(g["entry"].startswith("[8,") for g in mutation.changes)
    result = p.result()
    assert (result.op, result.id, result.rev) == ("retract", "r1", 7)
    assert set(result.changed) == {"o", "b", "p", "paid", "pending"}


def test_a_reinstatement_brings_back_in_what_the_retraction_took():
    """With the window dropped from the rules, the same region settles IN: the blast radius
    points the other way."""
    reg = read_region()
    for mid in ("o", "b", "p", "paid", "pending"):
        reg.status[mid] = Status("OUT", "r1", reg.hops[mid])
    rules = Rules(windows=[Window("r1", "portal", None, None, order=8)])
    drop(rules, "r1")
    assert rules.windows == []
    p = settle_preview(Reinstate("r1"), 9, reg, {}, Mutation(op="reinstate"), rules, at=120)
    radius = p.blast_radius()
    assert radius.direction == "IN" and radius.counts["executed_actions"] == 1
    assert all(st.is_in for st in p.after.values())


def test_a_repeat_is_told_from_another_operation_under_the_same_id():
    """The stored record of an operation matches it again only with the same kind and target."""
    stored = {"kind": "retract", "source": "portal", "start": None, "end": 5}
    assert same(stored, Retract("r1", "portal", None, 5))
    assert not same(stored, Retract("r1", "portal", None, 6))
    assert not same(stored, Retract("r1", "crm", None, 5))
