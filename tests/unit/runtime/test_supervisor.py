"""The supervisor's restarts and the loading progress lines, without a server: a stand-in whose
process has died and whose restarts fail or succeed as told."""

from __future__ import annotations

import io
import time

from rescind.runtime.readiness import Progress, ServerError, ServerStatus
from rescind.runtime.supervisor import RestartPolicy, Supervisor
from tests.unit.runtime.test_crash_loop import brisk


class Dead:
    def poll(self) -> int:
        return 1


class Alive:
    def poll(self) -> None:
        return None


class StandIn:
    """An embedded server that died; its restarts fail ``failing`` times, then succeed."""

    url = "redis://127.0.0.1:9"
    where = url

    def __init__(self, failing: int) -> None:
        self.failing, self.restarts = failing, 0
        self.process = Dead()

    def exit_reason(self) -> str:
        return "exit status 1: Invalid AOF manifest file format"

    def crash_line(self) -> None:
        return None

    def restart(self, on_progress=None) -> None:
        self.restarts += 1
        if self.restarts <= self.failing:
            raise ServerError(f"cannot start the embedded FalkorDB: attempt {self.restarts}")
        self.process = Alive()


def _until(check, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_it_gives_up_after_the_attempts_and_says_why():
    """A death and four failed restarts are five failures: it stops trying, once."""
    server, told = StandIn(failing=99), []
    policy = RestartPolicy(attempts=5, backoff_s=0.01, backoff_max_s=0.02)
    with brisk(Supervisor(server, policy, on_give_up=told.append)) as supervisor:
        _until(lambda: supervisor.failure is not None)
    assert server.restarts == 4 and len(told) == 1
    assert "failed 5 times" in told[0] and "attempt 4" in told[0]
    assert supervisor.status().state == "failed"


def test_a_restart_that_works_ends_the_outage():
    server = StandIn(failing=2)
    policy = RestartPolicy(attempts=5, backoff_s=0.01, backoff_max_s=0.02)
    with brisk(Supervisor(server, policy)) as supervisor:
        _until(lambda: isinstance(server.process, Alive))
    assert server.restarts == 3 and supervisor.failure is None


def test_the_pause_doubles_up_to_the_cap():
    """As health tells it while the supervisor waits: 0.1 s, 0.2 s, then 0.3 s (the cap)."""
    server = StandIn(failing=99)
    policy = RestartPolicy(attempts=5, backoff_s=0.1, backoff_max_s=0.3)
    pauses: list[str] = []
    with brisk(Supervisor(server, policy)) as supervisor:
        while supervisor.failure is None:
            status = supervisor.status()
            if status.state == "restarting" and status.detail not in pauses:
                pauses.append(status.detail)
            time.sleep(0.005)
    assert [p.rsplit(" in ", 1)[1] for p in pauses] == ["0.1 s", "0.2 s", "0.3 s", "0.3 s"]


def test_progress_is_quiet_for_a_short_load_and_tells_a_long_one():
    quiet, told = io.StringIO(), io.StringIO()
    loading = ServerStatus(state="loading", loaded_percent=40.0, eta_s=3,
                           detail="FalkorDB is loading its data: 40% (about 3 s left)")
    done = ServerStatus(state="up", detail="FalkorDB loaded its data in 0.2 s")
    short = Progress("here", quiet_s=60, stream=quiet)
    short(loading), short(done)
    assert quiet.getvalue() == ""
    long = Progress("here", quiet_s=0, every_s=0, stream=told)
    long(loading), long(loading), long(done)
    assert told.getvalue().splitlines() == [
        "FalkorDB is loading its data: 40% (about 3 s left) (here)"] * 2 + [
        "FalkorDB loaded its data in 0.2 s (here)"]
