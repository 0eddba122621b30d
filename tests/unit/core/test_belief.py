"""The pure belief rule and fragility, on plain data (no server)."""

from rescind.core.belief import Grounding, Node, Rules, Status, Window, settle
from rescind.core.fragility import UNTRUSTED, cone_domains, fragility


def obs(mid: str, source: str, at: int = 10) -> Node:
    return Node(mid, "observation", groundings=[Grounding(source, at)])


def test_unsupported_cycle_is_out():
    """Two memories that only support each other are OUT, with no cause to name."""
    region = {"a": Node("a", justifications=[("b",)]), "b": Node("b", justifications=[("a",)])}
    result = settle(region, {}, Rules())
    assert result == {"a": Status("OUT"), "b": Status("OUT")}


def test_cycle_with_outside_support_is_in():
    """A cycle with one outside reason is IN as a whole."""
    region = {"o": obs("o", "s"), "a": Node("a", justifications=[("b",), ("o",)]),
              "b": Node("b", justifications=[("a",)])}
    assert all(s.is_in for s in settle(region, {}, Rules()).values())


def test_window_bounds_are_inclusive_and_open():
    """A retraction covers reads at both of its ends, and a missing end is open."""
    rules = Rules(windows=[Window("r", "s", start=10, end=20)])
    region = {f"o{t}": obs(f"o{t}", "s", t) for t in (9, 10, 20, 21)}
    got = {m: s.status for m, s in settle(region, {}, rules).items()}
    assert got == {"o9": "IN", "o10": "OUT", "o20": "OUT", "o21": "IN"}
    rules = Rules(windows=[Window("r", "s", start=None, end=15)])
    got = {m: s.status for m, s in settle(region, {}, rules).items()}
    assert got == {"o9": "OUT", "o10": "OUT", "o20": "IN", "o21": "IN"}


def test_hops_count_from_the_retracted_observation():
    """Hop distance is the shortest distance from the memory that was retracted."""
    region = {"o": obs("o", "s"), "b": Node("b", justifications=[("o",)]),
              "p": Node("p", justifications=[("b",)]), "a": Node("a", justifications=[("p", "o")])}
    result = settle(region, {}, Rules(windows=[Window("r", "s")]))
    assert {m: s.hops for m, s in result.items()} == {"o": 0, "b": 1, "p": 2, "a": 1}
    assert {s.cause for s in result.values()} == {"r"}


def test_boundary_premise_carries_its_distance_in():
    """An OUT premise outside the region passes on its cause and distance plus one."""
    region = {"x": Node("x", justifications=[("y",)])}
    result = settle(region, {"y": Status("OUT", "r1", 3)}, Rules())
    assert result["x"] == Status("OUT", "r1", 4)


def test_withdrawal_beats_every_reason():
    """A withdrawn memory is OUT whatever supports it, until the withdrawal is undone."""
    region = {"o": obs("o", "s"), "m": Node("m", justifications=[("o",)], withdrawn_by=["w"])}
    assert settle(region, {}, Rules(withdrawal_order={"w": 1}))["m"] == Status("OUT", "w", 0)
    assert settle(region, {}, Rules())["m"].is_in


def test_fragility_counts_trust_domains_not_sources():
    """Two sources in one domain are one point of failure; two domains make two."""
    region = {"o1": obs("o1", "s1"), "o2": obs("o2", "s2"),
              "b": Node("b", justifications=[("o1",), ("o2",)])}
    assert fragility("b", region, {"s1": "d1", "s2": "d2"}, Rules()) == 2
    assert fragility("b", region, {"s1": "d1", "s2": "d1"}, Rules()) == 1
    assert fragility("b", region, {"s1": "d1", "s2": "d2"},
                     Rules(windows=[Window("r", "s1"), Window("r2", "s2")])) == 0


def test_a_user_s_or_an_agent_s_word_adds_no_trust_domain():
    """The portal states it and the user repeats it: still one domain an attacker must take;
    resting on the user's word alone, nothing needs to fall to fake it."""
    region = {"o1": obs("o1", "portal"), "o2": obs("o2", "user:u1"),
              "b": Node("b", justifications=[("o1",), ("o2",)]),
              "c": Node("c", justifications=[("o2",)])}
    domains = {"portal": "portal", "user:u1": UNTRUSTED}
    assert fragility("b", region, domains, Rules()) == 1
    assert fragility("c", region, domains, Rules()) == 0
    assert cone_domains(region, domains, Rules()) == ["portal"]


def test_fragility_of_a_conjunction_is_its_weakest_premise():
    """A memory needing two premises falls when either of their domains falls."""
    region = {"o1": obs("o1", "s1"), "o2": obs("o2", "s2"), "o3": obs("o3", "s3"),
              "b": Node("b", justifications=[("o1", "o2"), ("o1", "o3")])}
    assert fragility("b", region, {"s1": "d1", "s2": "d2", "s3": "d3"}, Rules()) == 1
