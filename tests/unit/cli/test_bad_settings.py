"""A RESCIND_* setting that does not validate stops a command with its name and exit 2, before
anything starts (it used to be a pydantic traceback, exit 1)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rescind.cli.main import app


@pytest.mark.parametrize(("env", "named"), [
    ({"RESCIND_TRACE_URL": "http://traces.example/trace"}, "RESCIND_TRACE_URL"),
    ({"RESCIND_API_PORT": "70000"}, "RESCIND_API_PORT"),
])
def test_a_bad_setting_is_named_and_nothing_starts(tmp_path, env, named):
    res = CliRunner().invoke(app, ["up", "--data-dir", str(tmp_path / "data")], env=env)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(named + ":")
    assert not (tmp_path / "data").exists()  # no server was started on it
