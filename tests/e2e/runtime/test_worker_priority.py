"""`rescind worker`'s CPU priority by role (RESCIND_WORKER_NICE): the writer lowered, the gate not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from rescind.runtime.settings import Settings
from tests.support.paths import ROOT


def _niceness(pid: int) -> set[int]:
    """The niceness of every thread of process ``pid``, as the kernel reports it."""
    out = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        out.add(int(stat.rsplit(")", 1)[1].split()[16]))  # field 19, nice
    return out


def _worker_niceness(url: str, roles: list[str], tmp_path: Path, nice: str | None) -> set[int]:
    """Start `rescind worker <roles>` with RESCIND_WORKER_NICE=``nice`` (None: unset) and read
    its threads' niceness once its loop runs (its heartbeat file is touched)."""
    env = {k: v for k, v in os.environ.items() if k != "RESCIND_WORKER_NICE"}
    if nice is not None:
        env["RESCIND_WORKER_NICE"] = nice
    beat = tmp_path / f"beat-{'-'.join(roles)}-{time.monotonic_ns()}"
    proc = subprocess.Popen([sys.executable, "-m", "rescind.cli", "worker", *roles, "--url", url,
                             "--id", f"nice-{beat.name}", "--heartbeat", str(beat)], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not beat.exists():
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, "the worker's loop did not start in 60 s"
            time.sleep(0.1)
        time.sleep(0.5)  # the threads the workers start when they begin to read
        return _niceness(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def test_a_writer_process_runs_at_the_default_niceness_on_every_thread(falkordb, tmp_path):
    """With no setting, `rescind worker writer` runs every thread at niceness 10."""
    assert _worker_niceness(falkordb, ["writer"], tmp_path, None) == {10}


def test_the_setting_names_the_niceness_and_a_gate_beside_keeps_its_own(falkordb, tmp_path):
    """RESCIND_WORKER_NICE sets the writer's; a process that also answers the gate is not lowered."""
    ours = os.getpriority(os.PRIO_PROCESS, 0)  # a child starts at its parent's niceness
    assert _worker_niceness(falkordb, ["writer"], tmp_path, '{"writer": 3}') == {3}
    assert _worker_niceness(falkordb, ["writer", "gate"], tmp_path, '{"writer": 3}') == {ours}
    assert _worker_niceness(falkordb, ["gate"], tmp_path, None) == {ours}


def test_an_empty_setting_turns_it_off(falkordb, tmp_path):
    """RESCIND_WORKER_NICE={} leaves the writer at the niceness it was started with."""
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    assert _worker_niceness(falkordb, ["writer"], tmp_path, "{}") == {ours}


def test_a_niceness_out_of_range_is_refused(monkeypatch):
    """A niceness outside 0-19 (raising a worker's priority, or past the lowest) is refused."""
    for wrong in ('{"writer": -5}', '{"writer": 20}'):
        monkeypatch.setenv("RESCIND_WORKER_NICE", wrong)
        with pytest.raises(ValidationError, match="niceness"):
            Settings()
