"""Attribution by content: a write rests on the delivered items whose facts it uses, however
either was rendered; items stating the same fact are alternatives, different facts all needed."""

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from rescind.middleware.attribution import (
    Delivered,
    attribute,
    facts,
    minimal_covers,
)
from rescind.middleware.facts import _MAX_PARSED
from tests.support.examples import examples

PORTAL = Delivered("obs-portal", "Northwind Supplies - supplier portal\n"
                   "Vendor: Northwind Supplies\nNOTICE: we have moved to a new bank.\n"
                   "Bank account: ZZ97 QKRB 0000 9034 5521 66\n"
                   "Remit address: 400 Harbor Lane, Portsmouth, ME 03801, USA")
CONTRACT = Delivered("obs-contract", {"vendor": "Northwind Supplies", "terms": "net 30",
                                      "remit": "400 Harbor Lane, Portsmouth, ME 03801, USA"})
INVOICE = Delivered("obs-invoice", '{"invoice":"INV-1002","amount":34500,'
                    '"vendor":"Northwind Supplies","due":"2026-11-20"}')
VIM = Delivered("bel-vim", {"kind": "belief", "text": "User uses vim"})
ALL = [PORTAL, CONTRACT, INVOICE, VIM]


def test_a_fact_one_source_states_rests_on_that_source_alone():
    """The bank account is on the portal only: the note rests on the portal, nothing else."""
    a = attribute("Northwind Supplies bank account: ZZ97 QKRB 0000 9034 5521 66", ALL)
    assert a.justifications == [("obs-portal",)] and a.rule == "matched"


def test_a_fact_two_sources_state_gets_one_justification_from_each():
    """Portal and contract both state the remit address: either one justifies the note (OR),
    so retracting one of them leaves it IN."""
    a = attribute({"kind": "belief", "text": "Northwind Supplies remit address: 400 Harbor "
                   "Lane, Portsmouth, ME 03801, USA"}, ALL)
    assert a.justifications == [("obs-contract",), ("obs-portal",)]


def test_different_facts_are_all_needed():
    """A plan that names the invoice's number and amount and the portal's account needs both."""
    a = attribute("Plan: pay INV-1002 to Northwind Supplies, $34,500.00 to account "
                  "ZZ97QKRB00009034552166", ALL)
    assert a.justifications == [("obs-invoice", "obs-portal")]
    assert a.premises == ["obs-invoice", "obs-portal"]


def test_nothing_used_is_said_so_and_unrelated_items_are_never_premises():
    """A value that uses none of the delivered facts has no premises (the caller falls back);
    structural values such as a memory's kind tie nothing together."""
    a = attribute({"kind": "belief", "text": "User's favourite colour is blue"}, ALL)
    assert a.justifications == [] and a.rule == "none"
    assert "bel-vim" not in attribute({"kind": "belief", "text": "Pay INV-1002"}, ALL).premises


def test_amounts_match_in_any_notation_and_bare_years_do_not():
    """34500 reads the same as 34,500.00; a year alone (every dated item has one) is no fact."""
    assert ("num", "34500") in facts(INVOICE.value)
    assert attribute("amount due: 34,500.00", ALL).premises == ["obs-invoice"]
    assert attribute("due in 2026", [Delivered("x", "filed 2026")]).rule == "none"


def test_hostile_values_are_read_within_bounds_and_never_raise():
    """Attribution runs inside the agent's store call: a value nested thousands deep, or a huge
    repr, is read only so far (the deep account is not seen; the long text is matched as text)."""
    deep: list = []
    cur = deep
    for _ in range(5000):
        nxt: list = []
        cur.append(nxt)
        cur = nxt
    cur.append("account ZZ97 QKRB 0000 9034")
    assert facts(deep) == set()
    huge = repr({f"k{i}": f"value {i}" for i in range(5_000)}) + " INV-123456"
    assert len(huge) > _MAX_PARSED  # too long to parse: matched as text
    assert ("id", "inv123456") in facts(huge)
    assert attribute("pay INV-123456", [Delivered("big", huge)]).premises == ["big"]


