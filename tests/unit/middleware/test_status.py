"""When the status cache must take a fresh snapshot: entries after the last one it accounted
for are gone (``lost``), judged on XINFO STREAM's reply."""

from __future__ import annotations

from rescind.middleware.status import lost


def info(first: str | None, length: int, added: int | None, last: str = "9-0") -> dict:
    """XINFO STREAM's reply, as redis-py gives it (ids as bytes)."""
    reply = {"length": length, "last-generated-id": last.encode(),
             "first-entry": (first.encode(), {}) if first else None}
    if added is not None:
        reply["entries-added"] = added
    return reply


def test_nothing_is_lost_while_the_oldest_entry_left_is_not_after_the_last_read():
    assert not lost(info("3-0", 7, 9), "5-0", 5)  # entries 6..9 all there
    assert not lost(info("5-0", 5, 9), "5-0", 5)


def test_entries_after_the_last_read_trimmed_away_are_lost():
    assert lost(info("8-0", 2, 9), "5-0", 5)  # 6 and 7 went
    assert lost(info(None, 0, 9), "5-0", 5)  # trimmed to nothing


def test_a_trim_that_took_only_what_was_read_loses_nothing():
    assert not lost(info("6-0", 4, 9), "5-0", 5)  # 6..9 left: all that came after 5
    assert not lost(info(None, 0, 5, last="5-0"), "5-0", 5)  # nothing came after


def test_a_missing_or_recreated_stream_is_lost_once_something_was_accounted_for():
    assert lost(None, "5-0", 5)
    assert not lost(None, "0-0", 0)  # never existed: nothing to lose
    assert lost(info("20-0", 2, 2), "5-0", 5)  # fewer ever added than were read: a new stream


def test_a_server_that_does_not_count_additions_is_judged_by_ids_erring_on_caution():
    assert lost(info("8-0", 2, None), "5-0", 5)
    assert not lost(info("3-0", 7, None), "5-0", 5)
    assert lost(info(None, 0, None, last="9-0"), "5-0", 5)
    assert not lost(info(None, 0, None, last="5-0"), "5-0", 5)
