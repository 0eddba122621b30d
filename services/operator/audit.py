"""The audit log: who decided what, or was refused what, on what, through which surface, and
how it ended. The one owner of the log: the API, the MCP server, the CLI and the gate write it
here, and `GET /audit` and `rescind audit export` read it here.

Scopes. One log per tenant (``layout.audit_key(tenant)``) and one for the server
(``layout.audit_key(None)``: an unknown token, an admin refused outside a tenant).

Entries. A stream entry per decision (``result`` ok, error; allowed or blocked for the gate),
with who, role, token id, via (api, mcp, cli, stream, demo), action, target, HTTP status and a
detail: a JSON object (counts, amounts, why), read back as an object, with a sentence that says
it all (``summary``: ``rescind.operator.audit_text``). Its time is its stream id's (the
server's clock; shown to the second), so the log is in the order the server took the entries,
whichever process wrote them.

Refusals are counted. The first refusal of a principal, of one kind (action, status, surface),
in one minute of the server's clock, is an entry with ``count`` 1; the next ones in that minute
only add to its count (a hash beside the stream: ``layout.audit_counts_key``), in one Lua call
each. A flood of 10,000 refused requests from one token over two minutes leaves two entries,
and the decisions made meanwhile keep their own.

Archive, not trim. When the live stream holds more than ``max_live`` entries (plus a slack, so
that rotation runs in batches), the oldest are moved, ids and final counts kept, to a stream of
their month (``layout.audit_archive_key``), by a Lua script that adds and deletes in one step:
an entry is always in exactly one place. The archive lives on the same server as the graph,
in its AOF, under the tenant's hash tag; `rescind audit export` reads live and archive in order.
"""

from __future__ import annotations

import heapq
import json
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import redis

from rescind.contract import layout
from rescind.contract.errors import RescindError, http_status
from rescind.operator import audit_text
from rescind.transport import connection

log = logging.getLogger("rescind.audit")

OK, REFUSED, ERROR, ALLOWED, BLOCKED = "ok", "refused", "error", "allowed", "blocked"
MAX_DETAIL = audit_text.MAX_DETAIL
MAX_TEXT = 500  # who, target and the like
MOVE_BATCH = 1000  # entries one rotation call moves (the server is busy meanwhile)
CHUNK = 1000  # entries one read of the export takes from each stream
_SEP = "\x1f"

# A refusal: counted on the entry of its (minute, kind, principal), or the first of them. The
# minute is the server's (TIME), so every process counts alike; the minute's index key is built
# here, with KEYS[1]'s hash tag, so the script stays on one slot of a cluster.
_COUNT = """
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local index = ARGV[1] .. math.floor(ms / 60000)
local id = redis.call('HGET', index, ARGV[2])
if id and #redis.call('XRANGE', KEYS[1], id, id) > 0 then
  redis.call('HINCRBY', KEYS[2], id, 1)
  redis.call('HSET', KEYS[2], id .. ':last', ms)
  return {id, -1}
end
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
id = redis.call('XADD', KEYS[1], '*', unpack(fields))
redis.call('HSET', index, ARGV[2], id)
redis.call('EXPIRE', index, 180)
redis.call('HSET', KEYS[2], id, 1)
return {id, redis.call('XLEN', KEYS[1])}
"""

# Move the oldest live entries of one month (up to ARGV[1]) to its archive, with final counts.
_MOVE = """
local rows = redis.call('XRANGE', KEYS[1], '-', ARGV[1], 'COUNT', ARGV[2])
if #rows == 0 then return 0 end
local ids = {}
for _, row in ipairs(rows) do
  local id, f = row[1], row[2]
  local n = redis.call('HGET', KEYS[2], id)
  if n then
    local last = redis.call('HGET', KEYS[2], id .. ':last')
    local out = {}
    for i = 1, #f, 2 do
      if f[i] ~= 'count' and f[i] ~= 'last' then
        out[#out + 1] = f[i]
        out[#out + 1] = f[i + 1]
      end
    end
    out[#out + 1] = 'count'
    out[#out + 1] = n
    if last then
      out[#out + 1] = 'last'
      out[#out + 1] = last
    end
    f = out
    redis.call('HDEL', KEYS[2], id, id .. ':last')
  end
  redis.call('XADD', KEYS[3], id, unpack(f))
  ids[#ids + 1] = id
end
redis.call('XDEL', KEYS[1], unpack(ids))
redis.call('ZADD', KEYS[4], ARGV[3], KEYS[3])
return #rows
"""


