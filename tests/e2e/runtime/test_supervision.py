"""`rescind up` supervises its embedded FalkorDB: a server killed with SIGKILL comes back on the
same port and data, health says what is going on meanwhile, the workers carry on, and a server
that cannot be started again makes `up` exit non-zero with the reason."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime

import redis

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import free_port
from rescind.scenario.via_streams import wait_idle
from tests.support.paths import ROOT

AT = datetime(2026, 11, 2, tzinfo=UTC)


def _up(data_dir, port: int, api_port: int, **env: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rescind.cli", "up", "--data-dir", str(data_dir),
                             "--port", str(port), "--api-port", str(api_port)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **env})


def _health(api_port: int) -> dict:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{api_port}/api/health", timeout=5) as r:
            return json.load(r)
    except urllib.error.HTTPError as exc:
        assert exc.code == 503
        return json.load(exc)
    except OSError as exc:
        return {"ok": False, "server": {"state": "no API"}, "detail": str(exc)}


def _until(what: str, check, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _server_pid(up: subprocess.Popen) -> int:
    out = subprocess.run(["pgrep", "-P", str(up.pid), "redis-server"], capture_output=True,
                         text=True).stdout.split()
    return int(out[0]) if out else 0


def _publish(url: str, tenant: str, first: int, n: int) -> None:
    pub = Publisher(url)
    for i in range(first, first + n):
        pub.publish(ev.ObservationRecorded(event_id=f"e{i}", tenant=tenant, at=AT, source="feed",
                                           text=f"reading {i}"))
    assert pub.close(timeout=60) is not False


def _memories(url: str, tenant: str) -> int:
    return TenantGraph(connect(url), tenant).rows("MATCH (m:Mem) RETURN count(m)")[0][0]


def test_up_brings_a_killed_server_back_on_the_same_port_and_data(tmp_path):
    """SIGKILL the server under `up`: health says it is restarting, a command run meanwhile
    waits for it, it comes back on the same port with its data, the API answers again, and the
    workers take the events published after."""
    port, api_port = free_port(), free_port()
    url = f"redis://127.0.0.1:{port}"
    up = _up(tmp_path, port, api_port, RESCIND_RESTART_BACKOFF_S="3")
    try:
        _until("the API", lambda: _health(api_port)["ok"])
        tenants.create(connect(url), "sup", by="tests")
        _publish(url, "sup", 0, 200)
        _until("the first events in the graph", lambda: _memories(url, "sup") == 200)
        killed = _server_pid(up)
        os.kill(killed, signal.SIGKILL)

        restarting = _until("health to say restarting",
                            lambda: (h := _health(api_port))["server"]["state"] == "restarting"
                            and h)
        assert restarting["ok"] is False and "killed by SIGKILL" in restarting["detail"]
        # Run while the server is away: the command waits for up's server, it does not fail.
        listed = subprocess.Popen([sys.executable, "-m", "rescind.cli", "recalls", "list",
                                   "--data-dir", str(tmp_path), "--tenant", "sup", "--json"],
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)

        _until("health to say up", lambda: _health(api_port)["ok"])
        assert _server_pid(up) not in (0, killed)
        assert _memories(url, "sup") == 200  # the same port, and the data kept by the AOF
        out, err = listed.communicate(timeout=120)
        assert listed.returncode == 0 and json.loads(out) == [], err

        _publish(url, "sup", 200, 200)  # the workers reconnected
        _until("the later events in the graph", lambda: _memories(url, "sup") == 400)
        wait_idle(redis.Redis.from_url(url), layout.tenant_stream("sup"), timeout=60,
                  only=(layout.WRITER_GROUP,))
    finally:
        up.send_signal(signal.SIGINT)
        out, err = up.communicate(timeout=60)
    assert up.returncode == 0, err
    assert err.count("died (killed by SIGKILL)") == 1, err  # each restart logged once
    assert err.count("restarting FalkorDB on") == 1, err
    assert err.count("lost FalkorDB") <= 1 and "Traceback" not in err, err


def test_up_exits_non_zero_when_its_server_cannot_be_started_again(tmp_path):
    """The server dies and its AOF is corrupt: every restart fails, and after five failures
    `up` stops with exit status 2 and says why."""
    port, api_port = free_port(), free_port()
    up = _up(tmp_path, port, api_port, RESCIND_RESTART_BACKOFF_S="0.2")
    try:
        _until("the API", lambda: _health(api_port)["ok"])
        os.kill(_server_pid(up), signal.SIGKILL)
        (tmp_path / "appendonlydir" / "appendonly.aof.manifest").write_text("garbage\n")
        _, err = up.communicate(timeout=120)
    finally:
        if up.poll() is None:
            up.kill()
            up.communicate()
    assert up.returncode == 2, err
    assert "rescind up stopped: FalkorDB failed 5 times" in err, err
    assert "Invalid AOF manifest file format" in err, err
    assert err.count("restarting FalkorDB on") == 4, err
