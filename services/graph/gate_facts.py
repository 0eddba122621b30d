"""The payment gate's facts, kept beside the graph in plain Redis keys (on the graph's server,
or on one of their own: ``rescind.graph.gate_state``).

FalkorDB merges a relation's pending additions into it on the first read past
``DELTA_MAX_PENDING_CHANGES`` (long at a million memories: docs/performance.md), and a query
that needs the same matrix meanwhile waits: under a stream of writes that was the gate's p99.
So the gate reads a payment's cone here first, in one call (a Lua walk upstream of the
targets), and goes to the graph only when a fact is missing or no longer valid.

What is kept, per memory (``layout.gate_facts_key``): its row of ``queries.CONE`` (facts,
premises, groundings with each source's domain and kind), and an action's stored proposal (the
row of ``ACTIONS_IN``); beside them the active retractions (the rules). Each is written with the
*epoch* it was read under, and is valid only while the epoch is the same.

Exact, whatever writes: a fact is only ever kept from a graph read made after the tags were
taken (``Tags``), and is refused (``fill``) if anything that may change a fact already kept
happened in between.

- The writer's batches that only add memories (every new memory's own facts are new; the
  memories they rest on do not change: a cone looks upstream) change nothing kept; the writer
  keeps the new memories' facts after each batch (``rescind.engine.writes``).
- A batch that changes existing memories (a new reason or grounding for one, a status moved, a
  proposal's values) ``touch``-es them before it is sent and again once it landed: their facts
  are deleted, nothing is kept in between, and the fill guard moves, so that no read made
  before either can be kept; the writer then keeps their facts as read after it.
- Anything else that writes to the graph (a retraction, a reinstatement, a source's domain, a
  rename: ``TenantGraph.apply`` and every write query) runs inside ``mutating``: the epoch moves
  before it (every fact kept is invalid at once) and after it (a fill read meanwhile is
  refused), and while it runs nothing is kept. If its process dies in between, its mark expires
  and the next read moves the epoch again.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import redis

from rescind.contract.layout import gate_facts_busy_key, gate_facts_epoch_key, gate_facts_key
from rescind.graph import gate_ledger, gate_state
from rescind.graph.cone import Cone, add_row
from rescind.transport.connection import run_script

LIMIT = 5_000  # memories in one cone read here at most; a larger cone is read from the graph
BUSY_TTL_MS = 120_000  # a write that has not said it is done by then is taken as dead

# KEYS: facts, epoch, busy. ARGV: the row limit, '1' if the targets' proposals are wanted,
# the targets. Returns {1, rules, fact, ...} (the facts of the cone, targets first), or
# {0, m, f} (the tags a graph read should be kept under) when anything is missing or stale.
_READ = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZCOUNT', KEYS[3], '-inf', now) > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  redis.call('HINCRBY', KEYS[2], 'm', 1)
end
local tags = redis.call('HMGET', KEYS[2], 'm', 'f', 'rules')
local m, f = tags[1] or '0', tags[2] or '0'
local miss = {0, m, f}
local prefix = m .. '|'
local rules = tags[3]
if not rules or string.sub(rules, 1, #prefix) ~= prefix then return miss end
local out, seen, frontier = {1, string.sub(rules, #prefix + 1)}, {}, {}
for i = 3, #ARGV do
  if not seen[ARGV[i]] then seen[ARGV[i]] = true; frontier[#frontier + 1] = ARGV[i] end
end
local limit, n, first = tonumber(ARGV[1]), 0, true
while #frontier > 0 do
  n = n + #frontier
  if n > limit then return miss end
  local vals = redis.call('HMGET', KEYS[1], unpack(frontier))
  local nxt = {}
  for i = 1, #vals do
    local v = vals[i]
    if not v or string.sub(v, 1, #prefix) ~= prefix then return miss end
    local body = string.sub(v, #prefix + 1)
    local fact = cjson.decode(body)
    if first and ARGV[2] == '1' and fact[2] == cjson.null then return miss end
    out[#out + 1] = body
    for _, p in ipairs(fact[1][8]) do
      local pid = p[2]
      if pid ~= cjson.null and not seen[pid] then seen[pid] = true; nxt[#nxt + 1] = pid end
    end
  end
  frontier, first = nxt, false
end
return out
"""

# KEYS: facts, epoch, busy. ARGV: m, f (the tags taken before the graph was read), the rules
# ('' to keep them as they are), then id, fact pairs. Kept only if the tags are still current
# and no write that may change facts is running.
_FILL = """
local tags = redis.call('HMGET', KEYS[2], 'm', 'f')
if (tags[1] or '0') ~= ARGV[1] or (tags[2] or '0') ~= ARGV[2]
   or redis.call('ZCARD', KEYS[3]) > 0 then return 0 end
local prefix = ARGV[1] .. '|'
if ARGV[3] ~= '' then redis.call('HSET', KEYS[2], 'rules', prefix .. ARGV[3]) end
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], prefix .. ARGV[i + 1]) end
return 1
"""

# KEYS: facts, epoch, busy. ARGV: 'begin' or 'end', the write's token, its ttl in ms, then
# the memories whose facts it changes. Their facts go, the fill guard moves (a read made before
# now is not kept), and from 'begin' to 'end' nothing is kept. Returns the tags a read made
# after it is kept under.
_TOUCH = """
local f = redis.call('HINCRBY', KEYS[2], 'f', 1)
if ARGV[1] == 'begin' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[3]), ARGV[2])
else
  redis.call('ZREM', KEYS[3], ARGV[2])
end
for i = 4, #ARGV, 500 do
  redis.call('HDEL', KEYS[1], unpack(ARGV, i, math.min(i + 499, #ARGV)))
end
return {redis.call('HGET', KEYS[2], 'm') or '0', tostring(f)}
"""