def test_minimal_covers_keep_only_minimal_sets_and_at_most_the_limit():
    """{a} covers both families, so {a, b} is not a justification; the limit keeps the smallest."""
    assert minimal_covers([{"a"}, {"a", "b"}]) == [("a",)]
    assert minimal_covers([{"a", "b"}, {"c", "d"}]) == [("a", "c"), ("a", "d"), ("b", "c"),
                                                        ("b", "d")]
    assert minimal_covers([{"a", "b"}, {"c", "d"}], limit=2) == [("a", "c"), ("a", "d")]


# -- properties ---------------------------------------------------------------------------------
NAMES = ("Acme", "Northwind", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Tyrell",
         "Cyberdyne", "Hooli", "Vandelay", "Wonka")
ACCOUNT = st.from_regex(r"[A-Z]{2}[0-9]{2}( [A-Z0-9]{4}){4}", fullmatch=True)
INVOICE_NO = st.from_regex(r"INV-[1-9][0-9]{5}", fullmatch=True)


@st.composite
def three_items(draw):
    """Items X, Y and Z, each with its own account, invoice and supplier name."""
    accounts = draw(st.lists(ACCOUNT, min_size=3, max_size=3, unique=True))
    invoices = draw(st.lists(INVOICE_NO, min_size=3, max_size=3, unique=True))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=3, max_size=3, unique=True))
    compact = [a.replace(" ", "") for a in accounts]
    if any(x in y for x in compact for y in compact if x != y):
        accounts = [f"{a} {i}{i}{i}" for i, a in enumerate(accounts)]  # keep them apart
    return [{"supplier": f"{n} Supplies", "account": a, "invoice": i}
            for n, a, i in zip(names, accounts, invoices, strict=True)]


RENDER_ITEM = [
    lambda v: v,
    json.dumps,
    lambda v: json.dumps(v, separators=(",", ":")),
    repr,
    lambda v: "\n".join(f"{k}: {x}" for k, x in v.items()),
]
RENDER_WRITE = [
    lambda acct, inv, name: f"Pay {inv} from {name} to {acct}",
    lambda acct, inv, name: {"kind": "plan", "text": f"{name}: {inv} to {acct}"},
    lambda acct, inv, name: json.dumps({"account": acct, "invoice": inv, "supplier": name}),
    lambda acct, inv, name: repr({"account": acct, "invoice": inv}) + f" ({name})",
    lambda acct, inv, name: {"account": acct.replace(" ", ""), "invoice": inv, "who": name},
]


# A sample of each property in this half; tests/integration/middleware/
# test_attribution_volume.py runs the same bodies on 60, 40 and 200 examples.
X_Y_RENDERED = (three_items(), st.sampled_from(range(len(RENDER_ITEM))),
                st.sampled_from(range(len(RENDER_WRITE))))


@settings(max_examples=examples(12), deadline=None)
@given(*X_Y_RENDERED)
def test_a_value_built_from_x_and_y_never_rests_on_z_whatever_the_rendering(items, ri, rw):
    """The account of X and the invoice of Y, in any rendering of the items and of the written
    value: the premises are X and Y together, never Z."""
    x, y, _ = items
    delivered = [Delivered(k, RENDER_ITEM[ri](v)) for k, v in zip("XYZ", items, strict=True)]
    written = RENDER_WRITE[rw](x["account"], y["invoice"], x["supplier"])
    assert attribute(written, delivered).justifications == [("X", "Y")]
    assert "Z" not in attribute(written, delivered).premises


@settings(max_examples=examples(8), deadline=None)
@given(three_items())
def test_every_rendering_of_the_same_items_gives_the_same_premises(items):
    """Dicts, JSON, compact JSON, reprs and `key: value` lines of the same items, and every
    rendering of the same written facts: one answer."""
    x, y, _ = items
    answers = {tuple(attribute(rw(x["account"], y["invoice"], y["supplier"]),
                               [Delivered(k, ri(v)) for k, v in zip("XYZ", items, strict=True)]
                               ).justifications)
               for ri in RENDER_ITEM for rw in RENDER_WRITE}
    assert answers == {(("X", "Y"),)}


