"""Fixtures shared by integration tests of more than one package."""

from __future__ import annotations

import pytest

from rescind.workers.app import WorkerSettings, WorkerThread


@pytest.fixture(scope="module")
def rescind_workers(falkordb):
    """Writer, retraction and gate workers on the test server."""
    # With a reaper, as `rescind up` runs them: an entry an earlier module's workers were handed
    # as they stopped is claimed and finished, not left pending for every later wait.
    settings = WorkerSettings(url=falkordb, worker_id="intercept", reaper_idle_ms=2_000)
    with WorkerThread(settings, ("writer", "retraction", "gate", "reaper")):
        yield falkordb
