"""Data directories whose restart takes a while: an AOF that ends in many commands, each of which
a restart replays one by one, as the AOF of issue 15 did (46 MB, 94 s)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from rescind.engine.writes import Write, record
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.runtime.server import EmbeddedFalkorDB
from tests.support.aof_files import append, resp

AT = int(datetime(2026, 11, 2, tzinfo=UTC).timestamp() * 1_000_000)


class NoRewrite(EmbeddedFalkorDB):
    """The embedded server with automatic AOF rewrites off, so that commands pile up in the
    AOF's incremental part (Redis's 64 MB default did the same to a smaller AOF)."""

    def command(self) -> list[str]:
        return [*super().command(), "--auto-aof-rewrite-percentage", "0"]


def slow_to_load(data_dir: Path, tenant: str, commands: int) -> str:
    """Fill ``data_dir``: one observation in ``tenant``'s graph, then ``commands`` small graph
    writes on another graph; returns the observation's id.

    The writes are appended to the stopped server's AOF, one GRAPH.QUERY each, as the product's
    writes are logged: none inside MULTI/EXEC (FalkorDB 4.16 aborts, ``!server.in_exec``, when
    a client's command arrives while it yields inside a replayed EXEC). Sent to a running
    server, each write would be handed to FalkorDB's thread pool, and building would take ten
    times as long as loading."""
    server = NoRewrite(data_dir=data_dir).start()
    try:
        tenants.create(connect(server.url), tenant, by="tests")
        graph = TenantGraph(connect(server.url), tenant)
        record(graph, [Write("e-obs", "obs-1", "observation", "the portal says hello", AT,
                             source="portal:acme")])
    finally:
        server.stop()  # SIGTERM: the AOF is flushed
    append(data_dir, (resp("GRAPH.QUERY", "filler", f"CREATE (:X {{v: {i}}})")
                      for i in range(commands)))
    return "obs-1"
