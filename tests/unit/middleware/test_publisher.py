"""The agent-side publisher with no server to reach: it never blocks, every event it accepts is
in its spool on disk, memory and disk are both bounded, and a live publisher's segments are
never taken by another."""

from __future__ import annotations

import logging
import os
import time
from datetime import UTC, datetime

import orjson

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.middleware import spool
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import free_port

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def nowhere() -> str:
    return f"redis://127.0.0.1:{free_port()}"


def observation(i: int, tenant: str = "offline") -> ev.ObservationRecorded:
    return ev.ObservationRecorded(event_id=f"e{i}", tenant=tenant, at=AT, source="s",
                                  text=f"t{i}")


def spooled_ids(folder) -> list[str]:
    """The event ids in a tenant's spool folder, oldest segment first."""
    ids = []
    for name in sorted(os.listdir(folder)):
        for raw in (folder / name).read_bytes().splitlines():
            data = orjson.loads(orjson.loads(raw)["fields"][layout.DATA])["data"]
            ids.append(orjson.loads(data)["event_id"])
    return ids


def test_memory_is_bounded_and_what_leaves_it_stays_in_the_spool(spool_dir):
    """Past its capacity the queue in memory lets go of the oldest events; none is lost: all
    are in the spool, each once."""
    pub = Publisher(nowhere(), capacity=10, connect_timeout=0.2, segment_bytes=1_000)
    for i in range(25):
        pub.publish(observation(i))
    assert pub.backlog == 10 and pub.stats.dropped == 0 and pub.stats.spooled == 25
    assert spooled_ids(spool_dir / "offline") == [f"e{i}" for i in range(25)]
    pub.close(timeout=0.5)
    assert spooled_ids(spool_dir / "offline") == [f"e{i}" for i in range(25)]  # for the next


def test_the_spool_is_bounded_drops_the_oldest_and_says_so(spool_dir, caplog):
    """Past ``spool_max_bytes`` the oldest segment goes: counted in ``stats.dropped``, logged,
    and gone from memory too; the newest events stay."""
    pub = Publisher(nowhere(), connect_timeout=0.2, spool_max_bytes=8_000, segment_bytes=1_000)
    with caplog.at_level(logging.WARNING, logger="rescind.publisher"):
        for i in range(200):
            pub.publish(observation(i))
    kept = spooled_ids(spool_dir / "offline")
    assert pub.stats.dropped == 200 - len(kept) > 0
    assert pub.backlog == len(kept) and kept == [f"e{i}" for i in range(200 - len(kept), 200)]
    assert pub.spool_bytes <= 8_000
    assert "dropped" in caplog.text and "unsent events" in caplog.text
    pub.close(timeout=0.5)


def test_without_a_usable_spool_the_publisher_keeps_to_memory(tmp_path, caplog):
    """A spool folder that cannot be made: a warning, and the old bounded queue (what overflows
    is dropped and counted); publish still never raises."""
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with caplog.at_level(logging.WARNING, logger="rescind.publisher"):
        pub = Publisher(nowhere(), capacity=10, connect_timeout=0.2, spool_dir=blocker)
        for i in range(25):
            pub.publish(observation(i), durable=i == 0)
    assert pub.backlog == 10 and pub.stats.dropped == 15 and pub.stats.spooled == 0
    assert "memory only" in caplog.text
    pub.close(timeout=0.5)


def test_a_live_publisher_s_segments_are_never_taken_and_a_closed_one_s_are(spool_dir):
    """While a publisher lives, its locks keep another (even in the same process) from taking
    its segments; once it has closed with events unsent, the next one takes them."""
    first = Publisher(nowhere(), connect_timeout=0.2)
    for i in range(5):
        first.publish(observation(i))
    second = Publisher(nowhere(), connect_timeout=0.2, tenant="offline")
    assert second.spool_bytes == 0
    first.close(timeout=0.5)
    third = Publisher(nowhere(), connect_timeout=0.2, tenant="offline")
    assert third.spool_bytes == os.path.getsize(next((spool_dir / "offline").iterdir()))
    for pub in (second, third):
        pub.close(timeout=0.5)


def test_publish_is_cheap_and_durable_publish_reaches_the_disk(spool_dir, monkeypatch):
    """A plain publish writes the OS without a disk flush; a durable one fsyncs its segment
    (and, for a new segment, its folder) before returning."""
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    pub = Publisher(nowhere(), connect_timeout=0.2)
    pub.publish(observation(1))
    assert synced == []
    pub.publish(ev.ActionExecuted(event_id="x", tenant="offline", at=AT, action="pay-1"),
                durable=True)
    assert len(synced) == 2  # the segment, then the folder that names it
    pub.publish(ev.ActionExecuted(event_id="y", tenant="offline", at=AT, action="pay-2"),
                durable=True)
    assert len(synced) == 3
    assert spooled_ids(spool_dir / "offline") == ["e1", "x", "y"]
    pub.close(timeout=0.5)


def test_flush_gives_up_at_once_when_the_server_cannot_be_reached():
    """No server: flush returns False after a failed attempt, not at its timeout (a gated
    action flushes before it asks the gate, and must fail closed quickly)."""
    pub = Publisher(nowhere(), connect_timeout=0.2)
    pub.publish(observation(1))
    time.sleep(0.3)  # the thread is in its backoff by now
    t0 = time.monotonic()
    assert pub.flush(timeout=5) is False
    assert time.monotonic() - t0 < 1
    pub.close(timeout=0.5)


def test_a_torn_last_line_is_skipped_when_a_segment_is_read_again(tmp_path):
    """A process that died in the middle of a write leaves a line without its newline: it is
    counted as unreadable, and the lines before it are sent."""
    folder = tmp_path / "t"
    folder.mkdir()
    good = spool.line("s", {"data": "1"}) + spool.line("s", {"data": "2"})
    (folder / f"1-1-1{spool.SUFFIX}").write_bytes(good + b'{"stream": "s", "fie')
    sp = spool.TenantSpool(folder, 1 << 20, 1 << 16)
    assert sp.claim() == 1
    seg = sp.disk[0]
    entries, end, bad = spool.TenantSpool.read(seg, 0, 100)
    assert entries == [("s", {"data": "1"}), ("s", {"data": "2"})] and bad == 0
    rest, end2, bad = spool.TenantSpool.read(seg, end, 100)
    assert rest == [] and bad == 1 and end2 == seg.size
    sp.resent(seg, end2, 0)
    assert os.listdir(folder) == []


def test_the_spool_s_place_and_bounds_come_from_the_configuration(spool_dir, monkeypatch,
                                                                   tmp_path):
    """Default: $RESCIND_SPOOL_DIR, else the user's cache; a configured folder wins; the
    recorder's publisher takes folder, bound and exit time from the configuration."""
    from rescind.middleware import InterceptConfig

    assert InterceptConfig(tenant="a").spool_dir == spool_dir
    monkeypatch.delenv("RESCIND_SPOOL_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert InterceptConfig(tenant="a").spool_dir == tmp_path / ".cache" / "rescind" / "spool"
    config = InterceptConfig(tenant="a", url=nowhere(), spool_dir=tmp_path / "mine",
                             spool_max_bytes=10_000, exit_flush_s=0.5)
    pub = Publisher.from_config(config)
    assert (pub.spool_dir, pub.spool_max_bytes, pub.exit_flush_s) == (tmp_path / "mine",
                                                                      10_000, 0.5)
    assert (tmp_path / "mine" / "a").is_dir()  # its tenant's spool is open from the start
    pub.close(timeout=0.5)
