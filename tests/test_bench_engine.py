"""`rescind bench engine` at toy sizes: every table it writes is filled from real runs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner


def test_the_engine_benchmark_writes_each_size_with_its_raw_baseline(falkordb, tmp_path):
    from rescind.cli.main import app

    res = CliRunner().invoke(app, ["bench", "engine", "--sizes", "1000,2000", "--samples", "3",
                                   "--batch", "500", "--url", falkordb, "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "engine.json").read_text())
    assert data["command"].startswith("rescind bench engine")
    for size in ("1000", "2000"):
        load = data["load"][size]
        # The same generator feeds both loads, so both write the same number of rows.
        assert load["writes"] == load["raw_writes"] > int(size)
        assert load["writes_per_s"] > 0 and load["raw_writes_per_s"] > 0
        assert abs(load["ratio_to_raw"] - load["writes_per_s"] / load["raw_writes_per_s"]) < 0.01
        timed = data["retraction_region_100"][size]
        assert timed["runs"] == 3 and 90 <= timed["median_region"] <= 110
    assert "ratio_largest_to_smallest" in data["retraction_region_100"]
    md = (tmp_path / "engine.md").read_text()
    assert "| 2,000 |" in md and "raw UNWIND writes/s" in md


@pytest.mark.parametrize("args", [
    ["engine", "--sizes", "abc"], ["engine", "--samples", "50", "--sizes", "1000"],
    ["engine", "--samples", "0"], ["engine", "--batch", "0"],
    ["ingest", "--events", "0"], ["ingest", "--events", "3"], ["ingest", "--batch", "-5"],
    ["ingest", "--repeats", "2"],
    ["rules", "--scenario", "scale", "--sizes", "50"],
    ["rules", "--scenario", "scale", "--sizes", "1000,x"],
    ["rules", "--scenario", "scale", "--samples", "-1"],
])
def test_bad_benchmark_options_are_refused_in_one_line_before_anything_runs(args, tmp_path):
    """Checked before a server starts or a result is written: exit 2, one line, no files."""
    from rescind.cli.main import app

    out = tmp_path / "results"
    res = CliRunner().invoke(app, ["bench", *args, "--url", "redis://127.0.0.1:1",
                                   "--out", str(out)])
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and args[-2] in lines[0], res.output  # names the bad option
    assert not out.exists()


def test_a_results_folder_that_cannot_be_written_is_refused_before_the_run(tmp_path):
    from rescind.cli.main import app

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    res = CliRunner().invoke(app, ["bench", "engine", "--url", "redis://127.0.0.1:1",
                                   "--out", str(blocker / "results")])
    assert res.exit_code == 2 and "cannot write results to" in res.output


def test_a_rules_results_file_that_is_not_json_is_refused_not_overwritten(tmp_path):
    from rescind.cli.main import app

    (tmp_path / "rules.json").write_text("{ half a file")
    res = CliRunner().invoke(app, ["bench", "rules", "--scenario", "scale", "--sizes", "1000",
                                   "--url", "redis://127.0.0.1:1", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "not a readable results file" in res.output
    assert (tmp_path / "rules.json").read_text() == "{ half a file"
