"""The payment gate's ledger: its aggregate and its decisions, kept in plain Redis keys that
the gate owns, beside the gate log (a FalkorDB graph, ``layout.gate_log_key``), on the
graph's server or on one of their own (``rescind.graph.gate_state``).

Why here and not in the gate log: a FalkorDB query waits for one of the server's query
threads, and under a stream of justified writes those are busy with the writer's queries
(and with the merges of the relations it adds to): the aggregate's read and the decision's
record, two queries on every payment's path, waited there for tens of milliseconds at p99. A
Lua script waits for no query thread.

What is kept (keys in ``rescind.contract.layout``, all under the tenant's hash tag):

- per normalised account and per normalised payee, the allowed decisions to it, each as
  ``[id, execution, amount]`` scored by when it was asked (``gate_allowed_key``); beside them
  a version per set (``gate_allowed_versions_key``), moved by every allowed decision added;
- every decision's record (the Gate node's properties, as JSON), until copied into the gate
  log (``gate_decisions_key``), and its id in ``gate_uncopied_key``: the truth until copied.

Two payments cannot both pass under the limit: ``aggregate`` returns each set's version with
its members, and ``record`` adds an allowed decision only if the versions it was judged on are
still current, in one script (so atomically); otherwise it adds nothing and returns the
aggregate as it is now, to be judged again (``rescind.engine.gate.record``). A refused
decision is recorded as it is (it adds nothing that another decision reads).

The rule that adds the members up (each execution once, at its largest amount) is
``rescind.core.gate_rule.already_allowed``; nothing here decides.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import redis

from rescind.contract.layout import (
    gate_allowed_key,
    gate_allowed_ready_key,
    gate_allowed_versions_key,
    gate_decisions_key,
    gate_uncopied_key,
)
from rescind.graph import gate_state
from rescind.transport.connection import run_script, script_sha

# KEYS: versions, then the sets. ARGV: since (µs). Returns, per set, its version and its
# members asked at or after ``since``.
_AGGREGATE = """
local out = {}
for i = 2, #KEYS do
  out[#out + 1] = redis.call('HGET', KEYS[1], KEYS[i]) or '0'
  out[#out + 1] = redis.call('ZRANGEBYSCORE', KEYS[i], ARGV[1], '+inf')
end
return out
"""

# KEYS: decisions, uncopied, versions, then the sets the decision counts in. ARGV: id, the
# record (JSON), at (µs), '1' if allowed, its member, since (µs: the window's start, for a
# stale reply), trim (µs: members asked before it are dropped), then the version each set was
# read at ('' : not checked). An allowed decision whose sets moved since is not kept: the reply
# is {0, version, members, ...} as _AGGREGATE's; else {1}.
_RECORD = """
local sets = #KEYS - 3
if ARGV[4] == '1' then
  local stale = false
  for i = 1, sets do
    local want = ARGV[7 + i]
    if want ~= '' and (redis.call('HGET', KEYS[3], KEYS[3 + i]) or '0') ~= want then
      stale = true
    end
  end
  if stale then
    local out = {0}
    for i = 1, sets do
      out[#out + 1] = redis.call('HGET', KEYS[3], KEYS[3 + i]) or '0'
      out[#out + 1] = redis.call('ZRANGEBYSCORE', KEYS[3 + i], ARGV[6], '+inf')
    end
    return out
  end
  for i = 1, sets do
    redis.call('ZADD', KEYS[3 + i], ARGV[3], ARGV[5])
    redis.call('HINCRBY', KEYS[3], KEYS[3 + i], 1)
    redis.call('ZREMRANGEBYSCORE', KEYS[3 + i], '-inf', '(' .. ARGV[7])
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return {1}
"""

# KEYS: decisions, uncopied. ARGV: ids copied into the gate log: no longer kept here.
_COPIED = """
for i = 1, #ARGV, 500 do
  local part = {unpack(ARGV, i, math.min(i + 499, #ARGV))}
  redis.call('ZREM', KEYS[2], unpack(part))
  redis.call('HDEL', KEYS[1], unpack(part))
end
return #ARGV
"""

@dataclass(frozen=True)
class Call:
    """One script call, to be sent beside others in one round trip (``run_beside``), and how
    its reply is read."""

    script: str
    keys: list[str]
    args: list
    parse: Callable[[object], object]


def run_beside(conn: redis.Redis, calls: list[Call]) -> list[object]:
    """Every call of ``calls`` in one round trip (a pipeline, not a transaction: each script
    is atomic on its own), their replies read."""
    conn = gate_state.of(conn)
    for attempt in (1, 2):
        pipe = conn.pipeline(transaction=False)
        for c in calls:
            pipe.evalsha(script_sha(conn, c.script), len(c.keys), *c.keys, *c.args)
        try:
            replies = pipe.execute()
        except redis.exceptions.NoScriptError:  # the server lost its scripts (a restart)
            if attempt == 2:
                raise
            for c in calls:
                script_sha(conn, c.script, reload=True)
            continue
        return [c.parse(r) for c, r in zip(calls, replies, strict=True)]
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class Aggregate:
    """What was allowed to an account and a payee since ``since``: ``rows`` as
    ``(by, execution, amount)`` (``rescind.core.gate_rule.Allowed``'s fields), and the version
    of each set they were read from (``versions``: set key -> version)."""

    since: int
    rows: tuple[tuple[str, str, float | None], ...]
    versions: dict[str, str]


def sets(tenant: str, account_key: str | None, payee_key: str | None
         ) -> list[tuple[str, str]]:
    """``(by, set key)`` of the aggregate's sets a decision to these keys reads and adds to."""
    return [(by, gate_allowed_key(tenant, by, k))
            for by, k in (("account", account_key), ("payee", payee_key)) if k]


def member(record_id: str, execution: str, amount: float | None) -> str:
    """One allowed decision as a member of the aggregate's sets."""
    return json.dumps([record_id, execution, None if amount is None else float(amount)])


def _parse(by_keys: Sequence[tuple[str, str]], flat: list, since: int) -> Aggregate:
    rows: list[tuple[str, str, float | None]] = []
    versions: dict[str, str] = {}
    for (by, key), version, members in zip(by_keys, flat[0::2], flat[1::2], strict=True):
        versions[key] = _text(version)
        for m in members:
            _id, execution, amount = json.loads(m)
            rows.append((by, execution, amount))
    return Aggregate(since, tuple(rows), versions)


def aggregate_call(tenant: str, account_key: str | None, payee_key: str | None,
                   since: int) -> Call:
    """The script call that reads what was allowed to ``account_key`` and to ``payee_key``
    asked at or after ``since`` (µs), with the versions a record checks: its reply is read
    as an ``Aggregate``. Sent beside the cone's read (``gate_facts.read_beside``)."""
    by_keys = sets(tenant, account_key, payee_key)
    return Call(_AGGREGATE, [gate_allowed_versions_key(tenant), *(k for _, k in by_keys)],
                [since], lambda flat: _parse(by_keys, flat, since))


def aggregate(conn: redis.Redis, tenant: str, account_key: str | None, payee_key: str | None,
              since: int) -> Aggregate:
    """``aggregate_call``, on its own."""
    if not account_key and not payee_key:
        return Aggregate(since, (), {})
    [agg] = run_beside(conn, [aggregate_call(tenant, account_key, payee_key, since)])
    return agg


def record(conn: redis.Redis, tenant: str, record_id: str, props: dict, allowed: bool,
           execution: str, amount: float | None, account_key: str | None,
           payee_key: str | None, judged_on: Aggregate | None, keep_us: int) -> Aggregate | None:
    """Keep one decision (``props``: the Gate node's properties, ``at`` among them) until it is
    copied into the gate log; an allowed one is added to its account's and payee's sets. If
    ``judged_on`` is given and either set moved since it was read, nothing is kept and the
    aggregate as it is now is returned (judge again, then record that); else None. Members
    asked ``keep_us`` before this one are dropped from its sets."""
    conn = gate_state.of(conn)
    by_keys = sets(tenant, account_key, payee_key) if allowed else []
    at = int(props["at"])
    since = judged_on.since if judged_on is not None else at - keep_us
    expected = [judged_on.versions.get(k, "0") if judged_on is not None else ""
                for _, k in by_keys]
    reply = run_script(conn, _RECORD, [gate_decisions_key(tenant), gate_uncopied_key(tenant),
                                 gate_allowed_versions_key(tenant), *(k for _, k in by_keys)],
                 [record_id, json.dumps(props), at, "1" if allowed else "0",
                  member(record_id, execution, amount), since, at - keep_us, *expected])
    if reply[0] == 1:
        return None
    return _parse(by_keys, reply[1:], since)


def pending(conn: redis.Redis, tenant: str, limit: int = 500) -> list[dict]:
    """Up to ``limit`` decisions not yet copied into the gate log, oldest first."""
    conn = gate_state.of(conn)
    ids = conn.zrange(gate_uncopied_key(tenant), 0, limit - 1)
    if not ids:
        return []
    bodies = conn.hmget(gate_decisions_key(tenant), ids)
    return [json.loads(b) for b in bodies if b is not None]


def copied(conn: redis.Redis, tenant: str, ids: list[str]) -> None:
    """``ids`` are in the gate log now: they are no longer kept here."""
    conn = gate_state.of(conn)
    if ids:
        run_script(conn, _COPIED, [gate_decisions_key(tenant), gate_uncopied_key(tenant)], ids)


def uncopied(conn: redis.Redis, tenant: str) -> int:
    """How many decisions are not yet in the gate log."""
    conn = gate_state.of(conn)
    return conn.zcard(gate_uncopied_key(tenant))


def seed(conn: redis.Redis, tenant: str, rows: Iterable[Sequence]) -> None:
    """Add allowed decisions read from the gate log (``id, execution, amount, at,
    account_key, payee_key``) to the aggregate, once, when it is first used: a member is
    added as the record would have (adding one again changes nothing)."""
    conn = gate_state.of(conn)
    pipe = conn.pipeline(transaction=False)
    for record_id, execution, amount, at, account_key, payee_key in rows:
        for _, key in sets(tenant, account_key, payee_key):
            pipe.zadd(key, {member(record_id, execution, amount): at})
            pipe.hincrby(gate_allowed_versions_key(tenant), key, 1)
    pipe.set(gate_allowed_ready_key(tenant), 1)
    pipe.execute()


def seeded(conn: redis.Redis, tenant: str) -> bool:
    """Whether the aggregate was seeded from the gate log (``seed``)."""
    conn = gate_state.of(conn)
    return bool(conn.exists(gate_allowed_ready_key(tenant)))


def forget(conn: redis.Redis, tenant: str) -> None:
    """The tenant's graph is gone: so are its gate's aggregate and uncopied decisions."""
    conn = gate_state.of(conn)
    versions = gate_allowed_versions_key(tenant)
    keys = [_text(k) for k in conn.hkeys(versions)]
    for i in range(0, len(keys), 500):
        conn.delete(*keys[i:i + 500])
    conn.delete(versions, gate_decisions_key(tenant), gate_uncopied_key(tenant),
                gate_allowed_ready_key(tenant))


def _text(x) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)
