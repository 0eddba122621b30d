"""Values in one canonical form (middleware/values.py): renderings of the same value give the
same fact, and different values never do. Property tests over renderings, and the attribution
that rests on them."""

from __future__ import annotations

import datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from rescind.middleware.attribution import Delivered, FactIndex, attribute, facts
from rescind.middleware.values import (
    canonical,
    compatible,
    date_key,
    numbers,
    scan,
    words_number,
)
from tests.support.examples import examples

_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORD = {1: "first", 2: "second", 3: "third", 5: "fifth", 8: "eighth", 9: "ninth", 12: "twelfth"}
_MONTHS = [datetime.date(2026, m, 1).strftime("%B") for m in range(1, 13)]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _below_1000(n: int, joiner: str, hyphen: str) -> str:
    hundreds, rest = divmod(n, 100)
    parts = [f"{_UNITS[hundreds]} hundred"] if hundreds else []
    if rest:
        tens, unit = divmod(rest, 10)
        text = _UNITS[rest] if rest < 20 else _TENS[tens - 2] + (hyphen + _UNITS[unit]
                                                                  if unit else "")
        parts.append(f"{joiner}{text}" if hundreds else text)
    return " ".join(parts)


def in_words(n: int, joiner: str = "", hyphen: str = "-") -> str:
    """``n`` (0 to 999,999) in English words, British ("and ") or American ("") style."""
    if n == 0:
        return "zero"
    thousands, rest = divmod(n, 1000)
    parts = [f"{_below_1000(thousands, joiner, hyphen)} thousand"] if thousands else []
    if rest:
        parts.append(("and " if thousands and rest < 100 and joiner else "")
                     + _below_1000(rest, joiner, hyphen))
    return " ".join(parts)


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _dates_of(text: str) -> set[str]:
    return {k for kind, k in scan(text)[0] if kind == "date"}


def _one_date(text: str) -> str:
    found = _dates_of(text)
    assert len(found) == 1, (text, found)
    return found.pop()


def _same_day(a: str, b: str) -> bool:
    return any(compatible(x, y) for x in a.split("|") for y in b.split("|"))


@given(st.integers(0, 999_999), st.sampled_from(["", "and "]), st.sampled_from(["-", " "]))
@settings(max_examples=examples(400))
def test_a_cardinal_in_words_is_its_number_in_any_style(n, joiner, hyphen):
    """One to nine hundred ninety-nine thousand, with or without "and", hyphen or space."""
    assert words_number(in_words(n, joiner, hyphen)) == (Decimal(n), False)


@given(st.integers(1, 99), st.sampled_from(["night", "month", "room", "adult", "hour"]))
def test_a_count_in_words_and_in_digits_is_one_quantity(n, noun):
    """"thirty-six months" = "36 months" = "36-month": a number and the noun it counts."""
    plural = noun + "s"
    found = {frozenset(numbers(f"for {in_words(n)} {plural} only")[0]),
             frozenset(numbers(f"for {n} {plural} only")[0]),
             frozenset(numbers(f"a {n}-{noun} plan")[0])}
    assert found == {frozenset({("qty", f"{n} {noun}")})}


@given(st.integers(1, 99), st.integers(1, 99))
def test_different_counts_or_different_nouns_are_different_facts(a, b):
    """"3 nights" is not "4 nights", nor "3 rooms"; a bare small number is no fact at all."""
    nights = numbers(f"{a} nights")[0]
    assert nights != numbers(f"{a} rooms")[0]
    assert (nights == numbers(f"{b} nights")[0]) == (a == b)
    assert numbers(f"in {a}, later")[0] == set()


@given(st.decimals(min_value=Decimal("100"), max_value=Decimal("9999999"), places=2),
       st.integers(0, 3))
def test_a_number_reads_the_same_with_trailing_zeros_or_thousands_separators(x, zeros):
    """"1,500.00" = "1500" = "1500.0"; "4.2700" = "4.27"."""
    plain = format(x, "f")
    whole, _, frac = plain.partition(".")
    grouped = f"{int(whole):,}" + ("." + frac + "0" * zeros if frac else "")
    assert numbers(f"total {plain} due")[0] == numbers(f"total {grouped} due")[0] == {
        ("num", canonical(x))}
    assert canonical(Decimal("4.2700")) == "4.27" and canonical(Decimal("1500.00")) == "1500"


@given(st.decimals(min_value=Decimal("0.01"), max_value=Decimal("99999"), places=2),
       st.decimals(min_value=Decimal("0.01"), max_value=Decimal("99999"), places=2))
def test_two_different_amounts_never_match(a, b):
    """Canonical forms are equal exactly when the values are."""
    fa, fb = numbers(f"rate {a} today")[0], numbers(f"rate {b} today")[0]
    if a != b and fa and fb:
        assert fa != fb
    assert (canonical(a) == canonical(b)) == (a == b)


@given(st.decimals(min_value=Decimal("100"), max_value=Decimal("999999"), places=2),
       st.sampled_from([("€", "EUR"), ("£", "GBP"), ("$", "USD"), ("zł", "PLN")]))