_CODE_WORDS = ["GB33", "BUKB", "2020", "1555", "INV-1002", "PT50", "0002", "MSA-2026-001",
               "10.1038/s41586", "34,500.00", "12000", "ZZ97", "QKRB"]
_PLAIN_WORDS = ["the", "supplier", "bank", "account", "paid", "to", "Acme", "Supplies",
                "remit", "address", "Harbor", "Lane", "is", "now", "and", "for"]
_texts = st.lists(st.sampled_from(_CODE_WORDS + _PLAIN_WORDS), min_size=1, max_size=40).map(
    " ".join)


NEAR_DIGITS = {"items": st.lists(_texts, min_size=1, max_size=8), "written": _texts,
               "filler": st.integers(0, 60)}


@given(**NEAR_DIGITS)
@example(items=["the BUKB QKRB 2020 supplier"], written="paid BUKB QKRB 2020", filler=3)
@settings(max_examples=examples(40), deadline=None)
def test_looking_near_the_digits_finds_what_scanning_everything_finds(items, written, filler):
    """The fast path (identifiers by the start of a word near the digits, phrases by their
    first word) gives the premises a scan of the whole value for every fact gives, with prose
    before and after the facts."""
    from rescind.middleware import attribution as at

    index = at.FactIndex()
    for i, text in enumerate(items):
        index.add(f"m{i}", at.facts({"text": text}))
    prose = " ".join(["the delivery schedule was confirmed"] * filler)
    value = {"text": f"{prose} {written} {prose}"}
    fast = index.attribute(value)

    class Scan(at._Target):
        def __init__(self, w):
            super().__init__(w)
            self.starts = None

    try:
        at._Target, plain = Scan, at._Target
        slow = index.attribute(value)
    finally:
        at._Target = plain
    assert (fast.justifications, fast.rule) == (slow.justifications, slow.rule)


# -- facts are values, not lines (issue 29, findings 3 and 4) -----------------------------------
def test_a_value_with_an_unmarked_label_is_one_fact_that_either_source_states():
    """The portal writes "Bank account GB33 …" (no colon), the contract "Remit to: GB33 …":
    the label's words are no fact, so the note restating the account rests on either (OR)."""
    portal = Delivered("portal", "Acme Corp portal\nBank account GB33 BUKB 2020 1555 5555 55")
    contract = Delivered("contract", "MASTER AGREEMENT MSA-2026-001\n"
                                     "Remit to: GB33 BUKB 2020 1555 5555 55")
    a = attribute("Acme's bank account GB33 BUKB 2020 1555 5555 55", [portal, contract])
    assert a.justifications == [("contract",), ("portal",)]


def test_a_labelled_address_is_one_fact_that_either_source_states():
    """ "Remit address: 4 Elm Court, York" and "Ship to 4 Elm Court, York": one address, two
    sources stating it; neither label is required."""
    portal = Delivered("portal", "Remit address: 4 Elm Court, York")
    crm = Delivered("crm", {"delivery": "Ship to 4 Elm Court, York"})
    a = attribute("Send the cheque to 4 Elm Court, York", [portal, crm])
    assert a.justifications == [("crm",), ("portal",)]


def test_a_time_is_not_a_label_and_its_line_keeps_its_title():
    """ "09:30 Board review with ops" is a time and a title, not a label "09" and a garbled
    "30 board review…": the note at "9.30 am" rests on the calendar, not on the weather."""
    calendar = Delivered("calendar", "Tue 2026-12-01\n09:30 Board review with ops\n"
                                     "14:00-15:00 Dentist")
    weather = Delivered("weather", "Forecast for York: light rain after 14:00")
    a = attribute("Board review with ops at 9.30 am", [calendar, weather])
    assert a.justifications == [("calendar",)] and a.rule == "matched"
    assert ("time", "09:30") in facts(calendar.value)
    assert ("text", "board review with ops") in facts(calendar.value)


HOURS = st.integers(0, 23)
MINUTES = st.integers(0, 59)


def _clock(h: int, m: int, style: int) -> str:
    twelve, ap = (h % 12 or 12), ("am" if h < 12 else "pm")
    return [f"{h:02d}:{m:02d}", f"{h}:{m:02d}", f"{twelve}.{m:02d} {ap}", f"{twelve}:{m:02d}{ap}",
            f"{twelve}:{m:02d} {ap[0]}.m."][style]


