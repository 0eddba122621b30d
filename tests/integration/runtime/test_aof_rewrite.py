"""An AOF rewrite asked for while another runs, against the real server."""

from __future__ import annotations

import redis

from rescind.runtime.server import EmbeddedFalkorDB
from rescind.transport import connection


def test_a_rewrite_asked_while_another_runs_waits_for_it_and_starts_after(tmp_path):
    """Redis refuses BGREWRITEAOF while a rewrite runs; ``rewrite_aof`` waits for that one
    to end, starts a rewrite of its own (so what was written last is in the AOF's base) and,
    asked to, waits for it to finish."""
    with EmbeddedFalkorDB(data_dir=tmp_path) as server:
        node = redis.Redis.from_url(server.url)
        node.set("k", "v" * 100_000)
        assert node.info("persistence")["aof_enabled"]
        node.bgrewriteaof()
        before = node.info("persistence")
        assert before["aof_rewrite_in_progress"] or before["aof_rewrite_scheduled"]
        assert connection.rewrite_aof(node, finished=True)
        after = node.info("persistence")
        assert not after["aof_rewrite_in_progress"] and not after["aof_rewrite_scheduled"]
        assert after["aof_rewrites"] >= 2
