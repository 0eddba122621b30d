"""Source names in canonical form: every spelling of a name maps to one, and the forms are
fixed points (canonicalising twice changes nothing)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rescind.contract import events as ev
from rescind.contract import identity as ident
from tests.support.examples import examples

NORTHWIND = ["northwind", "Northwind", " northwind", "NORTHWIND  ", "ｎｏｒｔｈｗｉｎｄ",
             "north\u200bwind", "\u202enorthwind\u202c", "\ufeffNorth\u00adwind", "north\u2060wind",
             "\u2066northwind\u2069", "northwind\u200d", "Ｎｏｒｔｈｗｉｎｄ\u3000"]


@pytest.mark.parametrize("spelling", NORTHWIND)
def test_every_spelling_of_a_vendor_is_one_name(spelling):
    """Case, full-width forms, outer white space, zero-width and bidi characters: one name."""
    assert ident.text(spelling) == "northwind"
    assert ident.source_name(f"portal:{spelling}") == "portal:northwind"


@pytest.mark.parametrize("spelling", ["n\u043erthwind", "N\u041eRTHWIND", "\u039d\u039fRTHWIND",
                                      "nort\u04bbwind", "northw\u0456nd",
                                      "\u039d\u039fR\u03a4\u0397W\u0399\u039dD",
                                      "n\u043ert\u04bbw\u0456nd\u200b"])
def test_latin_look_alikes_from_other_scripts_are_one_name(spelling):
    """A Cyrillic о, a Greek Ν, a Cyrillic һ or і drawn inside a Latin name: the same name (an
    attacker's second spelling would otherwise be a second source, a second trust domain)."""
    assert ident.text(spelling) == "northwind"
    assert ident.host(spelling + ".com") == "northwind.com"


def test_a_word_of_another_language_keeps_its_letters():
    """Only look-alikes are read as Latin: a Russian or German word stays as written, and a
    word made of look-alikes alone reads as the Latin word it imitates."""
    assert ident.text("Сбербанк") == "сбербанк" and ident.text("Müller") == "müller"
    assert ident.text("\u0430\u0440\u0440\u04cf\u0435") == "apple"  # all Cyrillic
    assert ident.latin("Zoë Łukasik") == "Zoë Łukasik"


def test_inner_white_space_is_collapsed_not_removed():
    """Runs of white space (tabs, no-break and ideographic spaces) become one space."""
    assert ident.text("  Acme \t\u00a0 Corp\u3000 ") == "acme corp"
    assert ident.text("acme corp") != ident.text("acmecorp")


@pytest.mark.parametrize("spelling", ["Example.COM", "example.com.", "https://Example.com/a?b",
                                      "//example.com:8443/", "user:pw@EXAMPLE.com",
                                      "ｅｘａｍｐｌｅ．ｃｏｍ", "exam\u200bple.com"])
def test_hosts_and_urls_name_their_host(spelling):
    """A host in any case, with a trailing dot, inside a URL, with a port or a user: one host."""
    assert ident.host(spelling) == "example.com"


def test_an_international_host_is_punycode():
    """IDNA: the Unicode and the punycode spellings of a host are one name."""
    assert ident.host("Bücher.example") == "xn--bcher-kva.example"
    assert ident.host("xn--bcher-kva.example") == "xn--bcher-kva.example"
    assert ident.host("BÜCHER.example.") == "xn--bcher-kva.example"


@pytest.mark.parametrize("spelling", ["billing@northwind.com", "Billing@Northwind.COM",
                                      "Northwind Billing <billing@northwind.com>",
                                      "\"Billing, NW\" <Billing@northwind.com.>",
                                      "mailto:billing@northwind.com", " <billing@northwind.com> ",
                                      "billing@ｎｏｒｔｈｗｉｎｄ.com"])
def test_e_mail_addresses_drop_display_names_and_case(spelling):
    """Display name, angle brackets, mailto:, case and the domain's trailing dot: one address."""
    assert ident.email(spelling) == "billing@northwind.com"


def test_different_addresses_stay_different():
    """Canonical forms do not merge what differs: two senders, two addresses."""
    assert ident.email("a@northwind.com") != ident.email("b@northwind.com")
    assert ident.email("a@northwind.com") != ident.email("a@northwind.co")


@pytest.mark.parametrize("spelling", ["GB33BUKB20201555555555", "gb33 bukb 2020 1555 5555 55",
                                      "IBAN GB33 BUKB 2020 1555 5555 55", "IBAN: GB33-BUKB-2020",
                                      "ＧＢ３３ ＢＵＫＢ ２０２０ １５５５ ５５５５ ５５",
                                      "GB33\u200bBUKB20201555555555"])
def test_ibans_are_compact_and_upper_case(spelling):
    """Groups, case, an IBAN label and full-width digits: the compact upper-case IBAN."""
    assert ident.iban(spelling).startswith("GB33BUKB2020")
    assert " " not in ident.iban(spelling)


def test_normalise_dispatches_by_kind_and_refuses_unknown_kinds():
    """``normalise`` applies the named normaliser; an unknown one is a ValueError."""
    assert ident.normalise(" Example.com. ", "host") == "example.com"
    assert ident.normalise(42) == "42"
    with pytest.raises(ValueError, match="unknown normaliser"):
        ident.normalise("x", "phone")


# A sample of each property here; tests/integration/contract/test_identity_volume.py runs the
# same properties on 400 and 300 examples in the integration half.
@pytest.mark.parametrize("kind", ident.NORMALISERS)
@settings(max_examples=examples(50), deadline=None)
@given(value=st.text())
def test_every_normaliser_is_idempotent(kind, value):
    """f(f(x)) == f(x) for any text; a host's or an address's form is already a canonical
    name, and so is a whole name's."""
    once = ident.normalise(value, kind)
    assert ident.normalise(once, kind) == once
    if kind in ("host", "email"):  # an IBAN keeps its upper case, which a name folds
        assert ident.source_name(once) == once
    name = ident.source_name(value)
    assert ident.source_name(name) == name


SPELLINGS = {  # a word, and how it is spelled (see the test below)
    "word": st.text(st.characters(codec="ascii", categories=("Ll", "Lu", "Nd")), min_size=1),
    "inserts": st.lists(st.sampled_from(["\u200b", "\u200c", "\u200d", "\u200e", "\u200f",
                                         "\u202a", "\u202e", "\u2066", "\u2069", "\ufeff",
                                         "\u00ad"]), max_size=4),
    "upper": st.booleans(), "wide": st.booleans(),
    "pad": st.sampled_from(["", " ", "\t", "\u3000"])}


@settings(max_examples=examples(40), deadline=None)
@given(**SPELLINGS)
def test_a_family_of_spellings_maps_to_one_name(word, inserts, upper, wide, pad):
    """A word, upper-cased, full-width, padded and with invisible characters inserted anywhere,
    is the same name as the word in lower case."""
    spelled = word.upper() if upper else word
    if wide:
        spelled = "".join(chr(ord(c) + 0xFEE0) for c in spelled)
    for i, mark in enumerate(inserts):
        at = (i * 7) % (len(spelled) + 1)
        spelled = spelled[:at] + mark + spelled[at:]
    assert ident.source_name(f"{pad}portal:{spelled}{pad}") == f"portal:{word.lower()}"


def test_every_source_field_of_an_event_is_canonical():
    """The server's side: an event's source, trust domain and compromised source are stored
    in canonical form, whoever built the event; a control character is still refused."""
    base = {"event_id": "e1", "tenant": "t", "at": "2026-11-16T08:00:00Z"}
    seen = ev.ObservationRecorded(**base, source=" Portal:North\u200bWind ", text="x",
                                  source_domain="Signed-Contracts ")
    assert (seen.source, seen.source_domain) == ("portal:northwind", "signed-contracts")
    declared = ev.SourceDeclared(**base, source="ＰＯＲＴＡＬ:northwind", source_kind="web")
    assert declared.source == "portal:northwind"
    hit = ev.SourceCompromised(**base, retraction="r", source="portal:Northwind", by="sec")
    assert hit.source == "portal:northwind"
    for bad in ("portal:north\x00wind", "portal:\nnorthwind"):
        with pytest.raises(ValueError, match="control character"):
            ev.ObservationRecorded(**base, source=bad, text="x")
    with pytest.raises(ValueError):
        ev.ObservationRecorded(**base, source="\u200b\u200b", text="x")
