"""With no writer applying what an agent published, the gate waits its bound and refuses,
saying what it waited for. A module of its own: the other gate modules run a writer for the
whole module (tests/integration/conftest.py ``rescind_workers``)."""

from __future__ import annotations

import pytest

from rescind.middleware import GateRefused
from rescind.workers.app import WorkerSettings, WorkerThread
from tests.integration.gate.test_judged_on_what_it_saw import PAID, _pay_once


def test_what_is_not_applied_in_time_is_refused_with_the_reason(falkordb, tenant_name):
    """With no writer at all, the gate waits its bound and refuses, saying what it waited for
    (never judging on a graph that lacks what the agent read)."""
    PAID.clear()
    gate = WorkerSettings(url=falkordb, worker_id="lonely-gate", applied_wait_s=0.5)
    with WorkerThread(gate, ("gate",)), pytest.raises(GateRefused, match="not applied yet"):
        _pay_once(falkordb, tenant_name)
    assert PAID == []
