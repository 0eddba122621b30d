"""A thin Cypher client over redis-py: parameters sent as a CYPHER header, compact results.

FalkorDB takes query parameters as a ``CYPHER name=value ...`` prefix. Building that prefix and
reading the compact reply here (instead of in a general-purpose client) keeps the per-query
overhead near the round trip, which is what the retraction latency budget is made of.
Only scalars, lists and maps are read back; queries return properties, never nodes.
"""

from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass
from typing import Any

import redis

from rescind.transport.connection import Client, node_for

# Compact result value types (FalkorDB's ResultSet wire format).
_NULL, _STRING, _INTEGER, _BOOLEAN, _DOUBLE, _ARRAY, _EDGE, _NODE, _PATH, _MAP = range(1, 11)


class Plain(str):
    """A query whose every column is a string, an integer or null.

    FalkorDB's verbose reply carries such values bare, which redis-py reads faster than the
    compact reply's typed cells. Booleans, floats and lists would come back as text, so a Plain
    query never returns them. It is read on a connection that decodes replies
    (``text_client``): hiredis decodes the strings in C, and the rows arrive as they are
    returned (the time each saves: docs/performance.md).
    """


# Connection settings a decoding twin of a client copies; the rest are the pool's own objects.
_TWIN_KWARGS = ("host", "port", "db", "username", "password", "path", "socket_timeout",
                "socket_connect_timeout", "socket_keepalive", "health_check_interval",
                "client_name")
_TEXT_CLIENTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def text_client(conn: redis.Redis) -> redis.Redis:
    """The same server as ``conn``, through connections whose replies come back decoded."""
    client = _TEXT_CLIENTS.get(conn)
    if client is None:
        pool = conn.connection_pool
        kwargs = {k: v for k, v in pool.connection_kwargs.items()
                  if k in _TWIN_KWARGS or k.startswith("ssl")}
        client = redis.Redis(connection_pool=redis.ConnectionPool(
            connection_class=pool.connection_class, decode_responses=True, **kwargs))
        _TEXT_CLIENTS[conn] = client
    return client


class CypherError(RuntimeError):
    """FalkorDB refused a query; the message is the server's, the query is attached."""


class ConstraintViolation(CypherError):
    """A write would have broken a unique constraint; being atomic, it wrote nothing."""


def _str(v: str) -> str:
    if "\\" in v or '"' in v:
        v = v.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + v + '"'


def literal(value: Any) -> str:
    """A parameter value as Cypher text; strings escape backslash and double quote."""
    t = type(value)
    if t is str:
        return _str(value)
    if value is None:
        return "null"
    if t is bool:
        return "true" if value else "false"
    if t is int:
        return str(value)
    if t is float:
        return repr(value)
    if t is list or t is tuple:
        return "[" + ",".join([_str(v) if type(v) is str else str(v) if type(v) is int
                               else literal(v) for v in value]) + "]"
    if t is dict:  # keys are our own identifiers, never user data
        return _map(value)
    if isinstance(value, str):  # subclasses such as StrEnum
        return _str(str(value))
    if isinstance(value, (int, float)):
        return literal(value.real)
    raise TypeError(f"cannot send {t.__name__} as a query parameter")


def _map(value: dict) -> str:
    """A map literal. Batches send tens of thousands of small maps: strings and integers, most
    of the values, skip the general dispatch of ``literal``."""
    parts = []
    for k, v in value.items():
        t = type(v)
        if t is str:
            parts.append(k + ":" + _str(v))
        elif t is int:
            parts.append(f"{k}:{v}")
        else:
            parts.append(f"{k}:{literal(v)}")
    return "{" + ",".join(parts) + "}"


def header(params: dict[str, Any] | None) -> str:
    if not params:
        return ""
    return "CYPHER " + " ".join(f"{k}={literal(v)}" for k, v in params.items()) + " "


def _value(cell: list) -> Any:
    t, v = cell
    if t == _STRING:
        return v.decode()
    if t in (_INTEGER, _NULL):
        return v
    if t == _BOOLEAN:
        return v in (b"true", "true", 1, True)
    if t == _DOUBLE:
        return float(v)
    if t == _ARRAY:
        return [_value(c) for c in v]
    if t == _MAP:
        return {(v[i].decode() if isinstance(v[i], bytes) else v[i]): _value(v[i + 1])
                for i in range(0, len(v), 2)}
    raise CypherError(f"result type {t} is not read by this client: return properties instead")


@dataclass
class Result:
    rows: list[list]
    stats: dict[str, float]

    @property
    def properties_set(self) -> int:
        return int(self.stats.get("Properties set", 0))


