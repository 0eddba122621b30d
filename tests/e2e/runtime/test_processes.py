"""`rescind up` and `rescind worker` as processes: they work, and stop cleanly on a signal."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from datetime import UTC, datetime

import redis

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import free_port
from rescind.scenario.via_streams import wait_idle
from tests.support.paths import ROOT
from tests.support.processes import alive

AT = datetime(2026, 11, 2, tzinfo=UTC)


def wait_for(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = redis.Redis.from_url(url)
            if conn.exists(layout.event_stream(0)):
                return
        except redis.ConnectionError:
            pass
        time.sleep(0.1)
    raise TimeoutError(url)


def test_up_runs_server_and_workers_and_ctrl_c_stops_everything(tmp_path):
    """Events published to `rescind up` land in the graph; SIGINT ends server and workers."""
    port = free_port()
    url = f"redis://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "rescind.cli", "up", "--port", str(port),
                             "--api-port", str(free_port()), "--data-dir", str(tmp_path)],
                            cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(url)
        server_pid = int(subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                        text=True, check=True).stdout.split()[0])
        made = subprocess.run([sys.executable, "-m", "rescind.cli", "tenant", "create", "up",
                               "--url", url], cwd=ROOT, capture_output=True, text=True)
        assert made.returncode == 0, made.stderr  # events are applied for created tenants
        pub = Publisher(url)
        pub.publish(ev.ObservationRecorded(event_id="o", tenant="up", at=AT, source="s",
                                           text="hello"))
        pub.close()
        wait_idle(redis.Redis.from_url(url), layout.tenant_stream("up"), timeout=20)
        assert TenantGraph(connect(url), "up").rows("MATCH (m:Mem) RETURN m.text") == [["hello"]]
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert "workers stopped" in out
    time.sleep(0.2)
    assert not alive(server_pid)


def test_a_worker_process_stops_on_sigterm(falkordb):
    """`rescind worker writer` finishes what it holds and exits 0 on SIGTERM."""
    proc = subprocess.Popen([sys.executable, "-m", "rescind.cli", "worker", "writer", "--url",
                             falkordb, "--id", "sigterm"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    conn = redis.Redis.from_url(falkordb)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            consumers = conn.xinfo_consumers(layout.event_stream(0), layout.WRITER_GROUP)
        except redis.ResponseError:  # the worker has not declared its groups yet
            consumers = []
        if any(c["name"] == b"writer-sigterm" for c in consumers):
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out


def test_up_on_a_port_in_use_is_a_clear_error(tmp_path):
    """A port something else listens on: one line on stderr, exit 2, no hang, no traceback."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        res = subprocess.run([sys.executable, "-m", "rescind.cli", "up", "--port",
                              str(taken.getsockname()[1]), "--data-dir", str(tmp_path)],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "cannot start the embedded FalkorDB" in res.stderr
    assert "Traceback" not in res.stderr


def test_a_worker_without_a_server_is_a_clear_error():
    """`rescind worker` pointed at nothing: a message and exit 2."""
    res = subprocess.run([sys.executable, "-m", "rescind.cli", "worker", "writer", "--url",
                          f"redis://127.0.0.1:{free_port()}"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2 and "cannot reach FalkorDB" in res.stderr
    assert "Traceback" not in res.stderr
