"""The Redis layout: every key, stream and consumer-group name, the entry envelope, the defaults.

This module is the layout's reference, and the only place that spells a name. It does no I/O and
sits in ``rescind.contract``, so the agents' side (``rescind.middleware``) and the services build
the same names from the same code. The helpers that act on these names (declaring groups,
dead-lettering, publishing statuses) are in ``rescind.transport.streams``.

Hash tag: on a Redis cluster a key's slot is the hash of what stands between its first ``{`` and
``}``. Every per-tenant key carries the tag ``{tenant}``, so a tenant's graph, its locks, its token
index, its audit log and its status stream share one shard. A tenant name is checked before it
reaches any key: 1 to 64 characters from ``a-z 0-9 _ -`` (BadTenantName otherwise).

Keys of one tenant ``t``
    ``rescind:{t}``                 the tenant's graph (FalkorDB; listed by GRAPH.LIST)
    ``rescind:{t}:lock:<purpose>``  string: a lock with a TTL; ``write`` (progress under heavy
                                    contention) or ``schema`` (creating the indexes)
    ``rescind:{t}:api:tokens``      hash: token id -> SHA-256 of each of the tenant's tokens
    ``rescind:{t}:audit``           stream: the live audit log: every decision and refusal from
                                    the API, MCP, the CLI and the gate (``rescind.operator.audit``);
                                    past ``AUDIT_MAXLEN`` entries the oldest are rotated out
    ``rescind:{t}:audit:counts``    hash: ``<entry id>`` -> refusals counted on that live entry
                                    (and ``<entry id>:last`` -> ms of the latest)
    ``rescind:{t}:audit:refused:<minute>``  hash: ``<kind> <principal>`` -> the live entry that
                                    counts that principal's refusals of that kind in that minute
                                    (epoch minutes; expires after three)
    ``rescind:{t}:audit:archive:<YYYY-MM>``  stream: entries rotated out of the live log, with
                                    their ids and final counts, one stream per month (UTC)
    ``rescind:{t}:audit:archives``  sorted set: the archive streams, scored by their month's first ms
    ``rescind:{t}:replicated``      string: written before WAIT, to learn that a replica has the
                                    tenant's writes (only on a cluster with replicas)
    ``rescind:{t}:gate:facts``      hash: memory id -> ``<epoch>|<JSON>``: what the payment gate
                                    reads of it, kept by the writer (``rescind.graph.gate_facts``)
    ``rescind:{t}:gate:epoch``      hash: ``m`` (the facts' epoch), ``f`` (the fill guard),
                                    ``rules`` (the active retractions, as the facts)
    ``rescind:{t}:gate:busy``       sorted set: writes in progress that may change any facts,
                                    scored by when they are given up (epoch ms)
    ``rescind:{t}:gate:decisions``  hash: decision id -> JSON: the gate's decisions not yet
                                    copied into its log (``rescind.graph.gate_ledger``)
    ``rescind:{t}:gate:uncopied``   sorted set: those decisions' ids, scored by when asked (µs)
    ``rescind:{t}:gate:allowed:<by>:<key>``  sorted set: the allowed decisions to one
                                    normalised account (by ``account``) or payee (``payee``),
                                    ``[id, execution, amount]`` scored by when asked (µs): the
                                    aggregate, read and added to atomically with each record
    ``rescind:{t}:gate:allowed``    hash: each such set's key -> its version (moved by every
                                    allowed decision added to it; also lists the sets)
    ``rescind:{t}:gate:allowed:ready``  string: set once the aggregate holds what the gate log
                                    held when it was first used
    ``rescind:{t}:status``          stream: StatusChanged events of the tenant, for its agents'
                                    caches (capped near ``STATUS_MAXLEN``); a cache starts from
                                    a snapshot of the graph's OUT set and follows from there

Keys of the whole server
    ``rescind:{@server}:audit``     the audit of what belongs to no tenant (unknown tokens, an
                                    admin's refusals outside a tenant), with the same companion
                                    keys as a tenant's (``@`` is never in a tenant's name)
    ``rescind:api:token:<sha256>``  hash: one token's record (tenant, role, who); found by the
                                    token's SHA-256, never by the token
    ``rescind:api:admin-tokens``    hash: token id -> SHA-256 of each admin token
    ``rescind:api:tenants``         hash: tenant -> JSON ``{created_at, created_by}``: the
                                    tenants that exist (``rescind.graph.tenants``); the writer
                                    dead-letters the events of any other
    ``rescind:tenants:adopted``     string: when graphs older than that registry were registered

Streams (shared by all tenants: the subscribers stay static while tenants come and go)
    ``rescind:events:<p>``          p in 0..N-1: every event of the tenants with
                                    crc32(tenant) mod N = p, in publish order; N bounds the
                                    parallelism of each group (``PARTITIONS`` by default)
    ``rescind:gate``                GateAsked requests
    ``rescind:gate:reply:<id>``     list: the GateAnswered to one request (expires in a minute)
    ``{rescind:events:<p>}:replicated``  string: as the tenant's, for a partition stream
    ``rescind:writer:waiting``      hash: ``<tenant> <memory id>`` -> epoch seconds since a write
                                    waits for that premise (cleared when it lands or is given up)
    ``rescind:dead``                entries that cannot be applied: fields ``stream``, ``id``,
                                    ``group``, ``reason`` and ``body`` (cut at ``MAX_ENTRY_BYTES``)

Consumer groups
    ``rescind-writer``              on every events stream: the justified writes
    ``rescind-retraction``          on every events stream: security and finance decisions (each
                                    group skips the other's event types)
    ``rescind-gate``                on ``rescind:gate``

Envelope: an entry of ``rescind:events:<p>``, ``rescind:gate`` or ``rescind:{t}:status`` has one
field, ``__data__``, holding ``{"data": "<the event's JSON>", "headers": {"traceparent": ...}}``:
the envelope FastStream's parser reads, headers included, so a trace continues in the workers.
``encode`` builds it and ``decode`` reads it; anything else is ``Invalid``, with what is wrong.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

import orjson

from rescind.contract.errors import BadTenantName, Invalid

if TYPE_CHECKING:
    from rescind.contract.events import Event

# -- defaults: the one home of each; runtime settings and the middleware's config read them ------
PARTITIONS = 4  # events streams; agents, API and workers must agree (RESCIND_PARTITIONS)
# A payment above GATE_THRESHOLD runs only if faking it takes GATE_MIN_DOMAINS trust domains
# (RESCIND_GATE_THRESHOLD, RESCIND_GATE_MIN_DOMAINS).
GATE_THRESHOLD = 10_000.0
GATE_MIN_DOMAINS = 2
MAX_ENTRY_BYTES = 256 * 1024  # larger entries are dead-lettered unread
STATUS_MAXLEN = 100_000  # per tenant
AUDIT_MAXLEN = 100_000  # live audit entries per tenant; older ones are archived, never dropped

# -- tenants ---------------------------------------------------------------------------------
TENANT_RE = re.compile(r"[a-z0-9_-]{1,64}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def check_tenant(name: str) -> str:
    """``name`` itself when it may reach a key; BadTenantName otherwise."""
    if not isinstance(name, str) or not TENANT_RE.fullmatch(name):
        raise BadTenantName(
            f"bad tenant name {name!r}: use 1 to 64 characters from a-z, 0-9, '_' and '-'"
        )
    return name


def _tagged(tenant: str) -> str:
    return f"rescind:{{{check_tenant(tenant)}}}"


# -- keys of one tenant ----------------------------------------------------------------------
def graph_key(tenant: str) -> str:
    return _tagged(tenant)


def tenant_of_graph(key: str) -> str | None:
    """The tenant whose graph ``key`` is, or None for any other graph on the server."""
    if key.startswith("rescind:{") and key.endswith("}"):
        name = key[len("rescind:{"):-1]
        if TENANT_RE.fullmatch(name):
            return name
    return None


def lock_key(tenant: str, purpose: str = "write") -> str:
    return f"{_tagged(tenant)}:lock:{purpose}"


def tenant_tokens_key(tenant: str) -> str:
    return f"{_tagged(tenant)}:api:tokens"


def gate_log_key(tenant: str) -> str:
    """The graph of the tenant's gate decisions (its Gate nodes, ``rescind.engine.gate``),
    beside the tenant's graph: a decision's record never queues behind the writer's batches,
    nor does its aggregate read the relations they change. Under the tenant's hash tag."""
    return f"{_tagged(tenant)}:gate"


