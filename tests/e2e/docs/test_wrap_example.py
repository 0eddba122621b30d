"""docs/examples/wrap_my_agent.py, run as a user runs it: a process of its own beside a
FalkorDB server with workers, with the rescind.toml beside it. What it prints, and what the
graph holds afterwards: the exact premises of the note it wrote."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rescind.graph.store import TenantGraph, connect
from rescind.workers.app import WorkerSettings, WorkerThread
from tests.support.conformance import record
from tests.support.paths import ROOT

EXAMPLE = ROOT / "docs" / "examples" / "wrap_my_agent.py"
NOTE = ("A-1042 refunded in full (1,280.00 USD, tracking 1Z999AA10123456784); the customer is "
        "away until 2026-11-24")


@pytest.fixture(scope="module")
def workers(falkordb):
    """Writer, retraction and gate workers on the test server (what `rescind up` runs)."""
    with WorkerThread(WorkerSettings(url=falkordb, worker_id="wrap-example"),
                      ("writer", "retraction", "gate")):
        yield falkordb


def test_the_example_runs_as_written_and_its_note_rests_on_the_order_and_the_customer(
        workers, tenant_name, tmp_path):
    """The note uses the order's tracking number and the customer's date: one justification
    (rule matched) needing both the order system's observation and the user's message; the
    refund went through the gate and ran. No ConfigWarning: rescind.toml fits the graph."""
    tenant_name = f"{tenant_name}-shop"  # not created yet: the guide's step creates it
    env = {**os.environ, "RESCIND_TENANT": tenant_name, "COLUMNS": "200"}
    env.pop("RESCIND_URL", None)
    refused = subprocess.run([sys.executable, str(EXAMPLE), workers], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=180)
    assert refused.returncode == 1 and f"rescind tenant create {tenant_name}" in refused.stderr
    made = subprocess.run([sys.executable, "-m", "rescind.cli", "tenant", "create", tenant_name,
                           "--url", workers], env=env, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr  # as the guide says, before the agent runs
    res = subprocess.run([sys.executable, str(EXAMPLE), workers], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Warning" not in res.stderr, res.stderr
    out = res.stdout
    assert out.startswith(f"$ rescind explain notes/u-17/A-1042 --tenant {tenant_name}\n"
                          f"IN belief: {NOTE[:60]}")
    assert out.count("justification 1 (matched): needs all of") == 2  # the note, the refund
    assert "said by user:u-17 (trust domain user:u-17)" in out
    assert "said by orders:a-1042 (trust domain order-system)" in out  # names are canonical
    assert f"$ rescind explain refund:A-1042 --tenant {tenant_name}\nIN action: issue_refund(" \
        in out

    written = record(workers, tenant_name)
    assert written[NOTE] == ("IN", {frozenset({"user:u-17", "orders:a-1042"})})
    g = TenantGraph(connect(workers), tenant_name)
    assert g.rows("MATCH (m:Mem {kind: 'action'})-[st:STATUS]->() "
                  "RETURN st.status, m.executed, m.amount") == [
        ["IN", True, 1280.0]]
    assert set(written) == {NOTE, 'issue_refund({"amount": 1280.0, "order_id": "A-1042"})'}
