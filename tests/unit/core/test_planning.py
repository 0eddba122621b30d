"""Planning a write batch on plain facts, without a server: what it creates, grounds and
justifies, and the status each memory has afterwards."""

import pytest

from rescind.core.belief import Node, Rules, Status, Window
from rescind.core.planning import (
    UnknownPremise,
    Write,
    check_premises,
    fresh,
    moved,
    outside,
    plan_batch,
    revived,
)
from rescind.core.shapes import Change

IN, OUT = Status("IN"), Status("OUT", "r1", 0)


def plan(writes, known=None, rules=None, region=None, rev=7, seen=()):
    known = dict(known or {})
    check_premises(writes, known)
    return plan_batch(writes, fresh(writes, set(seen)), rev, known, rules or Rules(),
                      dict(region or {}))


def test_a_grounded_observation_and_a_belief_on_it_are_born_in_with_their_reasons():
    """New memories carry their status, a grounding row for the source, a justification row
    naming the premise; the plan says which revision the batch leaves."""
    p = plan([Write("e1", "o", "observation", "seen", 10, source="portal"),
              Write("e2", "b", "belief", "thought", 11, premises=("o",), agent="ap")])
    assert p.statuses == [IN, IN] and p.rev == 7
    born = {m["id"]: m for m in p.batch.new}
    assert born["o"]["status"] == "IN" and born["o"]["grounded"] is True
    assert born["b"]["born_rev"] == 8 and "grounded" not in born["b"]
    assert p.batch.groundings == [{"id": "e1", "source": "portal", "mem": "o", "at": 10}]
    assert [(j["mem"], j["premises"]) for j in p.batch.justifications] == [("b", ["o"])]
    assert p.batch.changes == [] and p.batch.at == 11
    assert p.ahead.rev == 8 and p.ahead.seen == {"e1", "e2"}


def test_a_belief_on_an_out_premise_is_born_out_with_the_premise_s_cause():
    """The belief rule runs on the batch: resting only on what is OUT means OUT, one hop on."""
    p = plan([Write("e2", "b", "belief", "thought", 11, premises=("o",))], known={"o": OUT})
    [b] = p.batch.new
    assert (b["status"], b["cause"], b["hops"]) == ("OUT", "r1", 1)
    assert p.statuses == [Status("OUT", "r1", 1)]


def test_an_observation_read_inside_a_retracted_window_is_born_out():
    """A source retracted over a window: a reading inside it is not a valid grounding."""
    rules = Rules(windows=[Window("r9", "portal", 5, 20, order=1)])
    p = plan([Write("e1", "o", "observation", "seen", 10, source="portal")], rules=rules)
    assert p.statuses[0].status == "OUT" and p.statuses[0].cause == "r9"


def test_an_event_delivered_twice_or_already_applied_is_applied_once():
    """Idempotent by event id: a repeat in the same batch, or one seen before, adds nothing."""
    w = Write("e1", "o", "observation", "seen", 10, source="portal")
    assert [x.event_id for x in fresh([w, w], set())] == ["e1"]
    assert fresh([w], {"e1"}) == []


def test_a_premise_that_is_neither_known_nor_in_the_batch_is_refused_by_name():
    """The writer holds such a write until its premise arrives: the error names what is missing."""
    writes = [Write("e2", "b", "belief", "x", 1, premises=("o", "q")),
              Write("e3", "c", "belief", "y", 2, premises=("b",))]
    with pytest.raises(UnknownPremise) as err:
        check_premises(writes, {"o": IN})
    assert err.value.missing == ["q"]


def test_a_new_reason_revives_an_out_memory_and_what_rests_on_it():
    """An OUT belief given a justification whose premise is IN comes back IN, and so does the
    plan resting on it: both are status changes of existing memories."""
    known = {"b": OUT, "p": Status("OUT", "r1", 1), "o2": IN}
    writes = [Write("e5", "b", "belief", "thought", 20, premises=("o2",))]
    assert revived(writes, known) == {"b"}
    region = {"b": Node("b", justifications=[("o1",)]),
              "p": Node("p", "plan", justifications=[("b",)])}
    assert outside(region, known) == {"o1"}  # read by the engine before planning
    known["o1"] = Status("OUT", "r1", 0)
    p = plan(writes, known=known, region=region)
    moved = {i: g["status"] for g in p.batch.changes for i in g["ids"]}
    assert moved == {"b": "IN", "p": "IN"} and p.batch.new == []
    assert p.statuses == [IN]


def test_a_second_grounding_of_an_existing_memory_marks_it_grounded():
    """The same observation read again from a source: no new memory, a grounding row, a flag."""
    p = plan([Write("e9", "o", "observation", "seen", 30, source="contract")],
             known={"o": IN}, region={})
    assert p.batch.new == [] and p.batch.updates == [{"id": "o", "props": {"grounded": True}}]
    assert p.batch.groundings[0]["source"] == "contract" and p.statuses == [IN]


# -- store memories: versions of one key, deletion, adoption ---------------------------------
def changed(p) -> dict:
    """memory -> (status, cause, hops) of every status change the batch writes."""
    return {m: (g["status"], g["cause"], g["hops"]) for g in p.batch.changes for m in g["ids"]}


