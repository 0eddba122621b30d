"""Whatever an agent uses as a store key or value, recording it never fails its store call:
the names and texts stay within what the event contract accepts, and stay distinct."""

from rescind.contract import events as ev
from rescind.middleware.recorder import memory_of, store_key


def test_a_key_with_control_characters_or_too_long_still_makes_a_valid_event():
    odd = store_key(("notes", "u\n1"), "k\x00")
    assert odd == "notes/u\\x0a1/k\\x00"
    long_a, long_b = store_key(("n",), "a" * 5000), store_key(("n",), "a" * 4999 + "b")
    assert len(long_a) == 1000 and long_a != long_b
    for key in (odd, long_a):
        mid, kind, text = memory_of("acme", key, {"text": "x"})
        e = ev.MemoryWritten(event_id="e", tenant="acme", at=ev.EPOCH, kind=kind, text=text,
                             premises=["p"], agent="a", key=key)
        assert e.memory() == mid


def test_a_value_longer_than_an_event_holds_is_identified_by_what_the_event_carries():
    mid, _, text = memory_of("acme", "n/k", {"text": "y" * 30_000})
    e = ev.MemoryWritten(event_id="e", tenant="acme", at=ev.EPOCH, kind="belief", text=text,
                         premises=["p"], agent="a", key="n/k")
    assert len(text) == ev.MAX_TEXT and e.memory() == mid


def test_control_characters_in_a_value_are_escaped_so_the_event_stands():
    """A NUL, a terminal escape or a lone surrogate in what an agent stores (or a tool returns)
    is recorded as an escape: the event is valid, FalkorDB can store it, and the same value
    always gets the same id. Tab and newline stay as they are."""
    mid, kind, text = memory_of("acme", "n/k", {"text": "pay\x00 \x1b[1mZZ97\ud800\n\tnow"})
    assert text == "pay\\x00 \\x1b[1mZZ97\\ud800\n\tnow"
    e = ev.MemoryWritten(event_id="e", tenant="acme", at=ev.EPOCH, kind=kind, text=text,
                         premises=["p"], agent="a", key="n/k")
    assert e.memory() == mid == memory_of("acme", "n/k", {"text": "pay\x00 \x1b[1mZZ97\ud800\n\tnow"})[0]
    assert store_key(("n",), "k\x7f\x85") == "n/k\\x7f\\x85"
