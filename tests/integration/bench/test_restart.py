"""`rescind bench restart` at a toy size: it loads, sends a day of events through the event
path, restarts, finds every memory again, and writes the table with the command."""

from __future__ import annotations

import json

from typer.testing import CliRunner


def test_the_restart_benchmark_times_restarts_of_a_loaded_data_directory(tmp_path):
    from rescind.cli.main import app

    res = CliRunner().invoke(app, ["bench", "restart", "--sizes", "1000", "--events", "200",
                                   "--repeats", "2", "--out", str(tmp_path / "out"),
                                   "--work-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "out" / "restart.json").read_text())
    assert data["command"].startswith("rescind bench restart")
    row = data["sizes"]["1000"]
    assert row["memories"] == 1200 and row["events"] == 200  # every event landed, and stayed
    assert len(row["restart_s"]) == 2 and row["median_s"] > 0
    assert row["aof_rewrites"] >= 1  # the new tenant's schema asked for one
    assert "| 1,200 |" in (tmp_path / "out" / "restart.md").read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # the data directories are gone