def gate_log_ready_key(tenant: str) -> str:
    """Set once the gate log has its indexes and the decisions kept in the tenant's graph
    before it existed."""
    return f"{_tagged(tenant)}:gate:ready"


def gate_facts_key(tenant: str) -> str:
    """What the payment gate reads of each memory, kept beside the graph (``rescind.graph.
    gate_facts``): read in one call, never waiting for the graph's matrices."""
    return f"{_tagged(tenant)}:gate:facts"


def gate_facts_epoch_key(tenant: str) -> str:
    """The gate facts' epoch (a fact is valid only under the epoch it was kept in), their fill
    guard and the active retractions."""
    return f"{_tagged(tenant)}:gate:epoch"


def gate_facts_busy_key(tenant: str) -> str:
    """The writes in progress that may change any of the gate's facts."""
    return f"{_tagged(tenant)}:gate:busy"


def gate_decisions_key(tenant: str) -> str:
    """The gate's decisions not yet copied into its log (``rescind.graph.gate_ledger``): the
    truth until copied."""
    return f"{_tagged(tenant)}:gate:decisions"


def gate_uncopied_key(tenant: str) -> str:
    """The ids of the gate's decisions not yet copied into its log, by when they were asked."""
    return f"{_tagged(tenant)}:gate:uncopied"


