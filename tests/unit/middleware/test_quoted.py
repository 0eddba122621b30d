"""Memories quoted in a prompt the program built are delivered as the prompt quotes them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rescind.middleware.context import WRITTEN, Contexts

WORDS = st.sampled_from(["ab", "north", "wind", "pay", "invoice", "x", "\n", "  ", "Ünï"])
PHRASES = st.lists(WORDS, min_size=4, max_size=12).map(" ".join)


def _plainly(memories: list[str], text: str) -> list[str]:
    """Each memory of at least 24 characters (stripped) that the text holds starting at a
    word (its start, or after a white space), in the order of those positions."""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c.isspace()]
    kept = {m.strip(): f"m{k}" for k, m in enumerate(memories) if len(m.strip()) >= 24}
    return [mid for i in starts for whole, mid in kept.items() if text.startswith(whole, i)]


@settings(max_examples=150, deadline=None)
@given(st.lists(PHRASES, min_size=1, max_size=6, unique=True), st.data())
def test_a_prompt_delivers_the_memories_it_quotes_in_its_order(memories, data):
    """Whatever the spacing and however often a memory is quoted, the memories delivered are
    those the prompt holds from a word's start, in the prompt's order, and the same on the
    second call with the same prompt (its windows then come from the cache)."""
    contexts = Contexts()
    contexts.begin("r")
    for k, m in enumerate(memories):
        contexts.deliver("r", f"m{k}", {"text": m}, WRITTEN)
    text = " ".join(data.draw(st.lists(st.one_of(WORDS, st.sampled_from(memories)),
                                       min_size=1, max_size=10)))
    got: list[str] = []
    contexts.get("r").deliver = lambda mem_id, value, kind: got.append(mem_id)
    contexts.quoted("r", text)
    assert got == _plainly(memories, text)
    got.clear()
    contexts.quoted("r", text)
    assert got == _plainly(memories, text)
