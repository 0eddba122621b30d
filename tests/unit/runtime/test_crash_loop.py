"""The supervisor in a crash loop, without a server: a stand-in that comes up at each restart
and dies again when told. It rides the loop out (no giving up while restarts come up), the
pause doubles and starts afresh after a stable period, and its report counts the deaths and
keeps the last crash line."""

from __future__ import annotations

import threading
import time

from rescind.runtime.readiness import ServerStatus
from rescind.runtime.supervisor import RestartPolicy, Supervisor, Supervisors


class Process:
    def __init__(self) -> None:
        self.code: int | None = None

    def poll(self) -> int | None:
        return self.code


class CrashingServer:
    """Dies when ``kill`` is called; every restart comes up."""

    url = "redis://127.0.0.1:9"
    where = url

    def __init__(self, crash: str | None = "Redis 8.2.3 crashed by signal: 11 (in Enforce)"):
        self.process = Process()
        self.crash, self.restarts = crash, 0

    def kill(self) -> None:
        self.process.code = -11

    def exit_reason(self) -> str:
        return "killed by SIGSEGV"

    def crash_line(self) -> str | None:
        return self.crash

    def restart(self, on_progress=None) -> None:
        self.restarts += 1
        self.process = Process()


WATCH_S = 0.2  # how often the supervisor's thread looks at its process (Supervisor._watch)


class Brisk(threading.Event):
    """A supervisor's stop event whose look at the process comes every 5 ms instead of every
    200 ms: a death is seen at once. Its pauses before a restart are waited in full."""

    def wait(self, timeout: float | None = None) -> bool:
        return super().wait(0.005 if timeout == WATCH_S else timeout)


def brisk(supervisor: Supervisor) -> Supervisor:
    supervisor._stop = Brisk()
    return supervisor


def _until(check, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline
        time.sleep(0.005)


def _up(supervisor: Supervisor) -> ServerStatus:
    """What health would say once the server is up: no probe of a real server here."""
    return ServerStatus(state="up").model_copy(update={"restarts": supervisor.report()})


def _pauses(supervisor: Supervisor) -> list[float]:
    """Record each pause the supervisor chooses before a restart."""
    chosen: list[float] = []
    failed = supervisor._failed

    def counted(failures, why):
        pause = failed(failures, why)
        chosen.append(pause)
        return pause

    supervisor._failed = counted
    return chosen


def _die(server: CrashingServer) -> None:
    """Kill the server; return once the supervisor has started it again."""
    before = server.restarts
    server.kill()
    _until(lambda: server.restarts > before)


def test_a_crash_loop_is_ridden_out_and_reported():
    """Six deaths, each restart coming up: the supervisor never gives up (it gives up only on
    restarts that fail), its pause doubles to the cap, and its report says crash loop with the
    count and the last crash line."""
    server = CrashingServer()
    policy = RestartPolicy(attempts=3, backoff_s=0.01, backoff_max_s=0.04, stable_s=60,
                           loop_after=3, loop_window_s=600)
    supervisor = brisk(Supervisor(server, policy))
    pauses = _pauses(supervisor)
    with supervisor:
        assert supervisor.report().crash_loop is False
        for _ in range(6):
            _die(server)
        _until(lambda: supervisor._state is None)
        report = _up(supervisor).restarts
    assert supervisor.failure is None and server.restarts == 6
    assert pauses == [0.01, 0.02, 0.04, 0.04, 0.04, 0.04]
    assert report.total == 6 and report.recent == 6 and report.crash_loop is True
    assert report.last_crash == "Redis 8.2.3 crashed by signal: 11 (in Enforce)"
    assert report.last_death_at is not None


def test_the_pause_starts_afresh_after_the_server_stays_up():
    """After stable_s up, the next death waits the first pause again, not the doubled one."""
    server = CrashingServer()
    policy = RestartPolicy(backoff_s=0.01, backoff_max_s=1.0, stable_s=0.3)
    supervisor = brisk(Supervisor(server, policy))
    pauses = _pauses(supervisor)
    with supervisor:
        _die(server)
        _die(server)
        _until(lambda: supervisor._streak == 0)  # stable: seen up longer than stable_s
        _die(server)
    assert pauses == [0.01, 0.02, 0.01]


def test_a_crash_loop_ends_when_the_deaths_leave_the_window():
    """Deaths older than loop_window_s no longer count: no crash loop, the total stays."""
    server = CrashingServer(crash=None)
    policy = RestartPolicy(backoff_s=0.01, backoff_max_s=0.01, loop_after=2, loop_window_s=0.5)
    with brisk(Supervisor(server, policy)) as supervisor:
        for _ in range(2):
            _die(server)
        assert supervisor.report().crash_loop is True
        assert supervisor.report().last_crash == "killed by SIGSEGV"  # no crash line logged
        _until(lambda: supervisor.report().recent == 0, timeout=5)  # the window passes
        report = supervisor.report()
    assert report.crash_loop is False and report.recent == 0 and report.total == 2


def test_a_cluster_reports_the_node_that_died_most():
    """Supervisors (a local cluster) show the restarts of the node in the crash loop."""
    calm, crashing = CrashingServer(), CrashingServer()
    policy = RestartPolicy(backoff_s=0.01, backoff_max_s=0.01, loop_after=2)
    group = Supervisors([calm, crashing], policy)
    for s in group.each:
        brisk(s)
        s._client.close()
        s.status = lambda s=s: _up(s)  # no real server to probe
    with group:
        for _ in range(2):
            _die(crashing)
        _until(lambda: group.each[1]._state is None)
        assert group.status().restarts.crash_loop is True
        assert group.status().restarts.total == 2