def gate_allowed_key(tenant: str, by: str, key: str) -> str:
    """What the gate allowed to one normalised account (``by`` "account") or payee
    (``"payee"``), by when: the aggregate the gate reads and adds to in one script."""
    if by not in ("account", "payee"):
        raise Invalid(f"the gate's aggregate is by account or payee, not {by!r}")
    return f"{_tagged(tenant)}:gate:allowed:{by}:{key}"


def gate_allowed_versions_key(tenant: str) -> str:
    """Each of the tenant's ``gate_allowed_key`` sets -> its version (every allowed decision
    added to it moves it): what a decision's record checks it was judged on."""
    return f"{_tagged(tenant)}:gate:allowed"


def gate_allowed_ready_key(tenant: str) -> str:
    """Set once the aggregate holds the allowed decisions the gate log held before it."""
    return f"{_tagged(tenant)}:gate:allowed:ready"


def tenant_settings_key(tenant: str) -> str:
    """The tenant's settings (a hash: what its bank files say of it, ``rescind.graph.
    tenant_settings``); under its hash tag, so it moves with the tenant."""
    return f"{_tagged(tenant)}:settings"


SERVER_SCOPE = "@server"  # the audit scope of what belongs to no tenant


def audit_key(tenant: str | None) -> str:
    """The live audit log of ``tenant``, or of the whole server (None)."""
    tag = f"rescind:{{{SERVER_SCOPE}}}" if tenant is None else _tagged(tenant)
    return f"{tag}:audit"


def audit_counts_key(tenant: str | None) -> str:
    return f"{audit_key(tenant)}:counts"


def audit_refused_prefix(tenant: str | None) -> str:
    """Followed by an epoch minute: that minute's refusal index."""
    return f"{audit_key(tenant)}:refused:"


def audit_archive_key(tenant: str | None, period: str) -> str:
    """One month's archive (``period`` as YYYY-MM, UTC)."""
    if not re.fullmatch(r"\d{4}-\d{2}", period):
        raise Invalid(f"an audit period is YYYY-MM, not {period!r}")
    return f"{audit_key(tenant)}:archive:{period}"


def audit_archives_key(tenant: str | None) -> str:
    return f"{audit_key(tenant)}:archives"


def audit_scope_of(key: str) -> tuple[bool, str | None]:
    """(True, tenant or None for the server) when ``key`` is a live audit log or an archive
    index, else (False, None)."""
    for suffix in (":audit", ":audit:archives"):
        if key.startswith("rescind:{") and key.endswith("}" + suffix):
            name = key[len("rescind:{"):-len("}" + suffix)]
            if name == SERVER_SCOPE:
                return True, None
            if TENANT_RE.fullmatch(name):
                return True, name
    return False, None


def status_stream(tenant: str) -> str:
    return f"{_tagged(tenant)}:status"


# -- keys of the whole server ----------------------------------------------------------------
def token_key(digest: str) -> str:
    if not _SHA256.fullmatch(digest):
        raise Invalid("a token key needs a SHA-256 hex digest")
    return f"rescind:api:token:{digest}"