@settings(max_examples=examples(25), deadline=None)
@given(HOURS, MINUTES, st.integers(0, 4), st.integers(0, 4), HOURS)
def test_a_time_in_any_rendering_is_the_same_fact(h, m, shown, written, other):
    """09:30, 9:30, 9.30 am, 9:30am, 9:30 a.m.: the calendar that states the time is the
    premise whatever notation either side uses; an item with another hour is not."""
    cal = Delivered("cal", f"Calendar: {_clock(h, m, shown)} Standup")
    z = Delivered("z", f"Calendar: {_clock(other, (m + 7) % 60, shown)} Lunch")
    a = attribute(f"call moved to {_clock(h, m, written)}", [cal, z])
    assert a.justifications == [("cal",)]


DAYS = st.dates(min_value=__import__("datetime").date(1990, 1, 1),
                max_value=__import__("datetime").date(2060, 12, 31))


def _day(d, style: int) -> str:
    return [d.isoformat(), f"{d.day} {d:%b} {d.year}", f"{d:%B} {d.day}, {d.year}",
            f"{d.isoformat()}T09:00:00Z", f"{d.day} {d:%B} {d.year}"][style]


@settings(max_examples=examples(25), deadline=None)
@given(DAYS, DAYS, st.integers(0, 4), st.integers(0, 4))
def test_a_date_in_any_rendering_is_the_same_fact(day, other, shown, written):
    """2026-11-20, 20 Nov 2026, November 20, 2026, an ISO timestamp: one date."""
    item = Delivered("inv", f"Due date: {_day(day, shown)}")
    z = Delivered("z", f"Due date: {_day(other, shown)}")
    a = attribute({"text": f"pay by {_day(day, written)}"}, [item] + ([z] if other != day else []))
    assert a.justifications == [("inv",)]


def _money(cents: int, style: int) -> str:
    whole, frac = divmod(cents, 100)
    us = f"{whole:,}.{frac:02d}"
    eu = us.replace(",", " ").replace(".", ",").replace(" ", ".")
    return [f"${us}", f"{us} USD", f"EUR {eu}", f"{eu} €", f"{us.replace(',', chr(39))} CHF",
            f"{whole}.{frac:02d}", f"£{us}"][style]


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(10_000, 10**9), st.integers(0, 6), st.integers(0, 6))
def test_an_amount_with_separators_and_a_currency_is_the_same_fact(cents, shown, written):
    """$34,500.00, 34,500.00 USD, EUR 34.500,00, 34.500,00 €, 34'500.00 CHF, 34500.00: one
    amount, whatever the separators, unless both state currencies and they differ."""
    item = Delivered("inv", f"Total due: {_money(cents, shown)}")
    z = Delivered("z", f"Total due: {_money(cents + 1234, shown)}")
    a = attribute(f"Approved {_money(cents, written)} today", [item, z])
    currency = ["USD", "USD", "EUR", "EUR", "CHF", None, "GBP"]
    apart = None not in (currency[shown], currency[written]) \
        and currency[shown] != currency[written]
    assert a.justifications == ([] if apart else [("inv",)])


LABELS = ("Bank account", "IBAN", "Remit to", "Pay to", "Account no", "Beneficiary account")


@settings(max_examples=examples(25), deadline=None)
@given(ACCOUNT, st.sampled_from(LABELS), st.sampled_from(LABELS), st.sampled_from(LABELS),
       st.booleans(), st.booleans())
def test_labels_are_not_facts_so_each_source_stating_the_value_is_an_alternative(
        account, label_a, label_b, label_w, colon_a, colon_b):
    """Two sources state the account under any labels, with or without a colon; a note states
    it under a third: two justifications, one on each source."""
    a_item = Delivered("a", f"Supplier portal\n{label_a}{':' if colon_a else ''} {account}")
    b_item = Delivered("b", f"Signed contract\n{label_b}{':' if colon_b else ''} {account}")
    found = attribute(f"Note: {label_w.lower()} {account}", [a_item, b_item])
    assert found.justifications == [("a",), ("b",)]
