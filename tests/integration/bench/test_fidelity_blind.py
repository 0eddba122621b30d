"""The blind programs of `rescind bench fidelity`: their two hand labellings agree, each labels
exactly what it writes, and `--group blind` plays them wrapped against the real server and
reports them apart (what they score is the report's business, not pinned here)."""

from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

from rescind.bench import fidelity as fid
from rescind.bench.fidelity_blind import BLIND, BLIND_PROGRAMS
from tests.support import blind_sets


def test_every_blind_program_s_out_when_is_what_its_truth_implies():
    """Each blind program's IN/OUT after every single-source retraction is what its premises
    imply; a label changed on one side only is refused."""
    blind_sets.check_registered(BLIND, BLIND_PROGRAMS)
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
    blind_sets.check_plain_play(BLIND_PROGRAMS[name], monkeypatch)


def test_the_blind_group_runs_wrapped_and_is_scored_apart(tmp_path):
    """`rescind bench fidelity --group blind` plays the six blind programs wrapped on a
    server of its own: every memory is scored against its truth, every source the truth
    names is retracted alone, the store's serving is checked, and the figures are the blind
    group's alone, in a section of their own; an unknown group is refused."""
    from rescind.cli.main import app

    bad = CliRunner().invoke(app, ["bench", "fidelity", "--group", "nope", "--out",
                                   str(tmp_path)])
    assert bad.exit_code == 2 and "unknown group" in bad.output, bad.output
    blind_sets.check_wrapped_group(BLIND, BLIND_PROGRAMS, tmp_path)
