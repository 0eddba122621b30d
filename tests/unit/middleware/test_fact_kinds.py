"""Facts are values, not labels (issue 29): names however short, short codes, a code inside a
longer identifier, small numbers with what they count, and the words of a user's statements;
each found in any rendering of the items and of the written value, each an alternative per
fact, all needed. The turn-context fallback picks the items sharing the write's words."""

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from rescind.middleware.attribution import (
    Delivered,
    FactIndex,
    attribute,
    facts,
    statements,
)
from rescind.middleware.context import STORE, TOOL, USER, RunContext
from rescind.middleware.facts import _COMMON_CAPITALS
from tests.support.examples import examples

RENDER = [
    lambda v: v,
    json.dumps,
    repr,
    lambda v: "\n".join(f"{k}: {x}" for k, x in v.items()),
]
# Made-up town names: capitalised, no digit, not a word any sentence starts with.
# A town's name: not one of the words any sentence uses ("Via", "Had"), which are never names.
TOWN = st.from_regex(r"[B-DF-HJ-NP-TV-Z][aeiou][a-z]{1,6}", fullmatch=True).filter(
    lambda t: t.casefold() not in _COMMON_CAPITALS)


def _index(*items: tuple[str, object, bool]) -> FactIndex:
    """An index of (id, value, is a user's message) items, as a run's context builds it."""
    from rescind.middleware.attribution import words_of

    index = FactIndex()
    for item, value, user in items:
        index.add(item, facts(value) | (statements(value) if user else set()), words_of(value))
    return index


@settings(max_examples=examples(30), deadline=None)
@given(TOWN, TOWN, st.sampled_from(range(len(RENDER))), st.integers(1, 28))
def test_a_town_only_the_user_names_makes_the_user_s_message_a_premise(town, other, ri, n):
    """"moving to Hull": the CRM states the plan, only the user's message names the town; the
    note needs both, in any rendering of the CRM record. A town the note does not name, in an
    unrelated item, is no premise."""
    crm = Delivered("crm", RENDER[ri]({"account": f"plan Gold-{n:02d}",
                                       "renews": f"2027-01-{n:02d}"}))
    user = Delivered("user", f"I'm moving to {town} next month; note it on my account.")
    noise = Delivered("noise", f"Depot closed in {other}." if other != town else "Depot shut.")
    a = attribute(f"Plan Gold-{n:02d}, renews 2027-01-{n:02d}; moving to {town}",
                  [crm, user, noise])
    assert a.justifications == [("crm", "user")]


def test_a_name_of_several_words_is_one_fact_and_each_of_its_words_is_one_too():
    """"works at Harbor Lane Bakery": the user's message states the name; the previous profile
    states the rest; both are needed. A word that starts any sentence ("User") is no name."""
    old = Delivered("v1", "Profile of Dana: lives in York (12 Elm Court)")
    said = Delivered("user", "I started at Harbor Lane Bakery this week")
    a = attribute("Profile of Dana: lives in York (12 Elm Court); works at Harbor Lane Bakery",
                  [old, said])
    assert a.justifications == [("user", "v1")]
    assert ("name", "harbor lane bakery") in facts(said.value)
    assert ("name", "bakery") in facts(said.value)
    vim = Delivered("vim", "User uses vim")
    assert attribute("User's favourite colour is blue", [vim]).rule == "none"
    assert not {f for f in facts("I'm sure. Please What? Save it") if f[0] == "name"}


def test_a_code_word_inside_a_longer_identifier_is_a_fact_of_its_own():
    """The flight status writes "BA1326 LHR-EDI", the user asked about "BA1326": a reminder
    stating the flight, its time and gate rests on the status alone (it states everything),
    not on the status and the question."""
    status = Delivered("status", "BA1326 LHR-EDI on 2026-12-03: delayed to 18:40, gate 22")
    asked = Delivered("asked", "What's the status of BA1326?")
    a = attribute("Reminder: BA1326 leaves at 18:40 from gate 22", [status, asked])
    assert a.justifications == [("status",)]
    assert {("id", "ba1326"), ("id", "ba1326lhredi")} <= facts(status.value)
    iban = facts("IBAN GB33 BUKB 2020 1555 5555 55")  # 4-character groups stay one fact
    assert {f for f in iban if f[0] == "id"} == {("id", "gb33bukb20201555555555")}


LABELS = ("bay", "gate", "level", "platform", "row", "desk")


@settings(max_examples=examples(30), deadline=None)
@given(st.sampled_from(LABELS), st.integers(1, 99), st.integers(1, 99), st.integers(0, 3),
       st.sampled_from(("P", "Q", "m", "AR")), st.integers(1, 9))
