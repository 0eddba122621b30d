"""`replay --via-streams`: random scenarios through publisher, streams and FastStream workers
give the same report as the direct engine, on the real server: 30 of them a run
(RESCIND_STREAM_EXAMPLES sets the count; the cluster half runs 20)."""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path

import pytest
import redis
from hypothesis import HealthCheck, given, note, settings

from rescind.scenario.replay import replay_text
from rescind.scenario.via_streams import replay_via_streams
from rescind.transport import connection
from rescind.workers.app import WorkerSettings, WorkerThread
from tests.support.strategies import operation_sequences
from tests.support.texts import APPROVE_WITHOUT_DRAFT

EXAMPLES = int(os.environ.get("RESCIND_STREAM_EXAMPLES", 30))
_fresh = itertools.count()


@pytest.fixture(scope="module")
def stream_workers(falkordb):
    """Writer and retraction workers on the session's server, for the whole module."""
    with WorkerThread(WorkerSettings(url=falkordb, worker_id="test", reaper_idle_ms=2_000),
                      ("writer", "retraction", "reaper")):
        yield falkordb


def _drop(url: str, *tenants: str) -> None:
    conn = connection.connect(url)
    for t in tenants:
        with contextlib.suppress(redis.ResponseError):
            conn.execute_command("GRAPH.DELETE", f"rescind:{{{t}}}")


def test_the_example_is_the_same_through_streams(stream_workers, tenant_name):
    """The vendor-portal story gives the identical report both ways."""
    text = Path("examples/vendor-portal.jsonl").read_text()
    direct = replay_text(text, stream_workers, tenant_name + "d")
    streamed = replay_via_streams(text, stream_workers, tenant_name + "s", start_workers=False)
    _drop(stream_workers, tenant_name + "d", tenant_name + "s")
    assert streamed == direct


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=operation_sequences())
def test_random_scenarios_give_the_same_report_through_streams(stream_workers, tenant_name, text):
    """Every part of the report (statuses, causes, hops, held, recalls, gates, fragility) is equal."""
    n = next(_fresh)
    a, b = f"{tenant_name}-d{n}", f"{tenant_name}-s{n}"
    note(text)
    try:
        direct = replay_text(text, stream_workers, a)
        streamed = replay_via_streams(text, stream_workers, b, start_workers=False)
    finally:
        _drop(stream_workers, a, b)
    assert streamed == direct


def test_a_dynamic_error_through_streams_names_its_line(stream_workers, tenant_name):
    """An approve the retraction worker refuses comes back as `line N: reason`, nothing kept."""
    from rescind.graph.store import TenantGraph, connect
    from rescind.scenario.format import ScenarioError

    text = APPROVE_WITHOUT_DRAFT
    with pytest.raises(ScenarioError, match="line 4: no recall for 'a': only executed "
                       "payments that went OUT have one$"):
        replay_via_streams(text, stream_workers, tenant_name, start_workers=False)
    assert not TenantGraph(connect(stream_workers), tenant_name).exists()
