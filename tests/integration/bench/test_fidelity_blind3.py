"""The third blind programs of `rescind bench fidelity`: their two hand labellings agree, each
labels exactly what it writes (and does what its labels assume: a rejected call never runs, a
graded-out hit never reaches the answer, a retried search, state data the model never sees, a
trip overwritten under its key, users known only from the runtime context), and `--group
blind3` plays them wrapped against the real server and reports them apart (what they score is
the report's business, not pinned here)."""

from __future__ import annotations

import dataclasses

import pytest

from rescind.bench import fidelity as fid
from rescind.bench import fidelity_blind3 as b3
from rescind.bench.fidelity_blind3 import BLIND3, BLIND3_PROGRAMS
from rescind.bench.fidelity_programs import Runner
from tests.support import blind_sets


def test_every_blind3_program_s_out_when_is_what_its_truth_implies():
    """Each blind3 program's IN/OUT after every single-source retraction is what its premises
    imply; a label changed on one side only is refused."""
    blind_sets.check_registered(BLIND3, BLIND3_PROGRAMS)
    payee = BLIND3_PROGRAMS["payee_approval"]
    broken = dataclasses.replace(payee, out_when={**payee.out_when, "erp:v-20418": {b3.PAYEE}})
    with pytest.raises(ValueError, match=r"out_when\['erp:v-20418'\]"):
        fid.check_labels(broken)



@pytest.mark.parametrize("name", list(BLIND3_PROGRAMS))
def test_a_blind3_program_played_plain_writes_exactly_what_its_truth_labels(name, monkeypatch):
    """Played unwrapped, every value the program puts in its store is a memory of its truth,
    and every memory of its truth is put: no write goes unscored, no label is for nothing."""
    blind_sets.check_plain_play(BLIND3_PROGRAMS[name], monkeypatch)



def test_the_blind3_programs_do_what_their_labels_assume(monkeypatch):
    """The rejected payment date never runs and the reviewer's message reaches the model; the
    reducer is shown all three notes; the graded-out wiki hit never reaches the answer and the
    bylaws search is retried; the customer's name is never shown to the model; the trip is one
    current version, the second; each budget is under its own user from the context."""
    put = blind_sets.spy_puts(monkeypatch)
    seen = blind_sets.shown(monkeypatch)
    BLIND3_PROGRAMS["payee_approval"].play(Runner(lambda g: g))
    assert b3.PAY_THIS_WEEK not in put and b3.PAY_PLAN in put
    assert any(b3.REJECTION in str(m.content) for m in seen[2] if m.type == "tool")

    seen.clear()
    BLIND3_PROGRAMS["contract_review"].play(Runner(lambda g: g))
    summary = [s for s in seen if str(s[0].content).startswith("Today is")]
    assert len(summary) == 1 and all(n in str(summary[0][-1].content) for n in b3.NOTES.values())

    seen.clear()
    calls: list[str] = []
    invoke = b3.BYLAWS.__class__.__getitem__
    monkeypatch.setattr(b3, "BYLAWS", type("Spy", (dict,), {
        "__getitem__": lambda self, k: calls.append(k) or invoke(self, k)})(b3.BYLAWS))
    BLIND3_PROGRAMS["crag"].play(Runner(lambda g: g))
    answer = [s for s in seen if str(s[0].content).startswith("You are an assistant")]
    assert len(answer) == 1 and "WP-12" in str(answer[0][-1].content)
    assert b3.WIKI_DOC not in str(answer[0][-1].content) and calls == ["leeds"]

    seen.clear()
    BLIND3_PROGRAMS["account_ticket"].play(Runner(lambda g: g))
    assert seen and not any("Tomasz Nowak" in str(m.content) for s in seen for m in s)
    assert b3.TICKET in put

    runner = Runner(lambda g: g)
    BLIND3_PROGRAMS["itinerary"].play(runner)
    trips = runner.graphs[0].store.search(("trips", "aiko"))
    assert [t.value["text"] for t in trips] == [b3.TRIP_2] and runner.invokes == 3

    runner = Runner(lambda g: g)
    BLIND3_PROGRAMS["household"].play(runner)
    for user, (_said, budget) in b3.HOUSEHOLD.items():
        got = runner.graphs[0].store.search(("budgets", user))
        assert [i.value["text"] for i in got] == [budget]


def test_the_blind3_group_runs_wrapped_and_is_scored_apart(tmp_path):
    """`rescind bench fidelity --group blind3` plays the six programs wrapped on a server of
    its own, without an error: every memory is scored against its truth, every source the
    truth names is retracted alone, the store's serving is checked, and the figures are the
    group's alone, in a section of their own."""
    blind_sets.check_wrapped_group(BLIND3, BLIND3_PROGRAMS, tmp_path)