def test_a_short_code_and_a_small_number_with_its_label_are_facts(label, n, other, ri, code,
                                                                   k):
    """"permit P-31", "bay 14": the handbook section stating both is the premise of an answer
    restating them in its own words, in any rendering; a section with the same number and
    another code, or the same code and another number, is not."""
    wanted = Delivered("parking", RENDER[ri]({"where": f"{label} {n}", "permit": f"{code}-3{k}"}))
    m = other if other != n else n + 1
    same_number = Delivered("z", RENDER[ri]({"where": f"{label} {n}", "permit": f"{code}-4{k}"}))
    same_code = Delivered("z", RENDER[ri]({"where": f"{label} {m}", "permit": f"{code}-3{k}"}))
    answer = f"Go to {label} {n} and show permit {code}-3{k}"
    assert attribute(answer, [wanted, same_number]).justifications == [("parking",)]
    assert attribute(answer, [wanted, same_code]).justifications == [("parking",)]


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(-20, 45), st.sampled_from(("°C", " °C", "°F")), st.sampled_from(("°C", "°F")))
def test_a_temperature_is_a_fact_with_its_unit(t, shown, written):
    """"6°C": the forecast stating it is the premise; the user's message naming the same town
    is an alternative for the town only, so the note rests on the forecast alone."""
    forecast = Delivered("weather", f"York, 2026-12-05: heavy rain, {t}{shown}")
    user = Delivered("user", "I'm off to York on Friday. What to pack?")
    a = attribute(f"Pack a waterproof for York: {t}{written.strip()} and rain",
                  [forecast, user])
    same = shown.strip() == written
    assert a.justifications == ([("weather",)] if same else [("user",), ("weather",)])


def test_a_user_s_statement_states_its_words_its_questions_and_requests_do_not():
    """"I took up rowing": a profile adding "likes rowing" rests on the old profile and on the
    message; "What to pack?" and "Save me a reminder, please" state nothing."""
    v2 = "Profile of Dana: works at Harbor Lane Bakery"
    index = _index(("v2", v2, False), ("user", "I took up rowing", True))
    a = index.attribute(f"{v2}; likes rowing")
    assert a.justifications == [("user", "v2")]
    assert statements("What to pack? Save me a reminder, please. I'd like the weather for "
                      "Leeds. I want a summary. We need the forecast") == set()
    index = _index(("weather", "York: heavy rain, 6°C", False),
                   ("user", "What to pack for York?", True))
    assert index.attribute("Pack a waterproof for York: heavy rain, 6°C").justifications == [
        ("weather",)]
    # a word the premises have in another form ("delayed", "delay") needs no user's statement
    index = _index(("status", "BA117 delayed, now departs 14:35", False),
                   ("user", "I'm worried about the delay on BA117", True))
    assert index.attribute("BA117 delay: departs 14:35").justifications == [("status",)]
    # per justification: the calendar names Sarah too, but only the user said they met
    index = _index(("cal", "Lunch with Sarah at 12:30", False),
                   ("user", "I met Sarah today", True))
    assert index.attribute("Met with Sarah").justifications == [("user",)]
    # a name the user only asks about is no fact of theirs: the forecast does not repeat it
    for said, premises in (("What's the weather in Leeds?", [["weather"]]),
                           ("I'm in Leeds. Is it raining?", [["user", "weather"]]),
                           ("I'm in Leeds, is it raining?", [["user", "weather"]])):
        ctx = RunContext()
        ctx.model_turn("agent")
        ctx.deliver("user", said, USER)
        ctx.deliver("weather", "light rain, 9°C", TOOL)
        assert ctx.justifications("Weather in Leeds: light rain, 9°C", "w") == (premises,
                                                                                "matched")
    # a tool result's words say nothing on their own: only a user's statement is looked at
    for kind, premises in ((TOOL, [["v2"]]), (USER, [["said", "v2"]])):
        ctx = RunContext()
        ctx.model_turn("agent")
        ctx.deliver("v2", {"text": v2}, STORE)
        ctx.deliver("said", "I took up rowing", kind)
        assert ctx.justifications({"text": f"{v2}; likes rowing"}, "v3") == (premises,
                                                                              "matched")


def test_the_fallback_picks_the_items_sharing_the_write_s_words():
    """Nothing matched as a fact: the write rests on the shown items that share its content
    words (the parking section), not on the other search hit nor the user's question."""
    ctx = RunContext()
    ctx.model_turn("agent")
    ctx.deliver("parking", {"text": "Parking is underground, visitors use the east ramp"}, STORE)
    ctx.deliver("wifi", {"text": "Wi-Fi network is open, no password"}, STORE)
    ctx.deliver("user", "Where do I leave the car at the office?", USER)
    found, rule = ctx.justifications({"text": "Visitors park underground, ramp on the east"},
                                     "note")
    assert (found, rule) == ([["parking"]], "turn-context")
    ctx.deliver("tool", "Sunny all week", TOOL)  # shares nothing: the tool result, as before
    assert ctx.justifications({"text": "Bring sunglasses"}, "note2") == ([["tool"]],
                                                                         "turn-context")


_PIECES = ["Dana", "York", "Harbor", "Lane", "O'Neill's", "Wi-Fi", "user", "rowing", "12", "-",
           "'", "_", "B-17", ". ", "; ", ", ", ": ", "? ", "\n", " (", ") ", '"', " ", " ", " "]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
@example("rowing. York; Dana\nLane (Harbor) 12 Wi-Fi, O'Neill's? user")
@example(", Dana. \"Hull\" - 'Lane' x_York")
def test_the_capitals_of_plain_ascii_text_are_those_the_general_reading_finds(text):
    """The one-pass reading of ASCII text finds the same capitalised words, inside a sentence
    and in all, as the reading by sentences that any other text gets."""
    from rescind.middleware.attribution import _capitals

    assert _capitals(text) == _capitals(text + " é")