ADMIN_TOKENS = "rescind:api:admin-tokens"
TENANTS = "rescind:api:tenants"
TENANTS_ADOPTED = "rescind:tenants:adopted"

# -- streams and groups ----------------------------------------------------------------------
EVENT_STREAM = "rescind:events:{partition}"
GATE = "rescind:gate"
DEAD = "rescind:dead"
WAITING = "rescind:writer:waiting"  # hash: "<tenant> <premise id>" -> when a write began to wait
WRITER_GROUP = "rescind-writer"
RETRACTION_GROUP = "rescind-retraction"
GROUPS = (WRITER_GROUP, RETRACTION_GROUP)  # on every events stream
GATE_GROUP = "rescind-gate"


def event_stream(partition: int) -> str:
    return EVENT_STREAM.format(partition=partition)


def event_streams(partitions: int = PARTITIONS) -> list[str]:
    return [event_stream(p) for p in range(partitions)]


def partition_of(tenant: str, partitions: int = PARTITIONS) -> int:
    return zlib.crc32(tenant.encode()) % partitions


def tenant_stream(tenant: str, partitions: int = PARTITIONS) -> str:
    """The events stream that carries every event of ``tenant``."""
    return event_stream(partition_of(tenant, partitions))


def gate_reply_key(request: str) -> str:
    return f"{GATE}:reply:{request}"


def replication_marker(key: str) -> str:
    """A key in ``key``'s slot, written to learn when a replica has what was written to ``key``
    before it (``rescind.transport.connection.replicated``): ``key`` plus ``:replicated`` when
    it carries a hash tag already, else ``{key}:replicated``."""
    start = key.find("{")
    tagged = start >= 0 and key.find("}", start + 2) > start
    return f"{key}:replicated" if tagged else f"{{{key}}}:replicated"


# -- the envelope ----------------------------------------------------------------------------
DATA = "__data__"
_DATA_B = DATA.encode()


class Envelope(NamedTuple):
    """What one stream entry carries: the event's own JSON text and the trace headers."""

    data: str
    headers: dict[str, str]

    def event(self) -> dict:
        """The event's JSON object, unvalidated (``events.EVENT`` validates it)."""
        try:
            value = orjson.loads(self.data)
        except orjson.JSONDecodeError:
            raise Invalid("malformed envelope: its data is not JSON") from None
        if not isinstance(value, dict):
            raise Invalid("malformed envelope: its data is not a JSON object")
        return value


def encode(data: str, headers: Mapping[str, str] | None = None) -> dict[str, str]:
    """The fields of one stream entry carrying ``data`` (an event's JSON text)."""
    return {DATA: orjson.dumps({"data": data, "headers": dict(headers or {})}).decode()}


def trace_headers(event: Event) -> dict[str, str]:
    """The W3C trace context an event carries, as envelope headers."""
    return {k: v for k, v in (("traceparent", event.traceparent),
                              ("tracestate", event.tracestate)) if v}


def encode_event(event: Event) -> dict[str, str]:
    """The fields of one stream entry carrying ``event``, with its trace context as headers."""
    return encode(event.model_dump_json(by_alias=True), trace_headers(event))


def decode(fields: Mapping) -> Envelope:
    """The envelope of one stream entry (keys and values as bytes or str); Invalid, saying what
    is wrong, for an entry that is not one."""
    raw = fields.get(_DATA_B)
    if raw is None:
        raw = fields.get(DATA)
    if raw is None:
        raise Invalid(f"malformed entry: no {DATA} field (fields: "
                      f"{', '.join(sorted(_text(k) for k in fields)) or 'none'})")
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise Invalid(f"malformed envelope: {DATA} is not JSON") from None
    if not isinstance(value, dict) or not isinstance(value.get("data"), str):
        raise Invalid(f"malformed envelope: {DATA} must be an object whose data is a string")
    headers = value.get("headers") or {}
    if not isinstance(headers, dict):
        raise Invalid("malformed envelope: headers must map names to strings")
    for v in headers.values():
        if not isinstance(v, str):
            raise Invalid("malformed envelope: headers must map names to strings")
    return Envelope(value["data"], headers)


def _text(value: object) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