def test_an_amount_reads_the_same_with_its_currency_as_symbol_or_code(x, currency):
    """"€1,250.00" = "1 250,00 EUR" = "EUR 1250": the number, with any separators, and its
    currency beside it."""
    symbol, code = currency
    whole, _, frac = format(x, "f").partition(".")
    spaced = f"{int(whole):,}".replace(",", " ") + "," + frac
    renderings = [f"pay {symbol}{int(whole):,}.{frac} now", f"pay {spaced} {code} now",
                  f"pay {code} {format(x, 'f')} now"]
    if code == "USD":
        renderings.append(f"pay US${int(whole):,}.{frac} now")
    assert {frozenset(scan(r)[0]) for r in renderings} == \
        {frozenset({("num", canonical(x)), ("cur", f"{canonical(x)} {code}")})}


def test_a_small_amount_is_a_fact_with_its_currency_and_a_percentage_with_its_sign():
    """"CHF 90" = "90 CHF" (not 90 EUR); "5%" = "5 percent" = "five per cent"."""
    assert scan("fee CHF 90 per ticket")[0] == scan("a 90 CHF fee")[0] == {("qty", "90 CHF")}
    assert scan("€90")[0] == {("qty", "90 EUR")} != scan("CHF 90")[0]
    assert scan("up 5% on the year")[0] == scan("up 5 percent")[0] == {("qty", "5 %")}
    assert numbers("up five per cent")[0] == {("qty", "5 %")}
    assert scan("up 6%")[0] != scan("up 5%")[0]


def test_numbers_in_words_with_scales_and_halves():
    """"one and a half million" = "1.5 million" = 1500000; "ten thousand" = "10,000"."""
    assert numbers("about one and a half million pumps")[0] >= {("num", "1500000")}
    assert numbers("about 1.5 million pumps")[0] >= {("num", "1500000")}
    assert numbers("ten thousand kroner")[0] >= {("num", "10000")}
    assert scan("NOK 10,000")[0] == {("num", "10000"), ("cur", "10000 NOK")}
    assert scan("10 000 kr")[0] == {("num", "10000"), ("cur", "10000 kr")}  # whichever krona
    assert words_number("nine hundred and ninety-nine thousand nine hundred and ninety-nine") \
        == (Decimal(999_999), False)
    assert words_number("one two") is None and words_number("twenty-first") == (21, True)


_DAY_RANGE = st.dates(min_value=datetime.date(2000, 1, 1), max_value=datetime.date(2099, 12, 31))


@given(_DAY_RANGE)
@settings(max_examples=examples(300))
def test_a_full_date_reads_the_same_in_every_rendering(day):
    """ISO, "14 Dec 2026", "Dec 14, 2026", "December 14th, 2026", "Monday, the 14th of
    December 2026", "14.12.2026", "2026/12/14" and, when the day is past 12, "14/12/2026"."""
    month = _MONTHS[day.month - 1]
    renderings = [day.isoformat(), f"{day.day} {month[:3]} {day.year}",
                  f"{month[:3]} {day.day}, {day.year}", f"{month} {_ordinal(day.day)}, {day.year}",
                  f"{_DAYS[day.weekday()]}, the {_ordinal(day.day)} of {month} {day.year}",
                  f"{day.day:02d}.{day.month:02d}.{day.year}", f"{day.year}/{day.month}/{day.day}",
                  f"{day.day:02d}-{month[:3]}-{day.year}"]
    if day.day > 12:
        renderings += [f"{day.day}/{day.month}/{day.year}", f"{day.month}/{day.day}/{day.year}"]
    want = date_key(day.year, day.month, day.day)
    for text in renderings:
        assert _one_date(f"due {text}.") == want, text


@given(_DAY_RANGE, st.integers(1, 400))
@settings(max_examples=examples(300))
def test_partial_dates_match_the_day_they_can_be_and_no_other(day, shift):
    """"14 Dec", "Dec 14", "the 14th", "monday the 14th", "Mon 14th", "the fourteenth of
    December" can be 2026-12-14; another day, a contradicting weekday or month cannot."""
    full = _one_date(day.isoformat())
    other = day + datetime.timedelta(days=shift)
    month, weekday = _MONTHS[day.month - 1], _DAYS[day.weekday()]
    the_day = f"the {_ordinal(day.day)}"
    cases = {  # a rendering -> what of the day it states
        f"{day.day} {month[:3]}": ("month", "day"), f"{month} {day.day}": ("month", "day"),
        f"the {_ORD.get(day.day, _ordinal(day.day))} of {month}": ("month", "day"),
        f"{weekday} {day.day} {month}": ("month", "day", "weekday"), the_day: ("day",),
        f"{weekday.lower()} {the_day}": ("day", "weekday"),
        f"{weekday[:3]} {_ordinal(day.day)}": ("day", "weekday"),
        f"{month} {day.year}": ("year", "month")}
    parts = {"year": lambda d: d.year, "month": lambda d: d.month, "day": lambda d: d.day,
             "weekday": lambda d: d.weekday()}
    for text, stated in cases.items():
        partial = _one_date(f"on {text}, ok")
        assert _same_day(partial, full), text
        differs = any(parts[p](other) != parts[p](day) for p in stated)
        assert _same_day(partial, _one_date(other.isoformat())) == (not differs), (text, other)
    wrong_weekday = _DAYS[(day.weekday() + 1) % 7]
    assert not _same_day(_one_date(f"{wrong_weekday} the {_ordinal(day.day)}"), full)


