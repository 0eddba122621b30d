"""One way to reach FalkorDB: a single server or a Redis Cluster, told apart by asking it.

On a cluster each key lives on the master that owns its slot. Commands on one key go through
redis-py's ``RedisCluster``, which routes them by key (and follows MOVED). A tenant's graph
work goes straight to the master that owns ``{tenant}`` (``node_for``), through a plain
client, so the Cypher client's pipelines and in-flight sends work there as on one server: every
key of a tenant carries the tag, so all of them are on that master. Keyless commands
(``GRAPH.LIST``) ask every master (``primaries``). Commands on keys of different slots are
never sent as one transaction (``pipeline``).
"""

from __future__ import annotations

import os
import time
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.cluster import RedisCluster, key_slot

from rescind.contract import layout

Client = redis.Redis | RedisCluster

_MODES: dict[str, bool] = {}  # url -> whether it is a cluster, once a server said so


def is_cluster(url: str, wait_s: float = 2.0) -> bool:
    """Whether the server at ``url`` is a node of a Redis Cluster (``redis_mode:cluster``).
    A server that does not answer in ``wait_s`` counts as a single one, and is asked again
    next time."""
    if url not in _MODES:
        try:
            with redis.Redis.from_url(url, socket_connect_timeout=wait_s,
                                      socket_timeout=wait_s + 3.0) as c:
                _MODES[url] = c.info("server").get("redis_mode") == "cluster"
        except redis.RedisError:
            return False
    return _MODES[url]


def connect(url: str, **options) -> Client:
    """A client of the server, or of the cluster the server at ``url`` belongs to."""
    if is_cluster(url, options.get("socket_connect_timeout") or 2.0):
        return RedisCluster.from_url(url, **options)
    return redis.Redis.from_url(url, **options)


def clustered(conn: Client) -> bool:
    return isinstance(conn, RedisCluster)


def node_for(conn: Client, key: str) -> redis.Redis:
    """The client of the master that owns ``key`` (``conn`` itself on one server)."""
    if isinstance(conn, RedisCluster):
        return conn.get_node_from_key(key).redis_connection
    return conn


