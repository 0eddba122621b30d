"""The gate's state (its kept facts and its ledger) on a server of its own
(``RESCIND_GATE_STATE_URL``, ``rescind.graph.gate_state``), away from the graph's, whose
lock FalkorDB holds while it commits a write: every key of it goes there and none to the
graph's server, and the gate's guarantees hold across the two servers. The never-stale and
ledger tests below are the same tests as beside the graph (imported, so run here again with
the gate's state on its own server)."""

from __future__ import annotations

import pytest
import redis

from rescind.core.operations import Retract
from rescind.engine import gate
from rescind.engine import retraction as ret
from rescind.graph import gate_state
from rescind.runtime.server import EmbeddedFalkorDB
from tests.integration.gate.test_kept_facts import (  # noqa: F401 - run here again
    _two_domains,
    test_a_compromise_takes_effect_on_the_next_decision_and_a_reinstatement_too,
    test_a_failed_call_is_refused_on_release_at_once,
    test_a_fill_read_before_a_write_is_not_kept,
    test_a_new_reason_for_a_kept_memory_counts_on_the_next_decision,
    test_a_write_that_never_ends_gives_every_fact_up,
)
from tests.integration.gate.test_ledger import (  # noqa: F401 - run here again
    test_a_decision_left_uncopied_by_a_dead_gate_is_copied_by_the_next,
    test_concurrent_payments_to_one_account_never_pass_the_limit_together,
)
from tests.support.gate_book import IBAN, Book


@pytest.fixture(scope="module")
def gate_server():
    """A second server of the same binary, for the gate's state alone."""
    with EmbeddedFalkorDB() as server:
        yield server.url


@pytest.fixture(autouse=True)
def _gate_state_there(gate_server, monkeypatch):
    monkeypatch.setenv(gate_state.ENV, gate_server)


def _gate_keys(url: str, tenant: str) -> set[str]:
    conn = redis.Redis.from_url(url)
    return {k.decode() for k in conn.scan_iter(match=f"*{{{tenant}}}:gate:*")
            if not k.decode().endswith(":gate:ready")}  # the log's mark: with the log


def test_the_gates_state_is_kept_on_its_own_server_and_none_beside_the_graph(
        falkordb, gate_server, tenant_name):
    """Writes kept for the gate, payments judged and recorded (allowed and refused), a
    compromise: the facts, the epoch, the aggregate and the decisions are on the gate's
    server, none on the graph's; the decisions still reach the gate log (in the graph's)."""
    b = Book(falkordb, tenant_name)
    note = _two_domains(b)[2]
    assert b.ask("first", (note,), 4000, IBAN, "acme").allowed
    kept = gate.READS["kept"]
    d = b.ask("again", (note,), 4000, IBAN, "acme")
    assert d.allowed and d.fragility == 2 and gate.READS["kept"] == kept + 1  # from there
    ret.commit(b.g, ret.preview(b.g, Retract("source", "portal:acme")))
    refused = b.ask("after", (note,), 4000, IBAN, "acme")
    assert not refused.allowed and refused.fragility == 1

    there = {k.rsplit(":gate:", 1)[1].split(":")[0] for k in _gate_keys(gate_server,
                                                                         tenant_name)}
    assert there == {"facts", "epoch", "allowed", "decisions", "uncopied"}
    assert _gate_keys(falkordb, tenant_name) == set()
    assert {x["name"] for x in gate.decisions_log(b.g)} == {"first", "again", "after"}
    b.g.delete()  # its facts and ledger go; the epoch stays, moved (a racing read is refused)
    assert {k.rsplit(":gate:", 1)[1] for k in _gate_keys(gate_server, tenant_name)} == {"epoch"}
    assert _gate_keys(falkordb, tenant_name) == set()


def test_without_a_gate_server_the_state_stays_beside_the_graph(falkordb, tenant_name,
                                                                monkeypatch):
    """No ``RESCIND_GATE_STATE_URL``: the gate's state is kept on the graph's server."""
    monkeypatch.delenv(gate_state.ENV)
    b = Book(falkordb, tenant_name)
    note = _two_domains(b)[2]
    assert b.ask("first", (note,), 4000, IBAN, "acme").allowed
    assert any(k.endswith(":gate:facts") for k in _gate_keys(falkordb, tenant_name))
    assert gate_state.of(b.g.conn) is b.g.conn
    b.g.delete()