def _parse(reply: list) -> Result:
    if len(reply) == 1:  # a query that returns nothing has only statistics
        return Result([], _stats(reply[0]))
    _header, rows, stats = reply
    # Strings, integers and nulls are most cells of a region walk: read them inline.
    return Result([[c[1].decode() if c[0] == _STRING else c[1] if c[0] <= _INTEGER else _value(c)
                    for c in row] for row in rows], _stats(stats))



def _parse_plain(reply: list) -> Result:
    if len(reply) == 1:
        return Result([], _stats(reply[0]))
    header, rows, stats = reply
    if header and type(header[0]) is bytes:  # read on a client that does not decode
        rows = [[c.decode() if type(c) is bytes else c for c in row] for row in rows]
    return Result(rows, _stats(stats))


def command(cypher: str, read_only: bool) -> tuple[str, tuple[str, ...]]:
    """The Redis command and trailing flags a query is sent with (see Plain)."""
    return ("GRAPH.RO_QUERY" if read_only else "GRAPH.QUERY",
            () if isinstance(cypher, Plain) else ("--compact",))


def parse(cypher: str, reply: list) -> Result:
    return _parse_plain(reply) if isinstance(cypher, Plain) else _parse(reply)


def _stats(lines: list) -> dict[str, float]:
    out = {}
    for line in lines:
        text = line.decode() if isinstance(line, bytes) else line
        name, _, value = text.partition(":")
        with contextlib.suppress(ValueError, IndexError):
            out[name.strip()] = float(value.strip().split()[0])
    return out


def _refused(exc: redis.ResponseError, cypher: str) -> CypherError:
    kind = ConstraintViolation if "unique constraint violation" in str(exc) else CypherError
    return kind(f"{exc} (in: {cypher.strip()[:120]})")


def client_for(conn: Client, cypher: str, key: str) -> redis.Redis:
    """The connection to send ``cypher`` on graph ``key`` by: on a cluster, to the master that
    owns the key; decoding replies for a Plain query."""
    conn = node_for(conn, key)
    return text_client(conn) if isinstance(cypher, Plain) else conn


def query(conn: Client, key: str, cypher: str, params: dict | None = None,
          read_only: bool = False) -> Result:
    conn = client_for(conn, cypher, key)
    name, flags = command(cypher, read_only)
    try:
        reply = conn.execute_command(name, key, header(params) + cypher, *flags)
    except redis.ResponseError as exc:
        raise _refused(exc, cypher) from exc
    return parse(cypher, reply)


@dataclass
class InFlight:
    """Queries sent on a connection of their own whose replies have not been read yet."""

    pool: redis.ConnectionPool
    connection: Any
    cyphers: tuple[str, ...]

    def results(self) -> list[Result]:
        replies, error = [], None
        try:
            for cypher in self.cyphers:  # every reply is read, so the connection is clean
                try:
                    replies.append(self.connection.read_response())  # disconnects on socket error
                except redis.ResponseError as exc:
                    error = error or _refused(exc, cypher)
                    replies.append(None)
        finally:
            self.pool.release(self.connection)
        if error is not None:
            raise error
        return [parse(c, r) for c, r in zip(self.cyphers, replies, strict=True)]

    def result(self) -> Result:
        return self.results()[0]


@dataclass(frozen=True)
class Prepared:
    """A write's full text (parameters header and query), built before it is to be sent."""

    cypher: str
    text: str


def prepare(cypher: str, params: dict | None = None) -> Prepared:
    return Prepared(cypher, header(params) + cypher)


def _send(conn: Client, key: str, texts: list[tuple[str, str]],
          read_only: bool) -> InFlight:
    if len({isinstance(cypher, Plain) for cypher, _ in texts}) > 1:
        raise ValueError("plain and compact queries are read on different connections")
    pool = client_for(conn, texts[0][0], key).connection_pool
    connection = pool.get_connection()
    try:  # in one write to the socket: a send each cost a system call and a wake-up each
        connection.send_packed_command(connection.pack_commands(
            [(name, key, text, *flags) for name, flags, text in
             ((*command(cypher, read_only), text) for cypher, text in texts)]))
    except BaseException:
        pool.release(connection)
        raise
    return InFlight(pool, connection, tuple(cypher for cypher, _ in texts))


def send(conn: redis.Redis, key: str, prepared: Prepared) -> InFlight:
    """Send a write and return at once: the server executes it while the caller works on.
    (A thread would do the same, but it fought the caller for the GIL to send and to read.)"""
    return _send(conn, key, [(prepared.cypher, prepared.text)], read_only=False)


def send_reads(conn: redis.Redis, key: str, queries: list[tuple[str, dict | None]]) -> InFlight:
    """Send reads (all plain or none) and return at once; FalkorDB runs queries from two
    connections on two threads, so they overlap with the caller's next query."""
    return _send(conn, key, [(c, header(p) + c) for c, p in queries], read_only=True)
