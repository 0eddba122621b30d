"""`rescind bench` refuses bad options and unwritable results before a server starts."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner


@pytest.mark.parametrize("args", [
    ["engine", "--sizes", "abc"], ["engine", "--samples", "50", "--sizes", "1000"],
    ["engine", "--samples", "0"], ["engine", "--batch", "0"],
    ["engine", "--gate-samples", "-1"], ["engine", "--write-rate", "0"],
    ["engine", "--live-samples", "-1"],
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
