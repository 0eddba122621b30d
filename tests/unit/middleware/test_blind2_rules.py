"""The second blind set's classes, as rules of values and attribution: times said in words are
the times written in digits, a name inside a longer name the write uses is no fact of its own,
a name printed in capitals is a name, a dict's key words are words its item has, and a
justification holding another once the user's messages count as one source is not minimal."""

from hypothesis import given, settings
from hypothesis import strategies as st

from rescind.middleware.attribution import Delivered, attribute, facts, key_words
from rescind.middleware.context import STORE, TOOL, USER, WRITTEN, RunContext
from rescind.middleware.values import scan

_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty"]


def _say(n: int, hyphen: str = "-") -> str:
    """0 < n < 60 in words."""
    if n < 20:
        return _UNITS[n]
    tens, unit = divmod(n, 10)
    return _TENS[tens - 2] + (f"{hyphen}{_UNITS[unit]}" if unit else "")


def _times(text: str) -> set[tuple[str, str]]:
    return {f for f in scan(text)[0] if f[0] == "time"}


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12), st.integers(0, 59), st.sampled_from(["-", " "]))
def test_a_time_said_in_words_is_the_time_in_digits(hour, minute, hyphen):
    """"half past nine" = "quarter to ten"+15 min = "nine thirty" (said at a time) = "9:30";
    "in the evening" and "pm" are the afternoon's hours; counts and ranges are no time."""
    want = _times(f"at {hour}:{minute:02d}")
    assert want == {("time", f"{hour:02d}:{minute:02d}")}
    word, after = _say(hour), _say(hour % 12 + 1)
    said = [f"at {word} {_say(minute, hyphen)}" if minute >= 10 else
            f"at {word} oh {_say(minute)}" if minute else f"{word} o'clock"]
    if minute == 0:
        said += [f"{hour} o'clock", f"{word} oclock"]
    elif minute == 30:
        said += [f"half past {word}", f"half past {hour}"]
    elif minute == 15:
        said += [f"quarter past {word}", f"a quarter past {hour}"]
    elif minute == 45:
        said += [f"quarter to {after}", f"a quarter to {hour % 12 + 1}"]
    elif minute < 30:
        said += [f"{_say(minute, hyphen)} past {word}", f"{minute} minutes past {word}"]
    else:
        said += [f"{_say(60 - minute, hyphen)} minutes to {after}", f"at {60 - minute} to "
                 f"{after}"]
    for text in said:
        assert _times(f"remind me {text} please") == want, text
    if hour < 12:
        evening = {("time", f"{hour + 12:02d}:{minute:02d}")}
        assert _times(f"{said[0]} in the evening") == evening, said[0]
        assert _times(f"{said[0]} pm") == evening, said[0]
        assert _times(f"{said[0]} in the morning") == want, said[0]


def test_counts_and_ranges_in_words_are_no_time():
    """A count ("nine thirty people") or a range ("three to five days", "ages 2 to 5", "ten to
    one odds") is no time; the same words said as a time are one."""
    for text in ("nine thirty people came", "three to five days", "ages 2 to 5",
                 "ten to one odds", "from 10 to 12 people", "one to one meeting"):
        assert _times(text) == set(), text
    assert _times("see you at ten to one") == {("time", "12:50")}


def test_a_reminder_at_a_time_said_in_words_rests_on_the_user_who_said_it():
    """The user says "at half past nine in the morning"; the reminder writes "09:30": it rests
    on the tool result for the rest and on the user for the time."""
    tool = Delivered("obs-tool", "Inspection of HB-2210 due 05/2027")
    user = Delivered("obs-user", "set a reminder at half past nine in the morning")
    other = Delivered("obs-other", "the office opens at 08:00")
    found = attribute("Book the inspection of HB-2210 (due 05/2027) at 09:30", [tool, user,
                                                                                other])
    assert found.justifications == [("obs-tool", "obs-user")]


def test_a_name_inside_a_longer_name_the_write_uses_is_no_fact_of_its_own():
    """The write names "Springfield-North" (the depot's): the town hall's "Springfield" is no
    fact of it, so it is no premise; a write naming "Springfield" alone does rest on it."""
    hall = Delivered("obs-hall", "Licence issued by the town hall of Springfield")
    depot = Delivered("obs-depot", "Inspection centre Springfield-North, bay HB7")
    assert attribute("Inspection booked at Springfield-North, bay HB7", [hall, depot]
                     ).justifications == [("obs-depot",)]
    assert attribute("Licence renewal in Springfield", [hall, depot]
                     ).justifications == [("obs-hall",)]


