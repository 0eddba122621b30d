"""Property tests: the engine on a real FalkorDB agrees with the naive reference.

Every generated scenario is replayed by `rescind.scenario.replay.replay_text` into a fresh tenant and
by `tests.support.reference.run`; statuses, held actions, recalls, gate answers and fragility must be
equal. This is a sample of the randomised comparison (100 graphs and 40 operation sequences a
run): its volume, 1,000 graphs and 300 sequences, runs against the pure core
(test_core_volume.py), which the engine is built on. RESCIND_PROPERTY_EXAMPLES sets the number
of examples of each test (1000 for the old full budget on FalkorDB; `make test-cluster` runs
fewer).
"""

from __future__ import annotations

import contextlib
import itertools
import os

import pytest
import redis
from hypothesis import HealthCheck, given, note, settings

from rescind.transport import connection
from tests.support.reference import run
from tests.support.strategies import RATES, operation_sequences, scenario_graphs

_override = os.environ.get("RESCIND_PROPERTY_EXAMPLES")
GRAPH_EXAMPLES = int(_override or 100)
SEQUENCE_EXAMPLES = int(_override or 40)
_fresh = itertools.count()


def _settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


def comparable(report: dict) -> dict:
    """The part of a replay report that engine and reference must agree on."""
    return {
        "memories": {m: {"status": v["status"]} for m, v in report["memories"].items()},
        "held": list(report["held"]),
        "recalls": [{k: r.get(k) for k in ("action", "amount", "payee", "state")}
                    for r in report["recalls"]],
        "gates": [{k: g[k] for k in ("action", "allowed", "fragility", "aggregate", "line")}
                  for g in report["gates"]],
        "fragility": dict(report["fragility"]),
        "replaced": dict(report["replaced"]),
    }


def check_against_reference(text: str, url: str, tenant: str) -> None:
    from rescind.engine.gate import GatePolicy
    from rescind.scenario.replay import replay_text

    note(f"scenario ({tenant}):\n{text}")
    try:
        engine = comparable(replay_text(text, url=url, tenant=tenant,
                                        gate=GatePolicy(rates=RATES)))
    finally:
        with contextlib.suppress(redis.ResponseError):
            connection.connect(url).execute_command("GRAPH.DELETE", f"rescind:{{{tenant}}}")
    expected = run(text, RATES)
    for part in ("memories", "held", "recalls", "gates", "fragility", "replaced"):
        if engine[part] != expected[part]:
            if part == "memories":
                diff = {m: (engine[part].get(m), expected[part].get(m))
                        for m in set(engine[part]) | set(expected[part])
                        if engine[part].get(m) != expected[part].get(m)}
                note(f"memories differ (engine, reference): {diff}")
            else:
                note(f"{part}: engine    {engine[part]}\n{part}: reference {expected[part]}")
    assert engine == expected


@pytest.mark.timeout(7200)
@_settings(GRAPH_EXAMPLES)
@given(text=scenario_graphs())
def test_graphs_agree_with_reference(falkordb, tenant_name, text):
    """A random graph, one retraction and gates: the engine's report matches the reference."""
    check_against_reference(text, falkordb, f"{tenant_name}-{next(_fresh)}")


@pytest.mark.timeout(7200)
@_settings(SEQUENCE_EXAMPLES)
@given(text=operation_sequences())
def test_operation_sequences_agree_with_reference(falkordb, tenant_name, text):
    """Retract/withdraw/correct/reinstate/gate/execute/approve/update/delete in any order match
    the reference."""
    check_against_reference(text, falkordb, f"{tenant_name}-{next(_fresh)}")
