"""What every blind set of `rescind bench fidelity` is checked for, whatever its programs: it is
registered apart with consistent labels, each program labels exactly what it writes, and its
group plays wrapped on the real server and is reported apart. Each set's test file calls these
(and keeps its own checks of what its programs assume)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore
from typer.testing import CliRunner

from rescind.bench import fidelity as fid
from rescind.bench.fidelity_programs import Policy, Program, Runner


def spy_puts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The text (or langmem's content) of every value put in any InMemoryStore, sync or
    async, in order."""
    put: list[str] = []
    batch, abatch = InMemoryStore.batch, InMemoryStore.abatch

    def texts(ops):
        return [op.value.get("text") or op.value.get("content") for op in ops
                if isinstance(op, PutOp) and op.value]

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


def check_registered(group: str, programs: dict[str, Program]) -> None:
    """Six programs of ``group`` alone, among the bench's programs, each with labels whose
    IN/OUT is what its premises imply."""
    assert len(programs) == 6 and {p.group for p in programs.values()} == {group}
    assert set(programs) <= set(fid.PROGRAMS) and group in fid.GROUPS
    assert not set(programs) & {n for n, p in fid.PROGRAMS.items() if p.group != group}
    for program in programs.values():
        fid.check_labels(program)


def check_plain_play(program: Program, monkeypatch: pytest.MonkeyPatch) -> None:
    """Played unwrapped, every value the program puts in its store is a memory of its truth,
    and every memory of its truth is put."""
    put = spy_puts(monkeypatch)
    runner = Runner(lambda g: g)
    program.play(runner)
    assert runner.invokes >= 1
    assert set(put) == set(program.truth)


def check_wrapped_group(group: str, programs: dict[str, Program], tmp_path: Path) -> dict:
    """`rescind bench fidelity --group G` plays the programs wrapped on a server of its own
    without a play error: every memory is scored against its truth, every source the truth
    names is retracted alone, the store's serving is checked, and the figures are the group's
    alone, in a section of their own. Returns the group's summary."""
    from rescind.cli.main import app

    res = CliRunner().invoke(app, ["bench", "fidelity", "--group", group, "--rounds", "0",
                                   "--profile-rounds", "0", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    writes = sum(len(p.truth) for p in programs.values())
    assert f"{group}: {writes} writes" in res.output and "tuned:" not in res.output
    doc = json.loads((tmp_path / "fidelity.json").read_text())
    by = {p["name"]: p for p in doc["programs"]}
    assert set(by) == set(programs) and {p["group"] for p in by.values()} == {group}
    summary = doc[fid.SUMMARIES[group]]
    assert summary["writes"] == writes
    assert all(doc[key]["writes"] == 0 for g, key in fid.SUMMARIES.items() if g != group)
    for program in programs.values():
        got = by[program.name]
        assert [e for e in got["errors"] if e.startswith("play")] == []
        assert {w["text"] for w in got["writes"]} == set(program.truth)
        named = {p for js in program.truth.values() for j in js for p in j
                 if p not in program.truth}
        assert named <= {x["source"] for x in got["retractions"]}
        assert all(x["checked"] == len(program.truth) for x in got["retractions"])
        assert sum(x["checked"] for x in got["serving"]) > 0
    assert summary["premises_expected"] == sum(len(set().union(*js))
                                               for p in programs.values()
                                               for js in p.truth.values())
    md = (tmp_path / "fidelity.md").read_text()
    heading = f"## The {fid._SECTIONS[group][0]} programs"
    others = [f"## The {fid._SECTIONS[g][0]} programs" for g in fid.GROUPS if g != group]
    assert heading in md and not any(f"{o}\n" in md for o in others)
    table = md.split(heading)[1].split("## Time")[0]
    assert all(f"| {n} |" in table for n in programs)
    assert (f"**{summary['precision']}** ({summary['premises_right']}/"
            f"{summary['premises_recorded']})") in table
    return summary


def shown(monkeypatch: pytest.MonkeyPatch) -> list[list]:
    """Every list of messages any scripted or policy chat model of the programs is shown."""
    seen: list[list] = []
    generate, decide = GenericFakeChatModel._generate, Policy._generate

    def spy(self, messages, *a, **kw):
        seen.append(list(messages))
        return generate(self, messages, *a, **kw)

    def spy_policy(self, messages, *a, **kw):
        seen.append(list(messages))
        return decide(self, messages, *a, **kw)

    monkeypatch.setattr(GenericFakeChatModel, "_generate", spy)
    monkeypatch.setattr(Policy, "_generate", spy_policy)
    return seen
