"""`rescind bench rules`: small versions of the four scenarios, every rule's outcome checked
against the separate checker (services/bench/truth.py, which does not use the engine)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from rescind.bench import truth
from rescind.bench.rules_common import RULES, THRESHOLD
from rescind.bench.rules_runner import Runner
from rescind.bench.scenario_demo import demo_case
from rescind.bench.scenario_precision import precision_case
from rescind.bench.scenario_real import real_cases, retraction_data
from rescind.bench.scenario_scale import scale_case
from rescind.bench.scenarios import Checkpoint
from rescind.bench.similarity import Embedder, RandomVectors
from rescind.graph.store import TenantGraph, connect

DATA = retraction_data()


def play(falkordb: str, tenant: str, case, vectors) -> Runner:
    runner = Runner(TenantGraph(connect(falkordb), tenant), case, vectors)
    runner.run()
    return runner


def agree_with_checker(runner: Runner, score_rule2: bool = True) -> dict[str, set[str]]:
    """Every rule's OUT set in the graph equals the checker's definition of that rule, and the
    reported final metrics are the checker's score of that definition (not of what the runner
    read from the graph, which would only repeat the runner's own arithmetic)."""
    facts, windows = runner.facts, runner.windows
    outs = runner.states()
    judged = truth.judge(facts, windows)
    defined = {"r1": truth.seeds(facts, windows), "r3": truth.one_hop(facts, windows),
               "r4": truth.downstream(facts, windows),
               "r5": set(facts.kinds) - judged.after}  # the engine is the well-founded rule
    if score_rule2:
        vectors = {m: runner.store.vector(m).tolist() for m in facts.kinds}
        defined["r2"] = truth.similar(facts, windows, vectors, THRESHOLD)
    for r, out in defined.items():
        assert outs[r] == out, r
    final = runner.result.steps[-1]["rules"]
    for r, out in defined.items():
        expected = truth.score(facts, judged, out)
        assert {k: final[r][k] for k in expected} == expected, r
    return outs


def test_demo_week_every_rule_against_the_checker(falkordb, tenant_name):
    """On the demo week before Thursday's retraction: Rescind takes out as many (7) as the
    demo's own commit did; rule 1 leaves 6 of them IN; taking everything downstream also takes the remit
    address the signed contract still states; every rule agrees with the checker."""
    case = demo_case(falkordb, f"{tenant_name}-week")
    runner = play(falkordb, tenant_name, case, Embedder())
    try:
        outs = agree_with_checker(runner)
        final = runner.result.steps[-1]["rules"]
        assert sum(case.notes["the demo's own commit took OUT"].values()) == len(outs["r5"]) == 7
        assert final["r1"]["contamination_left"] == 6
        assert final["r1"]["recalls_missed"] == final["r1"]["holds_missed"] == 1
        assert final["r4"]["collateral_by_kind"] == {"belief": 1}
        [kept] = outs["r4"] - outs["r5"]
        text = runner.graph.rows("MATCH (m:Mem {id: $id}) RETURN m.text", {"id": kept})[0][0]
        assert text.startswith("Northwind Supplies remit address")
        assert all(len(runner.result.times[r]) == 1 for r in RULES)
    finally:
        runner.graph.delete()


def test_precision_small_every_rule_against_the_checker(falkordb, tenant_name):
    """A small precision case: the confirmed notes are the collateral of rules 3 and 4; what
    rule 3 leaves IN is two hops or more away (plans, payments, answers); checker agrees."""
    case = precision_case(vendors=6, compromised=2, reads=6, invoices=2, answers=1)
    assert sum(isinstance(e, Checkpoint) for e in case.events) == 2
    runner = play(falkordb, tenant_name, case, Embedder())
    try:
        agree_with_checker(runner)
        final = runner.result.steps[-1]["rules"]
        confirmed = case.notes["of which also confirmed by the contract"]
        assert final["r3"]["collateral_by_kind"].get("belief", 0) == confirmed > 0
        assert final["r4"]["collateral"] >= confirmed
        left = final["r3"]["contamination_left_by_kind"]
        assert left and set(left) <= {"plan", "action", "answer"}  # two hops and more
        assert len(runner.result.steps) == 2 and runner.result.sweep
    finally:
        runner.graph.delete()