def redirection(exc: BaseException | None) -> redis.exceptions.ResponseError | None:
    """The cluster's redirection behind ``exc``, or None: MOVED (the slot has a new master),
    ASK (it is moving) or TRYAGAIN (its keys are split between two masters while it moves),
    raised as it is or as the cause of another error (a CypherError)."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, redis.exceptions.AskError | redis.exceptions.TryAgainError):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def redirected(conn: Client, exc: BaseException) -> bool:
    """Whether ``exc`` says that a key's slot is moving or has moved to another master
    (``rescind.runtime.move``). After MOVED, ``conn`` learns the slot's new master, so that
    ``node_for`` gives the new one from now on: a plain client made by ``node_for`` before
    (a ``TenantGraph``'s) is for the old master, and whoever holds one makes it again."""
    found = redirection(exc)
    if isinstance(found, redis.exceptions.MovedError) and isinstance(conn, RedisCluster):
        conn.nodes_manager.move_slot(found)
    return found is not None


def primaries(conn: Client) -> list[redis.Redis]:
    """A client of each master (``conn`` alone on one server): for keyless commands."""
    if isinstance(conn, RedisCluster):
        return [n.redis_connection for n in conn.get_primaries()]
    return [conn]


def graph_keys(conn: Client) -> list[str]:
    """Every graph on the server or the cluster (``GRAPH.LIST`` on each master)."""
    return [k.decode() if isinstance(k, bytes) else k
            for node in primaries(conn) for k in node.execute_command("GRAPH.LIST")]


def pipeline(conn: Client, *keys: str):
    """A transaction over ``keys`` when the server can run one (one server, or one slot of a
    cluster), else a plain pipeline: the caller orders its commands so that a failure half-way
    leaves nothing that matters behind."""
    if isinstance(conn, RedisCluster) and len({key_slot(k.encode()) for k in keys}) > 1:
        return conn.pipeline(transaction=False)
    return conn.pipeline(transaction=True)


_REPLICAS: dict[int, tuple[float, int]] = {}  # id(master client) -> (when asked, replicas)


def replicas(node: redis.Redis, max_age_s: float = 1.0) -> int:
    """How many replicas follow ``node`` now (asked at most once a second)."""
    now = time.monotonic()
    seen = _REPLICAS.get(id(node))
    if seen is None or now - seen[0] > max_age_s:
        seen = (now, int(node.info("replication").get("connected_slaves", 0)))
        _REPLICAS[id(node)] = seen
    return seen[1]


def replica_wait_ms() -> int:
    """RESCIND_REPLICA_WAIT_MS (``Settings.replica_wait_ms``; read here too, as the agents'
    side has no Settings): how long ``replicated`` waits; 0 turns the wait off."""
    raw = os.environ.get("RESCIND_REPLICA_WAIT_MS", "2000")
    if not raw.isdigit():
        raise ValueError(f"RESCIND_REPLICA_WAIT_MS must be a whole number of milliseconds "
                         f"(0 or more), not {raw!r}")
    return int(raw)


def replicated(conn: Client, key: str, timeout_ms: int | None = None) -> bool:
    """Whether a replica of the master that holds ``key`` has everything written to that
    master so far: True at once when it has no replica (one server, a cluster without
    replicas) or the wait is off (``replica_wait_ms``); else after WAIT, False if no replica
    caught up within ``timeout_ms`` (default: ``replica_wait_ms``).

    WAIT counts the writes of the connection it runs on, and a batch was written on another
    one; so a marker in the key's slot is written first, on the connection that waits: the
    replication stream is in order, so a replica that has the marker has the batch too."""
    timeout_ms = replica_wait_ms() if timeout_ms is None else timeout_ms
    if not timeout_ms:
        return True
    node = node_for(conn, key)
    if not replicas(node):
        return True
    pipe = node.pipeline(transaction=False)  # one connection for both
    pipe.set(layout.replication_marker(key), "1", px=60_000)
    pipe.execute_command("WAIT", 1, timeout_ms)
    _, acked = pipe.execute()
    return int(acked) >= 1


def live_url(conn: Client, url: str) -> str:
    """``url`` with the address of a master of ``conn``'s cluster that answers now (``url``
    itself on one server, or when none answers): a new client finds the cluster from a node
    that is up, not from the one that died."""
    if not isinstance(conn, RedisCluster):
        return url
    parts = urlsplit(url)
    for node in conn.get_primaries():
        try:
            node.redis_connection.ping()
        except redis.RedisError:
            continue
        auth = parts.netloc.rpartition("@")[0]
        where = f"{auth}@{node.host}:{node.port}" if auth else f"{node.host}:{node.port}"
        return urlunsplit(parts._replace(netloc=where))
    return url


def url_of(conn: Client) -> str:
    """The address of one of the servers ``conn`` talks to (``redis://host:port[/db]``)."""
    if isinstance(conn, RedisCluster):
        node = conn.get_default_node()
        return f"redis://{node.host}:{node.port}"
    kw = conn.connection_pool.connection_kwargs
    return f"redis://{kw.get('host', '127.0.0.1')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"


_SHAS: dict[str, str] = {}  # a Lua script -> its SHA1 (the same on every server)


def script_sha(conn: Client, script: str, reload: bool = False) -> str:
    """The SHA of ``script``, loaded on the server (on a cluster, on every master) once per
    process, or again with ``reload`` (the server lost its scripts: a restart)."""
    if reload or script not in _SHAS:
        _SHAS[script] = conn.script_load(script)
    return _SHAS[script]


def run_script(conn: Client, script: str, keys: list[str], args) -> object:
    """``script`` run by its SHA; loaded again when the server lost it (a restart)."""
    try:
        return conn.evalsha(script_sha(conn, script), len(keys), *keys, *args)
    except redis.exceptions.NoScriptError:
        return conn.evalsha(script_sha(conn, script, reload=True), len(keys), *keys, *args)


__all__ = ["Client", "clustered", "connect", "graph_keys", "is_cluster", "live_url", "node_for",
           "pipeline", "primaries", "redirected", "redirection", "replicas", "replicated",
           "run_script", "script_sha", "url_of"]


def rewrite_aof(node: redis.Redis, timeout_s: float = 30.0, finished: bool = False) -> bool:
    """Ask one server for an AOF rewrite that starts after this call; whether it was asked.

    Redis refuses BGREWRITEAOF while a rewrite runs ("already in progress"), and one that
    started earlier may not hold what was just written (new indexes, a test's last keys), so
    this waits, up to ``timeout_s``, for that one to end and asks again; with ``finished``, it
    also waits for the new rewrite to end."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            node.bgrewriteaof()
            break
        except redis.ResponseError as exc:
            if "in progress" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    while finished:
        info = node.info("persistence")
        if not (info.get("aof_rewrite_in_progress") or info.get("aof_rewrite_scheduled")):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
