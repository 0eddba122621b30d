"""Phrases are facts (issue 29, blind3 miss 2): two plain words a write restates ("aisle seat",
"gluten free") make the item stating them a premise, unless a premise found by its values has
those words already; a phrase a user's question or request asks for is no fact of theirs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rescind.middleware.attribution import Delivered, attribute
from rescind.middleware.facts import asked_names, facts
from tests.support.examples import examples

_THINGS = [("window", "seat"), ("quiet", "table"), ("kosher", "meal"), ("gluten", "free"),
           ("ground", "floor"), ("corner", "room"), ("oat", "milk"), ("sea", "view"),
           ("dark", "roast"), ("electric", "car")]
_OTHERS = ["twin beds", "late checkout", "paper invoice", "still water", "spare pillow"]
BOOKING = Delivered("booking", "Ref HT-30417 · 2 nights · arrival 14 Mar 2027 · EUR 412.00")


@given(st.lists(st.sampled_from(_THINGS), min_size=1, max_size=3, unique=True),
       st.sampled_from(["Likes", "On trips:", "Prefers", "Always asks for"]),
       st.sampled_from([", ", "; ", " and ", " with "]))
@settings(max_examples=examples(60), deadline=None)
def test_a_write_restating_a_preference_s_phrases_rests_on_it(things, lead, joiner):
    """A note that restates the booking's values and a preference's two-word phrases rests on
    both; a preference stating other phrases is no premise."""
    stated = [f"{a} {b}" for a, b in things]
    pref = Delivered("pref", f"{lead} a " + " and a ".join(stated))
    other = Delivered("other", "On trips: a " + " and a ".join(_OTHERS))
    note = f"Hotel HT-30417, 14 Mar 2027, EUR 412.00: {joiner.join(stated)}"
    got = attribute(note, [BOOKING, pref, other])
    assert got.justifications == [("booking", "pref")]


@given(st.sampled_from(_THINGS))
@settings(max_examples=examples(20), deadline=None)
def test_a_premise_with_the_phrase_s_words_already_outranks_another_stating_it(thing):
    """When the item found by its values states the phrase's words too, an item that shares
    only the phrase adds nothing."""
    phrase = " ".join(thing)
    both = Delivered("booking", f"Ref HT-30417 · {phrase} · EUR 412.00")
    echo = Delivered("echo", f"Noted: a {phrase} for someone")
    got = attribute(f"HT-30417: {phrase}, EUR 412.00", [both, echo])
    assert got.justifications == [("booking",)]


def test_a_phrase_a_user_only_asks_for_is_no_fact_of_theirs():
    """"Can you get me an aisle seat?" asks; "I always take the aisle seat" states."""
    assert ("pair", "aisle seat") in asked_names("Can you get me an aisle seat?")
    assert ("pair", "aisle seat") in asked_names("Book me an aisle seat please")
    assert ("pair", "aisle seat") not in asked_names("I always take the aisle seat.")
    assert ("pair", "aisle seat") in facts("I always take the aisle seat.")


def test_labels_adverbs_and_words_any_text_uses_are_no_phrase():
    """The two words before a value are its label; "renews automatically", "next week" and a
    capitalised run (a name) are no phrase; punctuation ends one ("seat, vegetarian")."""
    pairs = {k for kind, k in facts("Pay to the bank account GB33 BUKB 2020 1555 5555 55. "
                                    "It renews automatically next week. Harbor Lane Bakery. "
                                    "aisle seat, vegetarian meal") if kind == "pair"}
    assert pairs == {"aisle seat", "vegetarian meal"}


def test_phrases_alone_attribute_a_write_no_value_of_which_matches():
    """A write with no identifier, amount or name rests on the item stating its phrases."""
    pref = Delivered("pref", "Diet: strictly vegetarian meals, oat milk in coffee")
    other = Delivered("other", "Diet: no restrictions")
    got = attribute("Order: oat milk latte and the vegetarian meals", [pref, other])
    assert got.justifications == [("pref",)]


def test_a_premise_with_a_word_of_the_phrase_is_not_joined_by_the_item_with_its_wording():
    """A premise found by its values that has one word of the phrase ("detached houses") is
    restated in other words ("detached homes"): the item sharing that wording adds nothing."""
    stat = Delivered("stat", "About 1.5 million heat pumps, in 2 of 3 detached houses")
    page = Delivered("page", "Survey: heat pumps heat most detached homes")
    got = attribute("Norway: 1.5 million heat pumps, two-thirds of detached homes",
                    [stat, page])
    assert got.justifications == [("stat",)]