def test_a_new_version_of_a_store_key_is_current_and_the_old_one_stays_in_as_its_premise():
    """v1 (IN, with a note resting on it) is replaced by v2, which rests on v1: v1 is marked
    not current (``superseded``) and changes no status; v2 and the note are IN."""
    v2 = Write("e3", "v2", "belief", "blue", 12, premises=("v1",), key="p/u1/colour",
               supersedes="v1")
    assert revived([v2], {"v1": IN}) == set()  # nothing to walk: no status changes
    p = plan([v2], known={"o": IN, "v1": IN, "n": IN}, region={})
    assert p.statuses == [IN] and changed(p) == {}
    assert p.batch.updates == [{"id": "v1", "props": {"replaced": "superseded"}}]
    assert p.batch.new[0]["key"] == "p/u1/colour" and "replaced" not in p.batch.new[0]


def test_a_version_replaced_in_the_batch_that_creates_it_is_created_not_current():
    """v1 and v2 of one key in one batch: v1 is born IN with the mark inline, v2 rests on it."""
    p = plan([Write("e1", "v1", "belief", "red", 10, premises=("o",), key="k"),
              Write("e2", "v2", "belief", "red, blue", 11, premises=("v1",), key="k",
                    supersedes="v1")], known={"o": IN})
    born = {m["id"]: m for m in p.batch.new}
    assert born["v1"]["replaced"] == "superseded" and born["v1"]["status"] == "IN"
    assert "replaced" not in born["v2"] and p.statuses == [IN, IN]


def test_writing_an_old_value_again_makes_that_version_current_again():
    """A key goes red -> blue -> red: red's mark is cleared (current again), blue is marked;
    neither status changes."""
    p = plan([Write("e4", "red", "belief", "red", 13, premises=("o",), key="k",
                    supersedes="blue")],
             known={"o": IN, "red": IN, "blue": IN}, region={})
    assert p.statuses == [IN] and changed(p) == {}
    assert sorted(p.batch.updates, key=lambda u: u["id"]) == [
        {"id": "blue", "props": {"replaced": "superseded"}},
        {"id": "red", "props": {"replaced": None}}]


def test_a_deleted_store_item_is_not_current_and_keeps_its_status():
    """A delete marks the version ``deleted`` and moves nothing; an unknown one is ignored."""
    p = plan([Write("e5", "v", "belief", "", 14, key="k", deletes=True),
              Write("e6", "never", "belief", "", 14, key="k2", deletes=True)],
             known={"o": IN, "v": IN}, region={})
    assert changed(p) == {} and p.batch.new == [] and p.batch.justifications == []
    assert p.batch.updates == [{"id": "v", "props": {"replaced": "deleted"}}]
    assert p.statuses == [IN, Status("OUT")]


def test_an_update_resting_on_an_out_version_is_born_out_by_the_evidence():
    """Only evidence makes things OUT: v1 OUT by retraction r1, v2 resting on v1 alone is born
    OUT with r1's cause one hop on (not with any mark of the store)."""
    p = plan([Write("e7", "v2", "belief", "blue", 12, premises=("v1",), key="k",
                    supersedes="v1")], known={"v1": OUT})
    assert p.statuses == [Status("OUT", "r1", 1)]


def test_an_adopted_store_item_is_grounded_only_when_the_graph_does_not_know_it():
    """Adoption gives a pre-existing item a reason of its own (store:preexisting); a memory
    already known (written through the wrapper) gains nothing from being read."""
    adopt = Write("e7", "m", "belief", "likes tea", 15, source="store:preexisting", key="k",
                  adopt=True)
    p = plan([adopt])
    assert p.statuses == [IN] and p.batch.groundings[0]["source"] == "store:preexisting"
    again = plan([adopt], known={"m": Status("OUT", "r1", 1)},
                 region={"m": Node("m", justifications=[("o",)])})
    assert again.batch.groundings == [] and again.batch.new == []


def test_what_a_batch_tells_the_agents_caches_is_what_it_moved_and_what_was_born_out():
    """Existing memories whose status changed, and new memories born OUT; not those born IN."""
    born = plan([Write("e1", "o", "observation", "seen", 10, source="portal"),
                 Write("e2", "b", "belief", "thought", 11, premises=("x",))], known={"x": OUT})
    assert moved(born.batch) == {"b": Change("OUT", "r1", 1)}
    known = {"b": OUT, "o2": IN, "o1": OUT}
    region = {"b": Node("b", justifications=[("o1",)])}
    back = plan([Write("e5", "b", "belief", "thought", 20, premises=("o2",))], known=known,
                region=region)
    assert moved(back.batch) == {"b": Change("IN", None, None)}


def test_an_action_proposed_again_is_what_was_proposed_last():
    """A retry with another amount replaces the first try's values (and clears a failure
    mark), in a later batch as in the same one."""
    first = Write("e1", "act", "action", "pay(3450)", 10, premises=("o",), name="payment:1",
                  extra={"amount": 3450.0, "account": "ZZ97", "seq": 1})
    retry = Write("e2", "act", "action", "pay(34500)", 11, premises=("o",), name="payment:1",
                  extra={"amount": 34500.0, "account": "ZZ97", "seq": 2})
    same = plan([first, retry], known={"o": IN})
    assert [(m["id"], m["amount"], m["text"]) for m in same.batch.new] == [
        ("act", 34500.0, "pay(34500)")]
    later = plan([retry], known={"o": IN, "act": IN})
    assert later.batch.updates == [{"id": "act", "props": {
        "amount": 34500.0, "currency": None, "payee": None, "account": "ZZ97", "seq": 2,
        "text": "pay(34500)", "failed": False}}]
