"""The rules benchmark's separate checker (rescind.bench.truth), on a graph made by hand."""

from __future__ import annotations

from rescind.bench import truth


def test_the_checker_on_a_hand_made_graph():
    """Contaminated means every reason rests on a retracted reading; a second source keeps a
    memory IN; a cycle with no grounding is never IN; the simpler rules' sets are as defined."""
    f = truth.Facts()
    f.add("a", "observation", source="S", at=5)
    f.add("a2", "observation", source="S", at=50)  # read after the window: still trusted
    f.add("b", "observation", source="T", at=5)
    f.add("x", "belief", premises=("a",))
    f.add("y", "belief", premises=("a",))
    f.add("y", "belief", premises=("b",))
    f.add("p", "plan", premises=("x", "y"))
    f.add("q", "plan", premises=("y", "a2"))
    f.add("pay", "action", premises=("p",), executed=True, amount=6000)
    f.add("hold", "action", premises=("q",), executed=False, amount=900)
    f.add("c1", "belief", premises=("c2",))
    f.add("c2", "belief", premises=("c1",))
    w = [("S", 0, 10)]
    judged = truth.judge(f, w)
    assert judged.contaminated == {"a", "x", "p", "pay"}
    assert {"y", "q", "hold", "a2", "b"} <= judged.after and not {"c1", "c2"} & judged.before
    assert truth.seeds(f, w) == {"a"}
    assert truth.one_hop(f, w) == {"a", "x", "y"}
    assert truth.downstream(f, w) == {"a", "x", "y", "p", "q", "pay", "hold"}
    m = truth.score(f, judged, truth.downstream(f, w))
    assert (m["contamination_left"], m["collateral"], m["recalled"], m["held_wrongly"]) == \
        (0, 3, 1, 1)
    m = truth.score(f, judged, truth.one_hop(f, w))
    assert (m["contamination_left"], m["recalls_missed"], m["missed_amount"]) == (2, 1, 6000.0)
