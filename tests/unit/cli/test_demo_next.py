"""The commands `rescind demo` ends with: spelled as the demo was run (`.venv/bin/rescind` from
`make demo`), with the options that reach the same week."""

from __future__ import annotations

import sys
from pathlib import Path

from rescind.cli import harness

WEEK = {"tenant": "demo", "recalls": [{"name": "payment:INV-1001"}],
        "compromise": {"retraction": "r-northwind-portal"}}


def test_make_demo_is_answered_with_the_venvs_rescind(monkeypatch, tmp_path):
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "rescind").write_text("#!/bin/sh\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [".venv/bin/rescind", "demo"])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no rescind on PATH, as after `make demo`
    steps = harness.next_commands(WEEK, None, Path(".rescind/data"), own=True)
    commands = [s["command"] for s in steps]
    assert commands[0] == ".venv/bin/rescind recalls list"
    # no made-up signer: the OS user signs a decision at the shell (--by is only a note)
    assert ".venv/bin/rescind recalls approve payment:INV-1001" in commands
    assert ".venv/bin/rescind reinstate r-northwind-portal" in commands
    assert not [c for c in commands if "--by" in c]
    assert commands[-1] == ".venv/bin/rescind up"
    assert all(s["what"] for s in steps)


def test_on_path_it_is_plain_rescind_and_options_follow_the_week(monkeypatch, tmp_path):
    venv = tmp_path / "bin"
    venv.mkdir()
    exe = venv / "rescind"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(exe), "demo"])
    monkeypatch.setenv("PATH", f"{venv}:/usr/bin")
    week = {**WEEK, "tenant": "week 2"}
    shared = harness.next_commands(week, None, Path("/srv/data"), own=False)
    assert shared[0]["command"] == "rescind recalls list --tenant 'week 2' --data-dir /srv/data"
    assert not any(s["command"].startswith("rescind up") for s in shared)  # `up` serves it
    by_url = harness.next_commands(WEEK, "redis://127.0.0.1:7000", Path(".rescind/data"),
                                   own=False)
    assert by_url[0]["command"] == "rescind recalls list --url redis://127.0.0.1:7000"
