"""Data directories whose restart takes a while: an AOF that ends in many commands, each of which
a restart replays one by one, as the AOF of issue 15 did (46 MB, 94 s)."""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from pathlib import Path

from rescind.engine.writes import Write, record
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.runtime.server import EmbeddedFalkorDB

AT = int(datetime(2026, 11, 2, tzinfo=UTC).timestamp() * 1_000_000)


class NoRewrite(EmbeddedFalkorDB):
    """The embedded server with automatic AOF rewrites off, so that commands pile up in the
    AOF's incremental part (Redis's 64 MB default did the same to a smaller AOF)."""

    def command(self) -> list[str]:
        return [*super().command(), "--auto-aof-rewrite-percentage", "0"]


def _resp(*args: str) -> bytes:
    parts = [a.encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def slow_to_load(data_dir: Path, tenant: str, commands: int) -> str:
    """Fill ``data_dir``: one observation in ``tenant``'s graph, then ``commands`` small graph
    writes on another graph; returns the observation's id. The writes are sent down one socket,
    without a client library per command, so that building costs about what loading costs."""
    server = NoRewrite(data_dir=data_dir).start()
    try:
        tenants.create(connect(server.url), tenant, by="tests")
        graph = TenantGraph(connect(server.url), tenant)
        record(graph, [Write("e-obs", "obs-1", "observation", "the portal says hello", AT,
                             source="portal:acme")])
        # In MULTI a graph query runs on Redis's main thread, as when replayed: no hand-off to
        # FalkorDB's thread pool, which made building take ten times as long as loading.
        write = [_resp("GRAPH.QUERY", "filler", f"CREATE (:X {{v: {i}}})") for i in range(commands)]
        writes = b"".join(_resp("MULTI") + b"".join(write[i:i + 1000]) + _resp("EXEC")
                          for i in range(0, commands, 1000))
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(writes + _resp("ECHO", "all-written"))
            received = b""
            while not received.endswith(b"all-written\r\n"):
                received = received[-64:] + sock.recv(1 << 20)
    finally:
        server.stop()  # SIGTERM: the AOF is flushed
    return "obs-1"
