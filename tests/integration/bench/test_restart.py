"""`rescind bench restart` at a toy size: it loads, sends a day of events through the event
path, restarts, finds every memory again, and writes the table with the command."""

from __future__ import annotations

import json

from typer.testing import CliRunner


def test_the_restart_benchmark_times_restarts_of_a_loaded_data_directory(tmp_path):
    """Without --threshold: filling 16 MB of commands is what takes time at a toy size."""
    from rescind.cli.main import app

    res = CliRunner().invoke(app, ["bench", "restart", "--sizes", "1000", "--events", "200",
                                   "--repeats", "2", "--no-threshold", "--out",
                                   str(tmp_path / "out"), "--work-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "out" / "restart.json").read_text())
    assert data["command"].startswith("rescind bench restart")
    row = data["sizes"]["1000"]
    assert row["memories"] == 1200 and row["events"] == 200  # every event landed, and stayed
    timed = row["after_a_day"]
    assert len(timed["restart_s"]) == 2 and timed["median_s"] > 0
    assert 15 < timed["rewrite_at_mb"] <= 16  # the base is small: the minimum size applies
    assert row["aof_rewrites"] >= 1  # the new tenant's schema asked for one
    assert row["at_the_rewrite_threshold"] is None
    assert "| 1,200 | after a day |" in (tmp_path / "out" / "restart.md").read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # the data directories are gone
