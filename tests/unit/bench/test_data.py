"""Where `rescind bench rules` reads the real retraction data: an option, a setting, a default
beside the repository; a folder that is not there is one line and exit 2, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rescind.bench.scenario_real import FILES, checkout, data_problem, retraction_data, shown

NO_SERVER = "redis://127.0.0.1:1"


@pytest.fixture
def no_setting(monkeypatch):
    monkeypatch.delenv("RESCIND_RETRACTIONS_DATA", raising=False)


def test_the_default_is_the_shared_folder_beside_the_checkout(no_setting, monkeypatch, tmp_path):
    """Unset, the data is ../shared/data/retractions beside the repository the package runs
    from, wherever the command is run from."""
    root = checkout()
    assert root is not None and (root / "services" / "bench").is_dir()
    monkeypatch.chdir(tmp_path)
    assert retraction_data() == root.parent / "shared" / "data" / "retractions"


def test_the_setting_and_the_option_are_taken_from_the_current_directory(monkeypatch, tmp_path):
    """RESCIND_RETRACTIONS_DATA replaces the default; --data replaces both; a relative path in
    either is read from the current directory, an absolute one as it is."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RESCIND_RETRACTIONS_DATA", "from-setting")
    assert retraction_data() == tmp_path / "from-setting"
    assert retraction_data(Path("from-option")) == tmp_path / "from-option"
    monkeypatch.setenv("RESCIND_RETRACTIONS_DATA", str(tmp_path / "elsewhere" / "data"))
    assert retraction_data() == tmp_path / "elsewhere" / "data"


def test_results_name_the_folder_relative_to_the_checkout():
    """A results file names the data folder relative to the repository, never by the absolute
    path of the machine that made it."""
    root = checkout()
    assert shown(root.parent / "shared" / "data" / "retractions") == "../shared/data/retractions"
    assert shown(root / "data") == "data"


def test_what_is_wrong_with_a_data_folder_is_said_in_one_line(tmp_path):
    """A missing folder and a folder without the three files are told apart; a complete one
    passes."""
    missing = data_problem(tmp_path / "nowhere")
    assert missing and "is not a directory" in missing and str(tmp_path / "nowhere") in missing
    (tmp_path / FILES[0]).write_text("doi\n")
    partial = data_problem(tmp_path)
    assert partial and FILES[1] in partial and FILES[2] in partial and FILES[0] not in partial
    for name in FILES:
        (tmp_path / name).write_text("doi\n")
    assert data_problem(tmp_path) is None


@pytest.mark.parametrize("scenario", ["real", "all"])
def test_a_missing_data_folder_is_refused_in_one_line_before_anything_runs(no_setting, scenario,
                                                                           tmp_path):
    """`--data` naming no folder: exit 2 with one line that names the folder and the way out,
    before a server starts or a results folder is made."""
    from rescind.cli.main import app

    out, nowhere = tmp_path / "results", tmp_path / "nowhere"
    res = CliRunner().invoke(app, ["bench", "rules", "--scenario", scenario, "--data", str(nowhere),
                                   "--url", NO_SERVER, "--out", str(out)])
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and str(nowhere) in lines[0] and "--data DIR" in lines[0], res.output
    assert not out.exists()


def test_the_setting_names_the_folder_when_no_option_is_given(monkeypatch, tmp_path):
    """RESCIND_RETRACTIONS_DATA is what the command reads when --data is not given."""
    from rescind.cli.main import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RESCIND_RETRACTIONS_DATA", "set-but-absent")
    res = CliRunner().invoke(app, ["bench", "rules", "--scenario", "real", "--url", NO_SERVER,
                                   "--out", str(tmp_path / "results")])
    assert res.exit_code == 2, res.output
    assert str(tmp_path / "set-but-absent") in res.output