def test_a_name_printed_in_capitals_is_a_name_and_a_shouted_word_is_none():
    """A register's "BLUE HERON FOODS LTD" states the name "Blue Heron Foods" (so the user who
    named it too is an alternative for it, not needed); a single word in capitals, a currency
    code or a shouted sentence is no name."""
    register = Delivered("obs-register", "Company 0912 4471 · BLUE HERON FOODS LTD · Leeds")
    user = Delivered("obs-user", "Please add Blue Heron Foods as a customer")
    assert attribute("Customer Blue Heron Foods is registered in Leeds", [register, user]
                     ).justifications == [("obs-register",)]
    names = {f for f in facts("URGENT: PAY EUR 400 NOW; THIS IS YOUR VERY LAST REMINDER") if
             f[0] == "name"}
    assert names == set()
    assert ("name", "blue heron foods") in facts({"company": "BLUE HERON FOODS LTD"})


def test_the_words_of_a_record_s_keys_are_words_the_record_has():
    """A record's "credit_limit_sek" names the currency of its value: a note saying "SEK"
    rests on the record, not also on the user who said "SEK"; without the key, the user is
    needed for it."""
    assert {("key", "nok"), ("key", "limit"), ("key", "distance")} <= key_words(
        {"limit_nok": 250000, "trip": [{"distanceKm": 4}]})
    assert key_words("plain text") == set()

    def run(record: dict) -> list[list[str]]:
        ctx = RunContext()
        ctx.model_turn("agent")
        ctx.deliver("said", "Run the credit check. They settle invoices in SEK.", USER)
        ctx.deliver("record", record, TOOL)
        return ctx.justifications({"text": "Rating B1, limit 120,000 SEK"}, "note")[0]

    assert run({"rating": "B1", "credit_limit_sek": 120000}) == [["record"]]
    assert run({"rating": "B1", "credit_limit": 120000}) == [["record", "said"]]


def test_a_justification_adding_a_note_to_the_user_s_own_messages_is_not_minimal():
    """The outcome's "one evening" is stated by the plan note and by a prompt restating it
    (the user's, as the program sent it); the project code by the user's first message only.
    {message, prompt, search} and {message, plan, search} are both minimal by items, but the
    two messages are one source, the user: the plan adds nothing and is dropped. With no
    prompt restating it, the plan is needed and stays."""

    def run(prompt: bool) -> list[list[str]]:
        ctx = RunContext()
        ctx.model_turn("agent")
        ctx.deliver("goal", "Team dinner on 3 June 2027 for 9 people, bill project PRJ-771",
                    USER)
        ctx.deliver("plan", {"text": "Dinner 3 June 2027: one evening, 9 people"}, WRITTEN)
        ctx.model_turn("agent")
        if prompt:
            ctx.deliver("prompt", "Execute the plan: one evening, 9 people", USER)
        ctx.deliver("search", "Brasserie Korenmarkt, set menu 58,00 EUR", TOOL)
        ctx.model_turn("agent")
        return ctx.justifications({"text": "PRJ-771: Brasserie Korenmarkt for one evening, "
                                           "3 June 2027"}, "outcome")[0]

    assert run(prompt=True) == [["goal", "prompt", "search"]]
    assert run(prompt=False) == [["goal", "plan", "search"]]


def test_items_of_other_kinds_are_not_merged_into_one_source():
    """Two store items (not the user's messages) stating one fact each are not one source: a
    cover with either stays."""
    ctx = RunContext()
    ctx.model_turn("agent")
    ctx.deliver("a", {"text": "Desk HX-7781 is in Leeds"}, STORE)
    ctx.deliver("b", {"text": "Desk HX-7781 moved on 4 May 2026"}, STORE)
    ctx.deliver("c", {"text": "Leeds office opened 4 May 2026"}, STORE)
    found = ctx.justifications({"text": "Desk HX-7781, Leeds, since 4 May 2026"}, "n")[0]
    assert sorted(map(sorted, found)) == [["a", "b"], ["a", "c"], ["b", "c"]]
