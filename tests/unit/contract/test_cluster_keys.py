"""On a Redis Cluster a command, a transaction or a script may touch keys of one slot only.
Every key the layout builds for a tenant hashes to the tenant's slot; the event streams are
spread over the masters of an evenly split cluster."""

import inspect

import pytest
from redis.cluster import RedisCluster, key_slot

from rescind.contract import layout
from rescind.transport.connection import pipeline

TENANTS = ["acme", "globex", "t123-0", "a_b", "z" * 64]


def tenant_key_builders() -> list:
    """Every function of the layout whose first parameter is a tenant and that builds a key."""
    found = []
    for name, fn in inspect.getmembers(layout, inspect.isfunction):
        params = list(inspect.signature(fn).parameters)
        if params and params[0] == "tenant" and fn.__module__ == layout.__name__ \
                and name not in {"check_tenant", "partition_of", "tenant_stream"}:
            found.append(fn)
    return found


# A value for each further parameter a key builder takes (any new one fails here until named).
_ARGS = {"period": "2026-11", "by": "account", "key": "GB33BUKB20201555555555"}


def built(fn, tenant: str | None) -> str:
    params = [n for n, p in list(inspect.signature(fn).parameters.items())[1:]
              if p.default is inspect.Parameter.empty]
    return fn(tenant, **{p: _ARGS[p] for p in params})


def test_the_layout_builds_every_kind_of_tenant_key_checked_here():
    names = {fn.__name__ for fn in tenant_key_builders()}
    assert names >= {"graph_key", "lock_key", "tenant_tokens_key", "audit_key",
                     "audit_counts_key", "audit_refused_prefix", "audit_archive_key",
                     "audit_archives_key", "status_stream"}


@pytest.mark.parametrize("tenant", TENANTS)
def test_every_key_of_a_tenant_hashes_to_the_tenants_slot(tenant):
    slot = key_slot(f"{{{tenant}}}".encode())
    for fn in tenant_key_builders():
        key = built(fn, tenant)
        if fn is layout.audit_refused_prefix:
            key += "29000000"  # followed by an epoch minute
        assert key_slot(key.encode()) == slot, (fn.__name__, key)


def test_the_servers_own_audit_keys_share_one_slot():
    keys = [built(fn, None) for fn in tenant_key_builders() if fn.__name__.startswith("audit_")]
    assert len(keys) >= 4 and len({key_slot(k.encode()) for k in keys}) == 1


def test_the_event_streams_spread_over_the_masters_of_an_evenly_split_cluster():
    """With the slots split evenly over three masters, the four default partitions are on
    every master (one holds two): each master's workers have a share of the events."""
    masters = {key_slot(s.encode()) * 3 // 16_384 for s in layout.event_streams()}
    assert masters == {0, 1, 2}


def test_a_transaction_over_keys_of_several_slots_is_not_asked_of_a_cluster():
    """``connection.pipeline`` gives a transaction on one server, and a plain pipeline on a
    cluster when the keys are on several slots (the caller orders its commands for that)."""

    class FakeCluster(RedisCluster):
        def __init__(self):  # no connection: only the choice is under test
            pass

        def pipeline(self, transaction=None, shard_hint=None):
            return transaction

    single = type("Single", (), {"pipeline": lambda self, transaction: transaction})()
    tagged = [layout.audit_key("acme"), layout.status_stream("acme")]
    assert pipeline(single, layout.GATE, layout.audit_key("acme")) is True
    assert pipeline(FakeCluster(), *tagged) is True
    assert pipeline(FakeCluster(), layout.GATE, layout.audit_key("acme")) is False
