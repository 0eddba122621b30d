"""The second blind programs of `rescind bench fidelity`: their two hand labellings agree, each
labels exactly what it writes (and does what its labels assume: a retried tool, a key
overwritten, a worker shown only a summary), and `--group blind2` plays them wrapped against
the real server and reports them apart (what they score is the report's business, not pinned
here)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore
from typer.testing import CliRunner

from rescind.bench import fidelity as fid
from rescind.bench.fidelity_blind2 import BLIND2, BLIND2_PROGRAMS, CONTACT_1, CONTACT_2
from rescind.bench.fidelity_programs import Runner


def test_every_blind2_program_s_out_when_is_what_its_truth_implies():
    """Each blind2 program's IN/OUT after every single-source retraction is what its premises
    imply; a label changed on one side only is refused."""
    assert len(BLIND2_PROGRAMS) == 6 and {p.group for p in BLIND2_PROGRAMS.values()} == {BLIND2}
    assert set(BLIND2_PROGRAMS) <= set(fid.PROGRAMS) and BLIND2 in fid.GROUPS
    assert not set(BLIND2_PROGRAMS) & {n for n, p in fid.PROGRAMS.items() if p.group != BLIND2}
    for program in BLIND2_PROGRAMS.values():
        fid.check_labels(program)
    crm = BLIND2_PROGRAMS["crm"]
    broken = dataclasses.replace(crm, out_when={**crm.out_when, "cardscan:0193": {CONTACT_1}})
    with pytest.raises(ValueError, match=r"out_when\['cardscan:0193'\]"):
        fid.check_labels(broken)


def _spy_puts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The text of every value put in any InMemoryStore, sync or async."""
    put: list[str] = []
    batch, abatch = InMemoryStore.batch, InMemoryStore.abatch

    def texts(ops):
        return [op.value.get("text") or op.value.get("content") for op in ops
                if isinstance(op, PutOp) and op.value is not None]

    def spy(self, ops):
        ops = list(ops)
        put.extend(texts(ops))
        return batch(self, ops)

    async def aspy(self, ops):
        ops = list(ops)
        put.extend(texts(ops))
        return await abatch(self, ops)

    monkeypatch.setattr(InMemoryStore, "batch", spy)
    monkeypatch.setattr(InMemoryStore, "abatch", aspy)
    return put


@pytest.mark.parametrize("name", list(BLIND2_PROGRAMS))
def test_a_blind2_program_played_plain_writes_exactly_what_its_truth_labels(name, monkeypatch):
    """Played unwrapped, every value the program puts in its store is a memory of its truth,
    and every memory of its truth is put: no write goes unscored, no label is for nothing."""
    put = _spy_puts(monkeypatch)
    program = BLIND2_PROGRAMS[name]
    runner = Runner(lambda g: g)
    program.play(runner)
    assert runner.invokes >= 1
    assert set(put) == set(program.truth)


def test_the_blind2_programs_do_what_their_labels_assume(monkeypatch):
    """The CRM's update overwrites the contact's key (one current version, the second); the
    reminders run three invocations on one thread; the receipt tool fails once and is retried;
    the supervisor's filing worker is shown the researcher's summary, not its tool results."""
    _spy_puts(monkeypatch)
    runner = Runner(lambda g: g)
    BLIND2_PROGRAMS["crm"].play(runner)
    items = runner.graphs[0].store.search(("memories", "rafa"))
    assert [i.value["content"] for i in items] == [CONTACT_2] and runner.invokes == 2

    runner = Runner(lambda g: g)
    BLIND2_PROGRAMS["reminders"].play(runner)
    assert runner.invokes == 3
    state = runner.graphs[0].get_state({"configurable": {"thread_id": "jonas-admin"}})
    tools = [m.name for m in state.values["messages"] if m.type == "tool"]
    assert tools[:2] == ["passport_status", "vehicle_inspection"]

    outs: list[dict] = []
    invoke = Runner.invoke

    def keep(self, graph, inputs, config=None):
        outs.append(invoke(self, graph, inputs, config))
        return outs[-1]

    monkeypatch.setattr(Runner, "invoke", keep)
    BLIND2_PROGRAMS["expenses"].play(Runner(lambda g: g))
    results = [m for m in outs[-1]["messages"] if m.type == "tool" and m.name == "read_receipt"]
    assert [m.status for m in results].count("error") == 1 and len(results) == 5
    BLIND2_PROGRAMS["supervisor"].play(Runner(lambda g: g))
    names = [getattr(m, "name", None) for m in outs[-1]["messages"]]
    assert "registry_lookup" not in names and "credit_report" not in names
    assert any("Strandkaien" in str(m.content) for m in outs[-1]["messages"]
               if m.type == "ai" and m.name == "company_researcher")


def test_the_blind2_group_runs_wrapped_and_is_scored_apart(tmp_path):
    """`rescind bench fidelity --group blind2` plays the six programs wrapped on a server of
    its own: every memory is scored against its truth, every source the truth names is
    retracted alone, the store's serving is checked, and the figures are the group's alone,
    in a section of their own."""
    from rescind.cli.main import app

    res = CliRunner().invoke(app, ["bench", "fidelity", "--group", "blind2", "--rounds", "0",
                                   "--profile-rounds", "0", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "blind2: 13 writes" in res.output and "tuned:" not in res.output
    doc = json.loads((tmp_path / "fidelity.json").read_text())
    by = {p["name"]: p for p in doc["programs"]}
    assert set(by) == set(BLIND2_PROGRAMS) and {p["group"] for p in by.values()} == {BLIND2}
    assert doc["summary"]["writes"] == doc["blind_summary"]["writes"] == 0
    s = doc["blind2_summary"]
    assert s["writes"] == sum(len(p.truth) for p in BLIND2_PROGRAMS.values()) == 13
    for program in BLIND2_PROGRAMS.values():
        got = by[program.name]
        assert [e for e in got["errors"] if e.startswith("play")] == []
        assert {w["text"] for w in got["writes"]} == set(program.truth)
        named = {p for js in program.truth.values() for j in js for p in j
                 if p not in program.truth}
        assert named <= {x["source"] for x in got["retractions"]}
        assert all(x["checked"] == len(program.truth) for x in got["retractions"])
        assert sum(x["checked"] for x in got["serving"]) > 0
    assert s["premises_expected"] == sum(len(set().union(*js)) for p in BLIND2_PROGRAMS.values()
                                         for js in p.truth.values())
    md = (tmp_path / "fidelity.md").read_text()
    assert "## The second blind programs" in md and "## The blind programs" not in md
    table = md.split("## The second blind programs")[1].split("## Time")[0]
    assert all(f"| {n} |" in table for n in BLIND2_PROGRAMS)
    assert f"**{s['precision']}** ({s['premises_right']}/{s['premises_recorded']})" in table