def test_a_weekday_alone_is_no_date_and_ambiguous_day_month_states_both_readings():
    """"on Monday" and "the 3rd floor" are no dates; "01/12/2026" can be 1 Dec or 12 Jan,
    "14/12/2026" only one."""
    assert _dates_of("see you on Monday") == set()
    assert _dates_of("take the lift to the 3rd floor") == set()
    assert _dates_of("could we do the 14th instead?") == {date_key(None, None, 14)}
    assert _dates_of("monday the 14th works") == {date_key(None, None, 14, 0)}
    assert _dates_of("the 2026 report") == set()
    both = _one_date("rate of 01/12/2026")
    assert _same_day(both, date_key(2026, 12, 1)) and _same_day(both, date_key(2026, 1, 12))
    assert not _same_day(both, date_key(2026, 12, 2))
    assert _one_date("Thursday 17/12 at noon") == date_key(None, 12, 17, 3)


def test_a_date_range_states_both_ends():
    """"18-21 Dec 2026" and "Dec 18-21, 2026" state the 18th and the 21st of December 2026."""
    want = {date_key(2026, 12, 18), date_key(2026, 12, 21)}
    assert _dates_of("Kraków 18-21 Dec 2026: hotel") == want
    assert _dates_of("Kraków Dec 18-21, 2026: hotel") == want
    assert _dates_of("from 18 to 21 December 2026") == want


@given(st.integers(0, 23), st.integers(0, 59))
def test_a_time_reads_the_same_in_every_rendering(hour, minute):
    """"09:30" = "9:30" = "9.30 am" = "9:30am" = "9:30 a.m." = "09h30"; ranges give both ends."""
    want = {("time", f"{hour:02d}:{minute:02d}")}
    h12, ap = (hour % 12 or 12), ("am" if hour < 12 else "pm")
    for text in (f"{hour:02d}:{minute:02d}", f"{hour}:{minute:02d}", f"{h12}.{minute:02d} {ap}",
                 f"{h12}:{minute:02d}{ap}", f"{h12}:{minute:02d} {ap[0]}.m.",
                 f"{hour:02d}h{minute:02d}"):
        assert scan(f"at {text} sharp")[0] == want, text
    other = (hour * 60 + minute + 1) % (24 * 60)
    assert scan(f"at {other // 60:02d}:{other % 60:02d}")[0] != want
    assert scan("10:00-11:00")[0] == {("time", "10:00"), ("time", "11:00")}
    assert scan("open 9-11am")[0] == {("time", "09:00"), ("time", "11:00")}
    assert scan("lunch 11:30-1 pm")[0] == {("time", "11:30"), ("time", "13:00")}
    assert scan("back by noon")[0] == {("time", "12:00")}


def test_a_write_restating_values_in_other_forms_rests_on_the_items_stating_them():
    """A note with "3 nights", "Monday 14 Dec 2026", "4.27", a 36-month cycle rests on the
    message saying "three nights ... monday the 14th", the rate "4.2700" and the handbook's
    "thirty-six months"; an item with other values ("3 rooms", "the 15th", "4.28") is none."""
    user = Delivered("user", "three nights from monday the 14th please")
    rate = Delivered("fx", "ECB reference rate: 1 EUR = 4.2700 PLN")
    book = Delivered("kb", "laptops are replaced every thirty-six months")
    decoys = [Delivered("rooms", "3 rooms on the 15th"), Delivered("fx2", "1 EUR = 4.2800 PLN"),
              Delivered("kb2", "phones are replaced every twenty-four months")]
    note = "Monday 14 Dec 2026, 3 nights at 4.27; laptop on a 36-month cycle"
    assert attribute(note, [user, rate, book, *decoys]).justifications == [("fx", "kb", "user")]
    assert attribute("3 rooms", [user, rate, book]).rule == "none"


def test_a_topic_given_as_input_is_not_a_statement_of_the_user_s():
    """"heat pumps in norway" as the input: a brief titled with it rests on what states its
    facts, not on the topic; a short statement ("I live in Porto") still is the user's."""
    from rescind.middleware.attribution import asked_names, statements
    topic = "heat pumps in norway"
    asked = asked_names(topic)
    assert statements(topic) == set() and statements("I took up rowing") != set()
    assert {f for f in facts(topic) if f[0] in ("text", "name")} <= asked
    assert asked_names("I live in Porto with Ngozi") == set()
    index = FactIndex()
    index.add("page", facts("NVE: Norway has 1.5 million heat pumps"))
    index.add("topic", facts(topic) - asked)
    assert index.attribute("Heat pumps in Norway: 1.5 million").justifications == [("page",)]
