"""Fixtures shared by integration tests of more than one package."""

from __future__ import annotations

import pytest

from rescind.workers.app import WorkerSettings, WorkerThread


@pytest.fixture(scope="module")
def rescind_workers(falkordb):
    """Writer, retraction and gate workers on the test server."""
    settings = WorkerSettings(url=falkordb, worker_id="intercept")
    with WorkerThread(settings, ("writer", "retraction", "gate")):
        yield falkordb
