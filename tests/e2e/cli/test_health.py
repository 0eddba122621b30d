"""`rescind health api|mcp|worker`, the containers' health checks and probes: exit 0 only for
an API whose FalkorDB answers, an MCP server that answers HTTP, a worker whose loop beat
lately (the heartbeat `rescind worker --heartbeat` writes)."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time

import pytest

from rescind.api.serve import api_thread
from rescind.cli.run import beat
from rescind.runtime.readiness import ServerStatus
from rescind.runtime.settings import Settings
from tests.support.paths import ROOT


def health(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rescind.cli", "health", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)


def test_a_worker_is_healthy_while_its_loop_beats(tmp_path):
    """The loop's beat writes the file at once and again each period; `health worker` passes
    on a fresh file, fails on one older than --max-age and on none at all."""
    path = tmp_path / "beat" / "heartbeat"

    async def run() -> list[float]:
        stop = asyncio.Event()
        task = asyncio.create_task(beat(path, stop, every_s=0.05))
        await asyncio.sleep(0.01)
        first = path.stat().st_mtime_ns
        await asyncio.sleep(0.2)
        stop.set()
        await asyncio.wait_for(task, 1)
        return [first, path.stat().st_mtime_ns]

    first, last = asyncio.run(run())
    assert last > first  # it beat again, not only once
    assert health("worker", "--heartbeat", str(path), "--max-age", "30").returncode == 0
    old = time.time() - 120
    os.utime(path, (old, old))
    res = health("worker", "--heartbeat", str(path), "--max-age", "30")
    assert res.returncode == 1 and re.search(r"last beat 12\d s ago", res.stderr)
    res = health("worker", "--heartbeat", str(tmp_path / "none"))
    assert res.returncode == 1 and "no heartbeat yet" in res.stderr
    res = health("worker", "--heartbeat", str(path), "--max-age", "30", "--json")
    assert res.returncode == 1 and json.loads(res.stdout)["healthy"] is False


def test_the_api_is_healthy_only_while_its_falkordb_answers(falkordb):
    """Against the real API on the real server: 0 while /api/health says up; 1, naming the
    503, when health reports the server down; 1 when nothing listens."""
    settings = Settings(url=falkordb)
    with api_thread(falkordb, "127.0.0.1", 0, settings) as base:
        res = health("api", "--url", base)
        assert res.returncode == 0, res.stderr
    down = ServerStatus(state="down", detail="FalkorDB does not answer")
    with api_thread(falkordb, "127.0.0.1", 0, settings, server_status=lambda: down) as base:
        res = health("api", "--url", base)
        assert res.returncode == 1 and "HTTP 503" in res.stderr
    res = health("api", "--url", base, "--timeout", "1")
    assert res.returncode == 1 and "no answer" in res.stderr


@pytest.mark.parametrize(("status", "healthy"), [(401, True), (200, True), (502, False)])
def test_the_mcp_server_is_healthy_when_it_answers_http_below_500(status, healthy):
    """/mcp without a token answers 401, which is the server up; a 5xx is not."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            assert self.path == "/mcp"
            self.send_response(status)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        res = health("mcp", "--url", f"http://127.0.0.1:{server.server_port}")
    finally:
        server.shutdown()
    assert (res.returncode == 0) is healthy, res.stderr