def _timeline_truth(case) -> tuple[dict[str, bool], list[int]]:
    """From the timeline alone (every retraction is open-ended): memory -> truly born OUT, for
    memories written after one of their papers was retracted; and, after each retraction date,
    how many citing papers have some but not all of their cited papers retracted."""
    retracted: set[str] = set()
    cited: dict[str, set[str]] = {}
    born: dict[str, bool] = {}
    partial: list[int] = []
    every = case.params["reading"] == "needs-every"
    for e in case.events:
        if isinstance(e, Checkpoint):
            retracted |= {op.source.removeprefix("paper:") for op in e.retractions}
            partial.append(sum(1 for c in cited.values() if c & retracted and c - retracted))
            if not e.retractions:
                break  # the closing checkpoint: nothing is written after it
            continue
        new = {w.mem_id for w in e.writes} - cited.keys()
        for w in e.writes:
            if w.source is not None:
                cited[w.mem_id] = set()  # an observation: born OUT if its paper is retracted
                if w.source.removeprefix("paper:") in retracted:
                    born[w.mem_id] = True
            else:
                cited.setdefault(w.mem_id, set()).update(p.removeprefix("obs:")
                                                         for p in w.premises)
        for m in new:
            gone = cited[m] & retracted
            if gone and m not in born:
                born[m] = every or gone == cited[m]
    return born, partial


def test_real_data_small_both_readings_against_the_checker(falkordb, tenant_name):
    """The 50 least cited retracted papers of the citation graph and their citing papers, replayed
    on their dates in both readings: every rule agrees with the checker; memories written after
    a cited paper was retracted are born OUT under Rescind exactly when the reading says so;
    under "any cited paper suffices" tainting downstream takes out papers that still stand on
    a cited paper not yet retracted, under "needs every cited paper" it takes out none."""
    assert (DATA / "covid_citation_graph_nodes.csv").is_file(), (
        f"no retraction data in {DATA}: set RESCIND_RETRACTIONS_DATA to the folder that holds it")
    cases, mapping = real_cases(DATA, limit=50)
    assert mapping["retracted papers"] == 50
    embed = Embedder()
    for i, case in enumerate(cases):
        runner = play(falkordb, f"{tenant_name}-{i}", case, embed)
        try:
            agree_with_checker(runner)
            expected, partial = _timeline_truth(case)
            born = runner.result.born
            assert born["written_after_a_source_was_retracted"] == len(expected) > 0
            assert born["truly_born_out"] == sum(expected.values())
            assert born["rules"]["r5"]["born_out_wrongly"] == 0
            assert born["rules"]["r5"]["born_in_wrongly"] == 0
            observations = sum(1 for m in expected if m.startswith("obs:"))
            assert born["rules"]["r1"]["born_out"] == observations
            steps = runner.result.steps
            dates = sum(1 for e in case.events if isinstance(e, Checkpoint)) - 1
            assert len(steps) == dates + 1 and steps[-1]["label"].startswith("end")
            assert [s["at"] for s in steps] == sorted(s["at"] for s in steps)
            for s, n in zip(steps, partial, strict=True):
                assert s["rules"]["r5"]["collateral"] == s["rules"]["r5"]["contamination_left"] == 0
                assert s["rules"]["r4"]["collateral"] == (0 if case.params["reading"] ==
                                                          "needs-every" else n)
            if case.params["reading"] == "any-suffices":
                assert max(partial) > 0
        finally:
            runner.graph.delete()


def test_scale_small_times_every_rule_and_agrees_with_the_checker(falkordb, tenant_name):
    """The engine benchmark's generator at 2,000 memories, three whole sources retracted: every
    rule is timed at every retraction, and rules 1, 3, 4 and 5 agree with the checker (rule 2
    runs on stand-in vectors at scale and is timed, not scored)."""
    case = scale_case(2000, 3)
    runner = play(falkordb, tenant_name, case, RandomVectors())
    try:
        agree_with_checker(runner, score_rule2=False)
        assert all(len(runner.result.times[r]) == 3 for r in RULES)
        assert len(runner.result.steps) == 1  # scored once, after the last retraction
        final = runner.result.steps[-1]["rules"]
        assert final["r4"]["collateral"] > 0 and final["r3"]["contamination_left"] > 0
    finally:
        runner.graph.delete()


def test_the_command_writes_json_markdown_and_plots_with_its_command(falkordb, tmp_path):
    """`rescind bench rules --scenario scale` writes rules.json, rules.md and PNGs that carry
    the command, without the real data; an unknown scenario exits 2 with one line."""
    from rescind.cli.main import app

    cli = CliRunner()
    bad = cli.invoke(app, ["bench", "rules", "--scenario", "nope", "--url", falkordb])
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1, bad.output
    res = cli.invoke(app, ["bench", "rules", "--scenario", "scale", "--sizes", "1000",
                           "--samples", "2", "--url", falkordb, "--out", str(tmp_path),
                           "--data", str(tmp_path / "no-real-data")])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "rules.json").read_text())
    entry = data["scenarios"]["scale"]
    assert entry["command"].startswith("rescind bench rules")
    assert set(entry["sizes"]["1000"]["times"]) == set(RULES)
    md = (tmp_path / "rules.md").read_text()
    assert "| scale 1,000 | 5. Rescind (well-founded) |" in md
    assert (tmp_path / "rules_time.png").stat().st_size > 1000
