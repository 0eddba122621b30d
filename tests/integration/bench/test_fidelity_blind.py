"""The blind programs of `rescind bench fidelity`: their two hand labellings agree, each labels
exactly what it writes, and `--group blind` plays them wrapped against the real server and
reports them apart (what they score is the report's business, not pinned here)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore
from typer.testing import CliRunner

from rescind.bench import fidelity as fid
from rescind.bench.fidelity_blind import BLIND, BLIND_PROGRAMS
from rescind.bench.fidelity_programs import Runner


def test_every_blind_program_s_out_when_is_what_its_truth_implies():
    """Each blind program's IN/OUT after every single-source retraction is what its premises
    imply; a label changed on one side only is refused."""
    assert len(BLIND_PROGRAMS) == 6 and {p.group for p in BLIND_PROGRAMS.values()} == {BLIND}
    assert set(BLIND_PROGRAMS) <= set(fid.PROGRAMS)
    for program in BLIND_PROGRAMS.values():
        fid.check_labels(program)
    org = BLIND_PROGRAMS["org_chat"]
    delivery = next(t for t in org.truth if t.startswith("Courier"))
    broken = dataclasses.replace(org, out_when={**org.out_when, "user:ines": org.out_when[
        "user:ines"] - {delivery}})
    with pytest.raises(ValueError, match=r"out_when\['user:ines'\]"):
        fid.check_labels(broken)


@pytest.mark.parametrize("name", list(BLIND_PROGRAMS))
def test_a_blind_program_played_plain_writes_exactly_what_its_truth_labels(name, monkeypatch):
    """Played unwrapped, every value the program puts in its store is a memory of its truth,
    and every memory of its truth is put: no write goes unscored, no label is for nothing."""
    put: list[str] = []
    batch = InMemoryStore.batch

    def spy(self, ops):
        put.extend(op.value.get("text") or op.value.get("content") for op in ops
                   if isinstance(op, PutOp) and op.value is not None)
        return batch(self, ops)

    monkeypatch.setattr(InMemoryStore, "batch", spy)
    program = BLIND_PROGRAMS[name]
    runner = Runner(lambda g: g)
    program.play(runner)
    assert runner.invokes >= 1
    assert set(put) == set(program.truth)


def test_the_blind_group_runs_wrapped_and_is_scored_apart(tmp_path):
    """`rescind bench fidelity --group blind` plays the six blind programs wrapped on a
    server of its own: every memory is scored against its truth, every source the truth
    names is retracted alone, the store's serving is checked, and the figures are the blind
    group's alone, in a section of their own; an unknown group is refused."""
    from rescind.cli.main import app

    cli = CliRunner()
    bad = cli.invoke(app, ["bench", "fidelity", "--group", "nope", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "unknown group" in bad.output, bad.output
    res = cli.invoke(app, ["bench", "fidelity", "--group", "blind", "--rounds", "0",
                           "--profile-rounds", "0", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "blind: 18 writes" in res.output and "tuned:" not in res.output
    doc = json.loads((tmp_path / "fidelity.json").read_text())
    by = {p["name"]: p for p in doc["programs"]}
    assert set(by) == set(BLIND_PROGRAMS)
    assert {p["group"] for p in by.values()} == {BLIND}
    assert doc["summary"]["writes"] == doc["held_out_summary"]["writes"] == 0
    s = doc["blind_summary"]
    assert s["writes"] == sum(len(p.truth) for p in BLIND_PROGRAMS.values()) == 18
    for program in BLIND_PROGRAMS.values():
        got = by[program.name]
        assert [e for e in got["errors"] if e.startswith("play")] == []
        assert {w["text"] for w in got["writes"]} == set(program.truth)
        named = {p for js in program.truth.values() for j in js for p in j
                 if p not in program.truth}
        assert named <= {x["source"] for x in got["retractions"]}
        assert all(x["checked"] == len(program.truth) for x in got["retractions"])
        assert sum(x["checked"] for x in got["serving"]) > 0
    assert s["premises_expected"] == sum(len(set().union(*js)) for p in BLIND_PROGRAMS.values()
                                         for js in p.truth.values())
    md = (tmp_path / "fidelity.md").read_text()
    assert "## The blind programs" in md and "## The tuned programs" not in md
    blind_table = md.split("## The blind programs")[1].split("## Time")[0]
    assert all(f"| {n} |" in blind_table for n in BLIND_PROGRAMS)
    assert f"**{s['precision']}** ({s['premises_right']}/{s['premises_recorded']})" in blind_table