@dataclass(frozen=True)
class Actor:
    """Who acts: a token's name and role (API, MCP), a person at the shell (CLI: ``--by`` or
    the OS user, role ``operator``), or the agents asking the gate."""

    who: str
    role: str
    token: str = ""
    via: str = "api"

    def key(self) -> str:
        return _SEP.join((self.via, self.who, self.role, self.token))


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text[:limit]


def _fields(actor: Actor, action: str, target: str | None, result: str, status: int,
            detail: Any) -> dict[str, str]:
    return {"who": _text(actor.who), "role": _text(actor.role), "token": _text(actor.token),
            "via": _text(actor.via), "action": _text(action), "target": _text(target),
            "result": result, "status": str(status), "detail": audit_text.stored(detail)}


def _idkey(entry_id: bytes | str) -> tuple[int, int]:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


def _iso(ms: int) -> str:
    return audit_text.moment(ms)


def month(ms: int) -> tuple[str, int, int]:
    """The UTC month holding ``ms``: its name (YYYY-MM), first ms and first ms of the next."""
    t = datetime.fromtimestamp(ms / 1000, UTC)
    start = datetime(t.year, t.month, 1, tzinfo=UTC)
    end = datetime(t.year + t.month // 12, t.month % 12 + 1, 1, tzinfo=UTC)
    return f"{t.year:04d}-{t.month:02d}", int(start.timestamp() * 1000), \
        int(end.timestamp() * 1000)


def to_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


class AuditLog:
    """Write, count, rotate and read the audit log on one server."""

    def __init__(self, conn: redis.Redis, max_live: int = layout.AUDIT_MAXLEN) -> None:
        if max_live < 1:
            raise ValueError("the live audit log must keep at least one entry")
        self.conn = conn
        self.max_live = max_live
        self.slack = max(1, min(MOVE_BATCH, max_live // 100))
        self._count = conn.register_script(_COUNT)
        self._move = conn.register_script(_MOVE)

    def _on(self, tenant: str | None) -> redis.Redis:
        """The client of the master that holds the scope's keys (they share its hash tag):
        transactions and scripts on them run there, as on one server."""
        return connection.node_for(self.conn, layout.audit_key(tenant))

    # -- writing ----------------------------------------------------------------------------
    def queue(self, pipe, tenant: str | None, actor: Actor, action: str, target: str | None,
              result: str, status: int = 200, detail: Any = None) -> None:
        """Add one entry to a pipeline the caller runs (the gate answers in the same round
        trip); pass what the pipeline's XLEN returned to ``settle``."""
        key = layout.audit_key(tenant)
        pipe.xadd(key, _fields(actor, action, target, result, status, detail))
        pipe.xlen(key)

    def record(self, tenant: str | None, actor: Actor, action: str, target: str | None,
               result: str = OK, status: int = 200, detail: Any = None) -> str:
        """One entry of its own (a decision, an error); its id."""
        pipe = self._on(tenant).pipeline(transaction=False)
        self.queue(pipe, tenant, actor, action, target, result, status, detail)
        entry_id, length = pipe.execute()
        self.settle(tenant, length)
        return entry_id.decode()

    def refused(self, tenant: str | None, actor: Actor, action: str, target: str | None,
                status: int, detail: Any = None) -> str:
        """A refusal, counted per principal, kind and minute; the id of the entry counting it."""
        fields = _fields(actor, action, target, REFUSED, status, detail)
        fields["count"] = "1"
        kind = _SEP.join((action, str(status), actor.key()))
        args = [layout.audit_refused_prefix(tenant), kind,
                *(x for kv in fields.items() for x in kv)]
        entry_id, length = self._count(
            keys=[layout.audit_key(tenant), layout.audit_counts_key(tenant)], args=args,
            client=self._on(tenant))
        self.settle(tenant, length)
        return entry_id.decode() if isinstance(entry_id, bytes) else entry_id

    def audited(self, tenant: str | None, actor: Actor, action: str, target: str | None,
                run: Callable[[], Any], summary: Callable[[Any], Any] | None = None,
                outcome: Callable[[Any], str] | None = None) -> Any:
        """Run a decision and log how it ended: ``outcome(result)`` (default ok) with
        ``summary(result)``; a refusal (an error of ``rescind.contract.errors`` below 500) is
        counted; anything else is an error entry. The exception goes on."""
        try:
            result = run()
        except RescindError as exc:
            status = http_status(exc)
            if status < 500:
                self.refused(tenant, actor, action, target, status, exc.message)
            else:
                self.record(tenant, actor, action, target, ERROR, status, exc.message)
            raise
        except Exception as exc:
            self.record(tenant, actor, action, target, ERROR, 500, type(exc).__name__)
            raise
        self.record(tenant, actor, action, target, outcome(result) if outcome else OK, 200,
                    summary(result) if summary else None)
        return result

    # -- rotating ---------------------------------------------------------------------------
    def settle(self, tenant: str | None, length: int) -> None:
        """Rotate when a write left the live log past its bound (and the slack); a rotation
        that fails leaves the entries live, and the next write tries again."""
        if length is None or length <= self.max_live + self.slack:
            return
        try:
            self.rotate(tenant)
        except redis.RedisError as exc:
            log.warning("audit rotation of %s failed (%s); the entries stay live",
                        tenant or layout.SERVER_SCOPE, exc)

    def rotate(self, tenant: str | None, keep: int | None = None) -> int:
        """Move the oldest live entries to their month's archive until ``keep`` (default
        ``max_live``) are left; how many moved."""
        keep = self.max_live if keep is None else keep
        live, conn = layout.audit_key(tenant), self._on(tenant)
        moved = 0
        while (excess := conn.xlen(live) - keep) > 0:
            first = conn.xrange(live, count=1)
            if not first:
                break
            period, start, end = month(_idkey(first[0][0])[0])
            n = self._move(keys=[live, layout.audit_counts_key(tenant),
                                 layout.audit_archive_key(tenant, period),
                                 layout.audit_archives_key(tenant)],
                           args=[str(end - 1), min(excess, MOVE_BATCH), start], client=conn)
            if not n:
                break
            moved += n
        return moved

    # -- reading ----------------------------------------------------------------------------
    def entries(self, tenant: str | None, limit: int = 100,
                before: str | None = None) -> list[dict]:
        """The newest ``limit`` entries, newest first (live, then the archive when the live
        log holds fewer), refusal counts as they stand; with ``before`` (an entry's id), the
        ``limit`` entries older than it: the next page."""
        conn = self._on(tenant)
        top = f"({before}" if before else "+"
        rows = conn.xrevrange(layout.audit_key(tenant), top, "-", count=limit)
        if len(rows) < limit:
            seen = {r[0] for r in rows}
            oldest = rows[-1][0].decode() if rows else before
            for key in conn.zrevrange(layout.audit_archives_key(tenant), 0, -1):
                if len(rows) >= limit:
                    break
                top = f"({oldest}" if oldest else "+"
                more = [r for r in conn.xrevrange(key, top, "-", count=limit - len(rows))
                        if r[0] not in seen]
                rows += more
                if more:
                    oldest = more[-1][0].decode()
        return self._shaped(tenant, rows)

    def total(self, tenant: str | None) -> int:
        """How many entries the scope holds, live and archived."""
        conn = self._on(tenant)
        archives = conn.zrange(layout.audit_archives_key(tenant), 0, -1)
        pipe = conn.pipeline(transaction=True)
        for key in [layout.audit_key(tenant), *archives]:
            pipe.xlen(key)
        return sum(pipe.execute())

    def export(self, tenants: Iterable[str | None] | None = None, since: datetime | None = None,
               until: datetime | None = None) -> Iterator[dict]:
        """Every entry of ``tenants`` (default: every scope on the server) from ``since`` to
        ``until`` (both included), archived and live, oldest first, each with its tenant
        (None: the server's)."""
        scopes = self.scopes() if tenants is None else list(tenants)
        start = str(to_ms(since)) if since else "-"
        end = str(to_ms(until)) if until else "+"
        def keyed(tenant: str | None) -> Iterator[tuple[tuple, dict]]:
            for e in self._scope(tenant, start, end):
                yield (_idkey(e["id"]), tenant or ""), e

        for _, entry in heapq.merge(*(keyed(t) for t in scopes), key=lambda pair: pair[0]):
            yield entry

    def scopes(self) -> list[str | None]:
        """Every scope with a live log or an archive on the server (the server's first)."""
        found: set[str | None] = set()
        for pattern in ("rescind:{*}:audit", "rescind:{*}:audit:archives"):
            for key in self.conn.scan_iter(match=pattern, count=1000):
                ok, tenant = layout.audit_scope_of(key.decode())
                if ok:
                    found.add(tenant)
        return sorted(found, key=lambda t: (t is not None, t or ""))

    def _scope(self, tenant: str | None, start: str, end: str) -> Iterator[dict]:
        """One scope's entries in id order, read a chunk at a time. Each chunk reads the live
        log and the archives in one transaction, so that a rotation running meanwhile can
        neither hide an entry nor show it twice."""
        live, index = layout.audit_key(tenant), layout.audit_archives_key(tenant)
        conn, cursor = self._on(tenant), start
        while True:
            known = conn.zrange(index, 0, -1, withscores=True)
            at = 0 if cursor in ("-", "+") else _idkey(cursor.lstrip("("))[0]
            archives = [k for k, first in known if month(int(first))[2] > at]
            pipe = conn.pipeline(transaction=True)
            pipe.zrange(index, 0, -1, withscores=True)
            for key in archives:
                pipe.xrange(key, cursor, end, count=CHUNK)
            pipe.xrange(live, cursor, end, count=CHUNK)
            now, *parts = pipe.execute()
            if [k for k, _ in now] != [k for k, _ in known]:  # a month's archive appeared
                continue  # meanwhile: read again, with it
            full = [p[-1][0] for p in parts if len(p) == CHUNK]
            rows = sorted((r for p in parts for r in p), key=lambda r: _idkey(r[0]))
            if full:
                bound = min(_idkey(i) for i in full)
                rows = [r for r in rows if _idkey(r[0]) <= bound]
            yield from self._shaped(tenant, rows)
            if not full or not rows:
                return
            cursor = f"({rows[-1][0].decode()}"

    def _shaped(self, tenant: str | None, rows: list) -> list[dict]:
        """Stream rows as dicts, with their time and the live count of counted refusals."""
        out = []
        for entry_id, raw in rows:
            e = {k.decode(): v.decode(errors="replace") for k, v in raw.items()}
            out.append({"id": entry_id.decode(), "tenant": tenant, **e})
        counting = [e["id"] for e in out if "count" in e]
        if counting:
            fields = [x for i in counting for x in (i, f"{i}:last")]
            values = self._on(tenant).hmget(layout.audit_counts_key(tenant), fields)
            live = dict(zip(fields, values, strict=True))
            for e in out:
                if "count" in e:
                    n, last = live.get(e["id"]), live.get(f"{e['id']}:last")
                    e["count"] = int(n) if n is not None else int(e["count"])
                    if last is not None:
                        e["last"] = last.decode()
        for e in out:
            e.setdefault("at", _iso(_idkey(e["id"])[0]))
            if "last" in e:
                e["last"] = _iso(int(e["last"]))
            e["detail"] = audit_text.parsed(e.get("detail"))
            e["summary"] = audit_text.sentence(e)
        return out
