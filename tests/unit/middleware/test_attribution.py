"""Attribution by content: a write rests on the delivered items whose facts it uses, however
either was rendered; items stating the same fact are alternatives, different facts all needed."""

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from rescind.middleware.attribution import Delivered, attribute, facts, minimal_covers

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
    assert ("num", "34500.00") in facts(INVOICE.value)
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
    huge = repr({f"k{i}": f"value {i}" for i in range(20_000)}) + " INV-123456"
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


@settings(max_examples=60, deadline=None)
@given(three_items(), st.sampled_from(range(len(RENDER_ITEM))),
       st.sampled_from(range(len(RENDER_WRITE))))
def test_a_value_built_from_x_and_y_never_rests_on_z_whatever_the_rendering(items, ri, rw):
    """The account of X and the invoice of Y, in any rendering of the items and of the written
    value: the premises are X and Y together, never Z."""
    x, y, _ = items
    delivered = [Delivered(k, RENDER_ITEM[ri](v)) for k, v in zip("XYZ", items, strict=True)]
    written = RENDER_WRITE[rw](x["account"], y["invoice"], x["supplier"])
    assert attribute(written, delivered).justifications == [("X", "Y")]
    assert "Z" not in attribute(written, delivered).premises


@settings(max_examples=40, deadline=None)
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


@given(items=st.lists(_texts, min_size=1, max_size=8), written=_texts,
       filler=st.integers(0, 60))
@example(items=["the BUKB QKRB 2020 supplier"], written="paid BUKB QKRB 2020", filler=3)
@settings(max_examples=200, deadline=None)
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
