"""`rescind bench restart` refuses bad options before it starts a server or writes a file."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner


@pytest.mark.parametrize("args", [
    ["--events", "3"], ["--events", "0"], ["--sizes", "50"], ["--sizes", "1000,x"],
    ["--repeats", "0"], ["--batch", "0"],
])
def test_bad_restart_options_are_refused_in_one_line(args, tmp_path):
    from rescind.cli.main import app

    out = tmp_path / "results"
    res = CliRunner().invoke(app, ["bench", "restart", *args, "--out", str(out)])
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and args[0] in lines[0], res.output
    assert not out.exists()
