"""The audit log on the real server: refusals counted per principal, kind and minute; the live
log rotated into monthly archives, never trimmed; export in order across both, even while a
rotation runs."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest

from rescind.contract import layout
from rescind.operator.audit import Actor, AuditLog, month
from rescind.transport import connection

SAM = Actor("sam@acme.example", "security", "tok-sam")
MALLORY = Actor("mallory@acme.example", "viewer", "tok-mal")


def _ms(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp() * 1000)


@pytest.fixture
def scope(falkordb, tenant_name):
    """A tenant name whose every audit key is removed afterwards."""
    conn = connection.connect(falkordb)
    yield conn, tenant_name
    keys = list(conn.scan_iter(match=f"{layout.audit_key(tenant_name)}*"))
    if keys:
        conn.delete(*keys)


def test_a_flood_of_refusals_is_a_few_counted_entries_and_the_decisions_stay(scope):
    """10,000 refusals of two principals, of two kinds, with decisions made in the middle of
    them: the live log (kept to 20 entries) holds every decision and one entry per principal,
    kind and minute, whose counts add up to the refusals."""
    conn, tenant = scope
    log = AuditLog(conn, max_live=20)
    for i in range(10):
        log.record(tenant, SAM, "retraction.preview", f"portal:{i}")
    for i in range(10_000):
        who = MALLORY if i % 2 else Actor("anonymous (10.0.0.9)", "", "", "api")
        log.refused(tenant, who, "POST /retractions", f"/x/{i}", 403 if i % 2 else 401, "no")
        if i in (2_500, 7_500):
            log.record(tenant, SAM, "retraction.commit", f"flood-{i}", detail={"i": i})
    entries = log.entries(tenant, 100)
    refused = [e for e in entries if e["result"] == "refused"]
    decided = [e["target"] for e in entries if e["result"] == "ok"]
    assert set(decided) == {*(f"portal:{i}" for i in range(10)), "flood-2500", "flood-7500"}
    assert 2 <= len(refused) <= 4  # one per principal and kind, two if a minute turned
    assert sum(e["count"] for e in refused) == 10_000
    assert {(e["who"], e["status"]) for e in refused} == {
        ("mallory@acme.example", "403"), ("anonymous (10.0.0.9)", "401")}
    # Stream ids compare as numbers: "…-10" comes after "…-9" (seen flaking as strings).
    first = min(refused, key=lambda e: tuple(int(x) for x in e["id"].split("-")))
    assert first["target"] == "/x/0" and first["last"] >= first["at"]
    assert conn.xlen(layout.audit_key(tenant)) == len(entries)  # nothing rotated out


def test_the_live_log_is_rotated_into_monthly_archives_and_exported_in_order(scope):
    """Entries of two past months and of today, past the live bound: the oldest move to their
    month's archive with their ids and final counts, the live log keeps its bound, and export
    gives every entry once, oldest first, filtered by time."""
    conn, tenant = scope
    live = layout.audit_key(tenant)
    old = [("2025-10-31T23:59:59.999+00:00", "oct"), ("2025-11-01T00:00:00+00:00", "nov-1"),
           ("2025-11-20T10:00:00+00:00", "nov-2")]
    for at, target in old:  # written by an earlier process: its ids carry its time
        conn.xadd(live, {"who": "old", "role": "security", "token": "", "via": "api",
                         "action": "d", "target": target, "result": "ok", "status": "200",
                         "detail": ""}, id=f"{_ms(at)}-0")
    log = AuditLog(conn, max_live=5)
    refusal = log.refused(tenant, MALLORY, "GET /audit", "/audit", 403)
    log.refused(tenant, MALLORY, "GET /audit", "/audit", 403)
    for i in range(12):
        log.record(tenant, SAM, "d", f"now-{i}")
    assert conn.xlen(live) <= 5 + log.slack
    archives = [k.decode() for k in conn.zrange(layout.audit_archives_key(tenant), 0, -1)]
    this_month = month(int(refusal.split("-")[0]))[0]
    assert archives == [layout.audit_archive_key(tenant, p) for p in
                        ("2025-10", "2025-11", this_month)]
    assert [e["target"] for e in log._shaped(tenant, conn.xrange(archives[1]))] == [
        "nov-1", "nov-2"]
    everything = list(log.export([tenant]))
    assert [e["target"] for e in everything] == [
        "oct", "nov-1", "nov-2", "/audit", *(f"now-{i}" for i in range(12))]
    assert len({e["id"] for e in everything}) == len(everything)
    moved = everything[3]
    assert (moved["id"], moved["count"], moved["result"]) == (refusal, 2, "refused")
    assert not conn.hexists(layout.audit_counts_key(tenant), refusal)  # settled in the archive
    november = list(log.export([tenant], since=datetime(2025, 11, 1, tzinfo=UTC),
                               until=datetime(2025, 11, 30, tzinfo=UTC)))
    assert [e["target"] for e in november] == ["nov-1", "nov-2"]
    assert [e["target"] for e in log.entries(tenant, 8)] == [
        *(f"now-{i}" for i in reversed(range(5, 12))), "now-4"]  # live, then the archive
    assert [e["target"] for e in log.entries(tenant, 100)][-3:] == ["nov-2", "nov-1", "oct"]


def test_export_misses_nothing_and_repeats_nothing_while_entries_rotate(scope):
    """A writer keeps adding entries past a live bound of 7 (so every write may rotate) while
    exports run, a chunk at a time: each export is strictly in order and holds every entry
    written before it began."""
    conn, tenant = scope
    log = AuditLog(conn, max_live=7)
    import rescind.operator.audit as audit_mod

    done = threading.Event()
    written: list[str] = []

    def writer():
        i = 0
        # At least 400 entries, and no more than 2,000: unbounded, the writer outran the
        # exports on a loaded machine, each export read more, and the test took 87 s.
        while (not done.is_set() and i < 2_000) or i < 400:
            written.append(log.record(tenant, SAM, "d", f"w-{i}"))
            i += 1

    chunk = audit_mod.CHUNK
    audit_mod.CHUNK = 5  # many chunks per export, so rotations fall between them
    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(20):
            before = set(written)
            ids = [e["id"] for e in log.export([tenant])]
            keys = [tuple(map(int, i.split("-"))) for i in ids]
            assert keys == sorted(set(keys)), "out of order or repeated"
            assert before <= set(ids), "an entry written before the export is missing"
    finally:
        done.set()
        thread.join()
        audit_mod.CHUNK = chunk
    assert [e["id"] for e in log.export([tenant])] == written


def test_export_of_every_scope_merges_the_tenants_and_the_servers_log(scope, falkordb):
    """Without tenants named, export reads every scope on the server in time order, each entry
    naming its tenant (None: the server's log)."""
    conn, tenant = scope
    log = AuditLog(conn)
    start = datetime.now(UTC)
    log.record(tenant, SAM, "first", "a")
    time.sleep(0.002)  # two logs' entries of one millisecond have no order between them
    log.refused(None, Actor("anonymous (10.1.1.1)", ""), "GET /api/v1/me", "/api/v1/me", 401)
    time.sleep(0.002)
    log.record(tenant, SAM, "last", "b")
    assert None in log.scopes() and tenant in log.scopes()
    mine = [(e["tenant"], e["action"]) for e in log.export(since=start)
            if e["tenant"] in (tenant, None) and e["action"] in ("first", "last",
                                                                  "GET /api/v1/me")]
    assert mine == [(tenant, "first"), (None, "GET /api/v1/me"), (tenant, "last")]
