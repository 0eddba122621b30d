"""The workers' retry, poison and dead-letter policy (rescind.workers.policy), on plain values."""

import redis

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import Invalid, StalePreview
from rescind.graph.cypher import CypherError
from rescind.workers.policy import Failures, backoff, refused, said


class Recording:
    """A connection that keeps what is added to a stream."""

    def __init__(self) -> None:
        self.added: list[tuple[str, dict]] = []

    def xadd(self, stream, fields, **kw):
        self.added.append((stream, fields))


def test_the_pause_doubles_from_the_first_and_stops_at_the_most():
    """The pause before the next try is the first pause, doubled at each failed try, capped."""
    assert [backoff(0.2, 10.0, n) for n in (1, 2, 3, 4)] == [0.2, 0.4, 0.8, 1.6]
    assert backoff(0.2, 10.0, 7) == 10.0 and backoff(0.2, 10.0, 50) == 10.0


def test_a_failure_of_the_server_says_nothing_of_the_entries():
    """A lost connection, a server loading or out of memory, a stale preview: no signature, so
    never "the same way twice"; the server refusing a value has one, the same whatever the
    numbers in its words."""
    for exc in (redis.ConnectionError("gone"), redis.BusyLoadingError("LOADING"),
                CypherError("OOM command not allowed"), StalePreview("moved")):
        assert said(exc) is None, exc
    one = said(CypherError("errMsg: Invalid input at position 12 (in: CREATE ...)"))
    two = said(CypherError("errMsg: Invalid input at position 345 (in: CREATE ...)"))
    assert one is not None and one == two and "(in:" not in one


def test_only_a_refusal_of_the_entry_is_dead_lettered_at_once():
    """An invalid entry is refused (dead-lettered with its reason); a stale preview and a
    failure of the server are not (retried)."""
    assert refused(Invalid("malformed"))
    assert not refused(StalePreview("moved")) and not refused(redis.ConnectionError("gone"))


def test_a_dead_letter_says_why_and_forgets_the_last_failure():
    """A dead-lettered event goes to the dead-letter stream as JSON with its stream, id, group
    and reason, and what was noted of how it failed is forgotten."""
    failures, conn = Failures(), Recording()
    e = ev.ObservationRecorded(event_id="e1", tenant="t", at=ev.from_micros(1), source="s",
                               source_kind="portal", text="seen")
    failures.note("s0", "1-0", redis.ConnectionError("gone"))
    assert failures.seen("s0", "1-0")
    failures.dead_letter(conn, "s0", "1-0", e, "because", layout.WRITER_GROUP)
    [(stream, fields)] = conn.added
    assert stream == layout.DEAD and fields["reason"] == "because" and fields["id"] == "1-0"
    assert fields["group"] == layout.WRITER_GROUP and '"event_id": "e1"' in fields["body"]
    assert not failures.seen("s0", "1-0") and failures.forget("s0", "1-0") is None


def test_the_last_failures_are_bounded_the_oldest_forgotten_first():
    """Past its limit the memory of failures drops the oldest entry, never grows."""
    failures = Failures()
    failures.LIMIT = 3
    for i in range(5):
        failures.note("s", f"{i}-0", ValueError(f"bad {i}"))
    assert [failures.seen("s", f"{i}-0") for i in range(5)] == [False, False, True, True, True]
    assert failures.forget("s", "4-0") == "ValueError: bad 4"
