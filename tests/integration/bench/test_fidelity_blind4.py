"""The fourth blind programs of `rescind bench fidelity`: their labels are consistent, each
labels exactly what it writes (and does what its labels assume: the order lookup fails once,
the trimmed window hides the stock count and the user's message from the reorder note, the
memory agent never sees the meter or the tariff, the report is shown every finding, the
dentist memory is updated in place), and `--group blind4` plays them wrapped against the real
server and reports them apart (what they score is the report's business, not pinned here)."""

from __future__ import annotations

import dataclasses

import pytest

from rescind.bench import fidelity as fid
from rescind.bench import fidelity_blind4 as b4
from rescind.bench.fidelity_blind4 import BLIND4, BLIND4_PROGRAMS
from rescind.bench.fidelity_programs import Runner
from tests.support import blind_sets


def test_every_blind4_program_s_out_when_is_what_its_truth_implies():
    """Each blind4 program's IN/OUT after every single-source retraction is what its premises
    imply; a label changed on one side only is refused."""
    blind_sets.check_registered(BLIND4, BLIND4_PROGRAMS)
    dentist = BLIND4_PROGRAMS["dentist_memory"]
    broken = dataclasses.replace(dentist, out_when={**dentist.out_when,
                                                    "weather:bristol": {b4.APPT}})
    with pytest.raises(ValueError, match=r"out_when\['weather:bristol'\]"):
        fid.check_labels(broken)



@pytest.mark.parametrize("name", list(BLIND4_PROGRAMS))
def test_a_blind4_program_played_plain_writes_exactly_what_its_truth_labels(name, monkeypatch):
    """Played unwrapped, every value the program puts in its store is a memory of its truth,
    and every memory of its truth is put: no write goes unscored, no label is for nothing."""
    blind_sets.check_plain_play(BLIND4_PROGRAMS[name], monkeypatch)



def _texts(messages: list) -> str:
    return "\n".join(str(m.content) for m in messages)


def test_the_blind4_programs_do_what_their_labels_assume(monkeypatch):
    """The order lookup's first answer is an error and its retry the order; the reorder note's
    call is shown neither the stock count nor the user's message; the memory agent is shown
    neither meter nor tariff; the report is shown every finding; the dentist memory is one
    current version, the updated one, under the first one's key."""
    seen = blind_sets.shown(monkeypatch)
    BLIND4_PROGRAMS["support_retry"].play(Runner(lambda g: g))
    results = [m for m in seen[-1] if m.type == "tool" and m.name == "order_status"]
    assert [m.status for m in results] == ["error", "success"]
    assert str(results[1].content) == b4.ORDERS["a-5521"]

    seen.clear()
    BLIND4_PROGRAMS["reorder_window"].play(Runner(lambda g: g))
    count_call = next(s for s in seen if s[-1].type == "tool" and s[-1].name == "stock_level")
    reorder_call = next(s for s in seen
                        if s[-1].type == "tool" and s[-1].name == "sales_forecast")
    assert b4.STOCK["sku-77810"] in _texts(count_call)
    assert b4.SUPPLIERS["sku-77810"] in _texts(reorder_call)
    assert b4.STOCK["sku-77810"] not in _texts(reorder_call)
    assert not any(m.type == "human" for m in reorder_call)

    seen.clear()
    BLIND4_PROGRAMS["energy_handoff"].play(Runner(lambda g: g))
    memory = [s for s in seen if str(s[0].content).startswith("You keep")]
    assert memory and all(b4.METERS["em-400217"] not in _texts(s)
                          and b4.TARIFFS["green-flex"] not in _texts(s) for s in memory)
    assert "EUR 141.08" in _texts(memory[0])

    seen.clear()
    BLIND4_PROGRAMS["heat_pump"].play(Runner(lambda g: g))
    report = [s for s in seen if str(s[0].content).startswith("Write")]
    assert len(report) == 1 and all(f in _texts(report[0]) for f in b4.FINDINGS.values())

    runner = Runner(lambda g: g)
    BLIND4_PROGRAMS["dentist_memory"].play(runner)
    items = runner.graphs[0].store.search(("memories", "hana"))
    assert [i.value["content"] for i in items] == [b4.APPT_MOVED] and runner.invokes == 2
    first = [s for s in seen if any(m.type == "tool" and m.name == "manage_memory" for m in s)]
    assert items[0].key in _texts(first[0])


def test_the_blind4_group_runs_wrapped_and_is_scored_apart(tmp_path):
    """`rescind bench fidelity --group blind4` plays the six programs wrapped on a server of
    its own, without an error: every memory is scored against its truth, every source the
    truth names is retracted alone, the store's serving is checked, and the figures are the
    group's alone, in a section of their own."""
    blind_sets.check_wrapped_group(BLIND4, BLIND4_PROGRAMS, tmp_path)