# KEYS: epoch, busy. ARGV: 'begin' or 'end', the write's token, its ttl in ms.
_MUTATE = """
if ARGV[1] == 'begin' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[2])
  redis.call('HINCRBY', KEYS[1], 'm', 1)
else
  redis.call('HINCRBY', KEYS[1], 'm', 1)
  redis.call('ZREM', KEYS[2], ARGV[2])
end
return 1
"""

def _keys(tenant: str) -> list[str]:
    return [gate_facts_key(tenant), gate_facts_epoch_key(tenant), gate_facts_busy_key(tenant)]


@dataclass(frozen=True)
class Tags:
    """The epoch and fill guard taken before a graph read: what it is kept under."""

    m: str
    f: str


@dataclass
class Hit:
    """A cone read from the kept facts."""

    cone: Cone
    rules: list[list]  # the rows of ``queries.ACTIVE_RETRACTIONS``
    proposals: dict[str, dict]  # target -> its row of ``ACTIONS_IN`` (when asked for)


def read(conn: redis.Redis, tenant: str, targets: list[str], proposals: bool = False
         ) -> Hit | Tags:
    """The cone upstream of ``targets`` from the kept facts (with each target's stored
    proposal, if ``proposals``), or, if any fact is missing or stale, the tags under which a
    read of the graph made after this can be kept (``fill``)."""
    conn = gate_state.of(conn)
    return _parse_read(run_script(conn, _READ, _keys(tenant),
                            [LIMIT, "1" if proposals else "0", *targets]), targets)


def read_beside(conn: redis.Redis, tenant: str, targets: list[str], proposals: bool,
                beside: gate_ledger.Call) -> tuple[Hit | Tags, object]:
    """``read``, and the call ``beside`` it (the gate's aggregate), in one round trip."""
    got, other = gate_ledger.run_beside(conn, [
        gate_ledger.Call(_READ, _keys(tenant), [LIMIT, "1" if proposals else "0", *targets],
                         lambda reply: _parse_read(reply, targets)), beside])
    return got, other


def _parse_read(reply, targets: list[str]) -> Hit | Tags:
    if reply[0] == 0:
        return Tags(_text(reply[1]), _text(reply[2]))
    cone, ids = Cone(), set(targets)
    found: dict[str, dict] = {}
    for body in reply[2:]:
        row, proposal = json.loads(body)
        add_row(cone, row, {})
        if row[0] in ids and proposal is not None:
            found[row[0]] = proposal
    return Hit(cone, json.loads(reply[1]), found)


def tags(conn: redis.Redis, tenant: str) -> tuple[Tags, bool]:
    """The current tags: take them before a graph read whose facts are to be kept; and
    whether the rules kept are valid under them (if not, read them too)."""
    conn = gate_state.of(conn)
    m, f, rules = conn.hmget(gate_facts_epoch_key(tenant), "m", "f", "rules")
    at = Tags(_text(m) if m is not None else "0", _text(f) if f is not None else "0")
    return at, rules is not None and _text(rules).startswith(f"{at.m}|")


def fill(conn: redis.Redis, tenant: str, at: Tags, rows: Iterable[list],
         proposals: dict[str, dict] | None = None, rules: list[list] | None = None) -> bool:
    """Keep ``rows`` (of ``queries.CONE``), the ``proposals`` (action id -> its row of
    ``ACTIONS_IN``) and the ``rules``, all read from the graph after ``at`` was taken: refused
    (False) if anything that may change them happened since."""
    conn = gate_state.of(conn)
    proposals = proposals or {}
    args: list = [at.m, at.f, "" if rules is None else json.dumps(rules)]
    for row in rows:
        args += [row[0], json.dumps([row, proposals.get(row[0])])]
    if len(args) == 3 and rules is None:
        return True
    return bool(run_script(conn, _FILL, _keys(tenant), args))


def touch(conn: redis.Redis, tenant: str, ids: Iterable[str], token: str | None = None,
          ttl_ms: int = BUSY_TTL_MS) -> tuple[str, Tags]:
    """Before (``token`` None) and after (with the token it returned) a write that changes the
    facts of the memories ``ids``: theirs are deleted, nothing is kept in between, and no read
    made before either call is kept. Returns the token and the tags a read made after it is
    kept under. Should the call after never come, the token expires and every fact with it."""
    conn = gate_state.of(conn)
    phase, token = ("begin", uuid.uuid4().hex) if token is None else ("end", token)
    m, f = run_script(conn, _TOUCH, _keys(tenant), [phase, token, ttl_ms, *dict.fromkeys(ids)])
    return token, Tags(_text(m), _text(f))


@contextlib.contextmanager
def mutating(conn: redis.Redis, tenant: str, ttl_ms: int = BUSY_TTL_MS) -> Iterator[None]:
    """Around any write that may change facts not named in advance: every fact kept is
    invalid from the start, and none is kept until it is done."""
    conn = gate_state.of(conn)
    token, keys = uuid.uuid4().hex, _keys(tenant)[1:]
    run_script(conn, _MUTATE, keys, ["begin", token, ttl_ms])
    try:
        yield
    finally:
        run_script(conn, _MUTATE, keys, ["end", token, ttl_ms])


def forget(conn: redis.Redis, tenant: str) -> None:
    """The tenant's graph is gone: so are its facts, and the gate's ledger beside them
    (its aggregate and the decisions not yet copied into the gate log, which goes too)."""
    conn = gate_state.of(conn)
    gate_ledger.forget(conn, tenant)
    conn.delete(gate_facts_key(tenant))
    conn.hdel(gate_facts_epoch_key(tenant), "rules")
    conn.hincrby(gate_facts_epoch_key(tenant), "m", 1)


def _text(x) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)
