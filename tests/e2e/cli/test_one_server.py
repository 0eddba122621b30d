"""A command never starts a second server beside the one `rescind up` serves (issue 31): run
from another directory without --data-dir it is refused, naming the running one and what to
export; `rescind up` prints those exports, and with them the command uses its server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from tests.support.paths import ROOT

RESCIND = [sys.executable, "-m", "rescind.cli"]


def test_a_command_is_refused_rather_than_start_a_second_server(tmp_path):
    """While `rescind up --data-dir A` runs: `rescind tenant list` in another directory (its
    default data directory) exits 2 naming A and the exports, and creates nothing there; with
    the exports `rescind up` printed it answers from A's server; once `up` stops, the same
    command starts its own server again."""
    env = {**os.environ, "RESCIND_RUN_DIR": str(tmp_path / "run" / "rescind-up")}
    env.pop("RESCIND_DATA_DIR", None)
    env.pop("RESCIND_URL", None)
    served = tmp_path / "a"
    up = subprocess.Popen([*RESCIND, "up", "--data-dir", str(served), "--api-port", "0"],
                          cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, start_new_session=True)
    try:
        exports = {}
        deadline = time.monotonic() + 90
        while len(exports) < 2 and time.monotonic() < deadline:
            line = up.stdout.readline()
            assert line, "rescind up stopped before it printed its exports"
            if line.strip().startswith("export "):
                name, value = line.strip().removeprefix("export ").split("=", 1)
                exports[name] = value
        assert exports["RESCIND_DATA_DIR"] == str(served.resolve())
        assert exports["RESCIND_URL"].startswith("redis://127.0.0.1:")
        [entry] = [json.loads(p.read_text()) for p in (tmp_path / "run" / "rescind-up").iterdir()]
        assert entry["pid"] == up.pid

        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        res = subprocess.run([*RESCIND, "tenant", "list", "--json"], cwd=elsewhere, env=env,
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 2, res.stdout + res.stderr
        assert f"rescind up (pid {up.pid}) serves {served.resolve()}" in res.stderr
        assert f"export RESCIND_DATA_DIR={served.resolve()}" in res.stderr
        assert not (elsewhere / ".rescind").exists()  # no server was started here

        for name, value in exports.items():
            res = subprocess.run([*RESCIND, "tenant", "list", "--json"], cwd=elsewhere,
                                 env={**env, name: value}, capture_output=True, text=True,
                                 timeout=120)
            assert res.returncode == 0, (name, res.stderr)
            assert isinstance(json.loads(res.stdout), list)
        assert not (elsewhere / ".rescind").exists()
    finally:
        os.killpg(up.pid, signal.SIGTERM)
        up.wait(timeout=60)
    assert not list((tmp_path / "run" / "rescind-up").iterdir())  # it took its notice away
    res = subprocess.run([*RESCIND, "tenant", "list", "--json"], cwd=tmp_path / "elsewhere",
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "elsewhere" / ".rescind" / "data").is_dir()  # its own, now none runs
