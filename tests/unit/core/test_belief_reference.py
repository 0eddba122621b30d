"""The pure core against the naive reference, on generated scenarios: after every line of a
random scenario, ``rescind.core.belief.settle`` over the reference's memories gives the same
IN/OUT as the reference's own fixpoint, and ``rescind.core.fragility.fragility`` the same
fragility for every action. No server: the unit half runs a sample of each property,
tests/integration/scenario/test_core_volume.py the volume (1,000 graphs, 300 sequences), and
tests/integration/scenario/test_properties.py a sample of it through the engine on FalkorDB.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from rescind.contract.events import to_micros
from rescind.core.belief import Grounding, Node, Rules, Window, settle
from rescind.core.fragility import fragility, trust_domains
from tests.support.reference import Reference, parse, when
from tests.support.strategies import RATES, operation_sequences, scenario_graphs

SAMPLE = settings(max_examples=10, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow])


def _name(key: tuple) -> str:
    return "|".join(key)


def core_input(ref: Reference) -> tuple[dict[str, Node], Rules]:
    """The reference's memories and active retractions as the core reads them."""
    active = {rid: r for rid, r in ref.ret.items() if r["active"]}
    order = {rid: n for n, rid in enumerate(ref.ret)}
    rules = Rules(
        windows=[Window(rid, r["source"],
                        None if r.get("from") is None else to_micros(when(r["from"])),
                        None if r.get("to") is None else to_micros(when(r["to"])), order[rid])
                 for rid, r in active.items() if r["op"] == "retract"],
        corrections={rid: order[rid] for rid, r in active.items() if r["op"] == "correct"},
        withdrawal_order={rid: order[rid] for rid, r in active.items()
                          if r["op"] in ("withdraw", "correct")})
    withdrawn: dict[tuple, list[str]] = {}
    for rid in rules.withdrawal_order:
        withdrawn.setdefault(ref.key[ref.ret[rid]["memory"]], []).append(rid)
    region = {
        _name(k): Node(_name(k), k[0],
                       justifications=[tuple(_name(p) for p in j) for j in ref.justs[k]],
                       groundings=[Grounding(s, to_micros(at), via) for s, at, via in gs],
                       withdrawn_by=withdrawn.get(k, []))
        for k, gs in ref.grounds.items()}
    # Every premise is a memory of the reference too (a scenario names only earlier ids).
    assert {p for n in region.values() for j in n.justifications for p in j} <= set(region)
    return region, rules


def upstream(region: dict[str, Node], target: str) -> dict[str, Node]:
    """``target`` and everything it rests on: the cone fragility reads."""
    seen, todo = {target}, [target]
    while todo:
        for j in region[todo.pop()].justifications:
            for p in j:
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
    return {m: region[m] for m in seen}


def check_core_against_reference(text: str) -> None:
    """After every line, the core's statuses equal the reference's; at the end, so does every
    action's fragility."""
    ref = Reference(RATES)
    for number, op in parse(text):
        ref.apply(op, number)
        region, rules = core_input(ref)
        core = {m for m, st in settle(region, {}, rules).items() if st.is_in}
        assert core == {_name(k) for k in ref.status()}, f"after line {number}: {op}"
    region, rules = core_input(ref)
    domain_of = trust_domains({s: (ref.domain[s], ref.kind.get(s, "reviewer"))
                               for s in ref.domain})
    for action in ref.actions:
        target = _name(ref.key[action])
        assert fragility(target, upstream(region, target), domain_of, rules) \
            == ref.fragility(action), action


@SAMPLE
@given(text=scenario_graphs())
def test_the_core_agrees_with_the_reference_on_random_graphs(text):
    """A random graph, one retraction and gates: the core's IN set and fragility are the
    reference's after every line."""
    check_core_against_reference(text)


@SAMPLE
@given(text=operation_sequences())
def test_the_core_agrees_with_the_reference_on_operation_sequences(text):
    """Retract/withdraw/correct/reinstate/update/delete in any order: the core's IN set and
    fragility are the reference's after every line."""
    check_core_against_reference(text)
