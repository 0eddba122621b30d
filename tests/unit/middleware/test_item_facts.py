"""An item's facts are kept across runs by exact text, in a bounded cache: a run's premises are
the same whether the cache is cold or warm, and the cache never holds more than its bounds."""

import threading

from hypothesis import example, given, settings
from hypothesis import strategies as st

from rescind.middleware import context
from rescind.middleware.attribution import (
    asked_names,
    facts,
    read_written,
    statements,
    words_of,
)
from rescind.middleware.context import STORE, TOOL, USER, WRITTEN, ItemFacts, RunContext
from tests.support.examples import examples

_PROFILE = {"kind": "profile", "text": "Dana Reyes, 4 Elm Court, York; bank account GB33 BUKB "
            "2020 1555 5555 55; works at Harbor Lane Bakery"}
_STATUS = "BA1326 LHR-EDI delayed 40 min, now departs 09:30 from gate 22"
_SAID = "I took up rowing and I'm flying BA1326 on 2 Dec"


def _run(user_kind: str = USER) -> list[tuple[list[list[str]], str]]:
    """One run: a profile read from the store, a flight status restored from the thread, the
    user's message; three writes and an action's arguments, each attributed."""
    ctx = RunContext()
    ctx.model_turn("agent")
    ctx.deliver("profile", _PROFILE, STORE)
    ctx.deliver("status", _STATUS, TOOL)
    ctx.deliver("said", _SAID, user_kind)
    found = [ctx.justifications({"text": "BA1326 now departs 09:30, gate 22"}, "n1"),
             ctx.justifications({"text": "Dana Reyes (York) took up rowing"}, "n2")]
    ctx.deliver("n2", {"text": "Dana Reyes (York) took up rowing"}, WRITTEN)
    ctx.model_turn("agent")
    ctx.deliver("status", _STATUS, TOOL)  # shown again at the next call
    found.append(ctx.justifications({"text": "Bring a warm coat"}, "n3"))
    found.append(ctx.justifications({"to": "GB33 BUKB 2020 1555 5555 55", "amount": 40},
                                    ""))
    return found


def test_a_run_s_premises_are_the_same_with_a_warm_cache():
    """Each write of a run rests on the same premises, by the same rule, whether the items'
    facts were just computed or kept from earlier runs; a text once a tool's result and then
    the user's message is read as the user's (its statements are facts) and back."""
    context.ITEM_FACTS = ItemFacts()  # cold
    try:
        cold = _run()
        cold_tool = _run(TOOL)
        assert cold != cold_tool  # the user's statement makes "rowing" a fact: it matters
        assert len(context.ITEM_FACTS) == 5  # four items, one text of two kinds
        assert _run() == cold and _run(TOOL) == cold_tool and _run() == cold  # warm
        assert cold[1] == ([["profile", "said"]], "matched")
    finally:
        context.ITEM_FACTS = ItemFacts()


def test_what_is_kept_is_what_the_item_s_facts_are():
    """A kept entry holds an item's facts and words as computed afresh: a user's message with
    its statements' words and without the names it only asks about; a stored value by its
    JSON text when it is plain data, else computed each time (what it prints may change)."""
    kept = ItemFacts()
    said = "I'm in Leeds. What's the weather in York?"
    user = kept.of(said, True)
    assert user == (frozenset((facts(said) | statements(said)) - asked_names(said)),
                    words_of(said))
    assert kept.of(said, False) == (frozenset(facts(said)), words_of(said)) != user
    assert kept.of(said, True) is user  # kept
    assert kept.of({"n": 1500}, False)[0] == frozenset(facts({"n": 1500}))
    note = _Note("INV-1001")
    assert ("id", "inv1001") in kept.of({"note": note}, False)[0]
    note.content = "INV-2002"  # same repr, other content: not the kept entry
    assert ("id", "inv2002") in kept.of({"note": note}, False)[0]
    assert kept.of([note], False)[0] == frozenset(facts([note]))
    assert len(kept) == 3


class _Note:
    def __init__(self, content: str) -> None:
        self.content = content

    def __repr__(self) -> str:
        return "Note()"


def test_the_cache_is_bounded_by_entries_and_by_text():
    """However many and however long the texts, the cache holds at most its number of entries
    and of characters; a text longer than its longest is computed, not kept; the least
    recently used entry goes first."""
    kept = ItemFacts(items=3, chars=100, longest=40)
    for i in range(50):
        kept.of(f"invoice INV-{i:04d} is due", False)
        assert len(kept) <= 3 and kept.size <= 100
    assert len(kept) == 3
    first = kept.of("invoice INV-0047 is due", False)  # the oldest, used again: it stays
    kept.of("invoice INV-0777 is due", False)
    assert kept.of("invoice INV-0047 is due", False) is first
    long = "Northwind Supplies moved: remit to 400 Harbor Lane, Portsmouth"
    assert kept.of(long, False)[0] == frozenset(facts(long))
    assert all(key[2] != long for key in kept._kept)
    wide = ItemFacts(items=100, chars=90, longest=40)  # by characters before entries
    for i in range(20):
        wide.of(f"order {i:02d} ships via dock {i + 100}", False)
    assert wide.size <= 90 and len(wide) == 90 // len("order 00 ships via dock 100")
    assert ItemFacts().items == 4096 and ItemFacts().chars == 2_000_000


def test_the_cache_stays_bounded_and_consistent_under_threads():
    """Runs in many threads read and fill one cache at once: its character count stays the
    sum of what it holds, within its bounds, and every answer is the item's facts."""
    kept = ItemFacts(items=20, chars=400, longest=60)
    wrong: list[str] = []

    def reader(n: int) -> None:
        for i in range(300):
            text = f"ref R{(i * 7 + n) % 45:03d}-X paid 1,{i % 45:03d}.50 EUR"
            users = n % 2 == 0
            expected = (facts(text) | statements(text)) - asked_names(text) if users \
                else facts(text)
            if kept.of(text, users)[0] != frozenset(expected):
                wrong.append(text)

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong
    assert len(kept) <= 20 and kept.size <= 400
    assert kept.size == sum(len(key[2]) for key in kept._kept)


_PIECES = ["Dana", "York", "the", "Harbor", "O'Neill's", "Wi-Fi", "rowing", "42", "please",
           "INV-1002", " ", " ", ", ", ". ", "\n", "'", "ÄRZTE", "über", "_", "True"]


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=20).map("".join),
       st.sampled_from(["text", "dict", "list"]))
@example("Dana O'Neill's Wi-Fi, über the INV-1002", "dict")
def test_a_write_read_once_has_the_content_words_of_words_of(text, shape):
    """The content words a write is read with (outside the run's lock, once per write) are
    those ``words_of`` finds, for text, a stored value and a list with a boolean."""
    value = {"text": text, "n": 42} if shape == "dict" else [text, True] if shape == "list" \
        else text
    assert read_written(value).content_words == words_of(value)


def test_a_write_with_nothing_shown_has_no_premise_and_does_not_raise():
    """A write whose turn was shown nothing (another branch's model calls moved the turn on)
    has no alternative, whatever its words: the recorder grounds it on the agent; the agent's
    own store put does not raise."""
    ctx = RunContext()
    assert ctx.justifications({"text": "heat pumps in norway"}, "x") == ([], "turn-context")
    ctx.deliver("page", "Heat pumps heat most new homes", TOOL)
    for _ in range(3):
        ctx.model_turn("agent")
    assert ctx.justifications({"text": "Summary: heat pumps lead"}, "y") == ([], "turn-context")
