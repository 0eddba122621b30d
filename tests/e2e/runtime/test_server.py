"""The embedded FalkorDB server: start, persistence, and no orphan processes."""

import signal
import subprocess
import sys
import time

import pytest
import redis

from rescind.runtime.server import EmbeddedFalkorDB
from tests.support.processes import alive


def test_server_answers_graph_queries_and_stops():
    """The embedded server loads the FalkorDB module and is gone after stop()."""
    with EmbeddedFalkorDB() as server:
        pid = server.pid
        r = redis.Redis.from_url(server.url)
        r.execute_command("GRAPH.QUERY", "g", "CREATE (:X {v: 1})")
        assert r.execute_command("GRAPH.QUERY", "g", "MATCH (x:X) RETURN x.v")[1] == [[1]]
        r.close()
    assert not alive(pid)


def _node_creation_buffer(url: str) -> int:
    r = redis.Redis.from_url(url)
    try:
        return r.execute_command("GRAPH.CONFIG", "GET", "NODE_CREATION_BUFFER")[1]
    finally:
        r.close()


def test_the_server_makes_room_for_the_nodes_the_setting_asks(monkeypatch):
    """FalkorDB's room for new nodes (a larger one loads big tenants faster) is 131,072 unless
    RESCIND_NODE_CREATION_BUFFER or the caller says otherwise; FalkorDB's own is 16,384."""
    with EmbeddedFalkorDB() as server:
        assert _node_creation_buffer(server.url) == 131_072
    monkeypatch.setenv("RESCIND_NODE_CREATION_BUFFER", "32768")
    with EmbeddedFalkorDB() as server:
        assert _node_creation_buffer(server.url) == 32_768
    with EmbeddedFalkorDB(node_creation_buffer=4096) as server:
        assert _node_creation_buffer(server.url) == 4096
    with pytest.raises(ValueError, match="at least 128"):
        EmbeddedFalkorDB(node_creation_buffer=64)


def test_restart_on_the_same_data_directory_loses_nothing(tmp_path):
    """With a data directory the server keeps an AOF, so a restart loses nothing."""
    with EmbeddedFalkorDB(data_dir=tmp_path) as server:
        r = redis.Redis.from_url(server.url)
        for i in range(50):
            r.execute_command("GRAPH.QUERY", "g", "CREATE (:X {v: $v})".replace("$v", str(i)))
        r.xadd("s", {"k": "v"})
        r.close()
    with EmbeddedFalkorDB(data_dir=tmp_path) as server:
        r = redis.Redis.from_url(server.url)
        assert r.execute_command("GRAPH.QUERY", "g", "MATCH (x:X) RETURN count(x)")[1] == [[50]]
        assert r.xlen("s") == 1
        r.close()


def _child_pids(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]


def _cli_with_server(tmp_path, sig: int) -> tuple[int, int]:
    """Start `rescind replay` on a slow scenario, find its server, send ``sig``; return pids."""
    script = (
        "import sys, time\n"
        "from rescind.cli.common import falkordb\n"
        "with falkordb(None) as url:\n"
        "    print(url, flush=True)\n"
        "    time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()
    server = [p for p in _child_pids(proc.pid)]
    assert len(server) == 1
    proc.send_signal(sig)
    proc.wait(timeout=20)
    return proc.pid, server[0]


def test_ctrl_c_stops_the_embedded_server(tmp_path):
    """Ctrl-C (SIGINT) on a command stops the server it started: no orphan left."""
    _, server = _cli_with_server(tmp_path, signal.SIGINT)
    time.sleep(0.2)
    assert not alive(server)


def test_sigterm_stops_the_embedded_server(tmp_path):
    """SIGTERM on a command stops the server it started: no orphan left."""
    _, server = _cli_with_server(tmp_path, signal.SIGTERM)
    time.sleep(0.2)
    assert not alive(server)


def test_server_dies_with_a_killed_parent():
    """Even a SIGKILLed command leaves no orphan server behind."""
    script = (
        "import time\n"
        "from rescind.runtime.server import EmbeddedFalkorDB\n"
        "s = EmbeddedFalkorDB().start()\n"
        "print(s.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    server = int(proc.stdout.readline())
    assert alive(server)
    proc.kill()
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while alive(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(server)
