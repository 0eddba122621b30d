"""The second blind programs of `rescind bench fidelity`: their two hand labellings agree, each
labels exactly what it writes (and does what its labels assume: a retried tool, a key
overwritten, a worker shown only a summary), and `--group blind2` plays them wrapped against
the real server and reports them apart (what they score is the report's business, not pinned
here)."""

from __future__ import annotations

import dataclasses

import pytest

from rescind.bench import fidelity as fid
from rescind.bench.fidelity_blind2 import BLIND2, BLIND2_PROGRAMS, CONTACT_1, CONTACT_2
from rescind.bench.fidelity_programs import Runner
from tests.support import blind_sets


def test_every_blind2_program_s_out_when_is_what_its_truth_implies():
    """Each blind2 program's IN/OUT after every single-source retraction is what its premises
    imply; a label changed on one side only is refused."""
    blind_sets.check_registered(BLIND2, BLIND2_PROGRAMS)
    crm = BLIND2_PROGRAMS["crm"]
    broken = dataclasses.replace(crm, out_when={**crm.out_when, "cardscan:0193": {CONTACT_1}})
    with pytest.raises(ValueError, match=r"out_when\['cardscan:0193'\]"):
        fid.check_labels(broken)



@pytest.mark.parametrize("name", list(BLIND2_PROGRAMS))
def test_a_blind2_program_played_plain_writes_exactly_what_its_truth_labels(name, monkeypatch):
    """Played unwrapped, every value the program puts in its store is a memory of its truth,
    and every memory of its truth is put: no write goes unscored, no label is for nothing."""
    blind_sets.check_plain_play(BLIND2_PROGRAMS[name], monkeypatch)


def test_the_blind2_programs_do_what_their_labels_assume(monkeypatch):
    """The CRM's update overwrites the contact's key (one current version, the second); the
    reminders run three invocations on one thread; the receipt tool fails once and is retried;
    the supervisor's filing worker is shown the researcher's summary, not its tool results."""
    blind_sets.spy_puts(monkeypatch)
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
    blind_sets.check_wrapped_group(BLIND2, BLIND2_PROGRAMS, tmp_path)
