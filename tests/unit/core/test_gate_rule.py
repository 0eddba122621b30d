"""The gate's rule on plain values (rescind.core.gate_rule, rescind.core.money): one key per
account and per payee whatever the spelling, every execution once in the aggregate, no amount
refused unless declared amount-free, a late question never allowed."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from rescind.core import gate_rule as rule
from rescind.core.money import normalise_account, normalise_payee, states
from tests.support.examples import examples

IBANS = ["GB33 BUKB 2020 1555 5555 55", "DE89 3704 0044 0532 0130 00",
         "NO93 8601 1117 947", "FR14 2004 1010 0505 0001 3M02 606"]
OTHERS = ["12-34-56 12345678", "ZZ97 QKRB 0000 9034 5521 66", "021000021 / 000123456789"]
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u200e", "\u200f", "\u202a",
             "\u202c", "\u2066", "\u2069", "\u00ad"]


def full_width(text: str) -> str:
    return text.translate({c: c + 0xFEE0 for c in range(0x21, 0x7F)})


@st.composite
def spelled(draw, account: str) -> str:
    """``account`` as someone might type it: case, separators, invisible characters, full
    width, a label before it, a name in brackets after it."""
    chars = list(account.replace(" ", ""))
    out = []
    for i, ch in enumerate(chars):
        ch = ch.lower() if draw(st.booleans()) else ch
        ch = full_width(ch) if draw(st.integers(0, 4)) == 0 else ch
        out.append(ch)
        if i % 4 == 3 and i < len(chars) - 1:
            out.append(draw(st.sampled_from([" ", "-", ".", "", " ", "\u00a0", "\u3000"])))
        if draw(st.integers(0, 9)) == 0:
            out.append(draw(st.sampled_from(INVISIBLE)))
    text = "".join(out)
    label = draw(st.sampled_from(["", "IBAN ", "iban: ", "Acct: ", "account no. ",
                                  "Account number: ", "A/C #", "Bank account: ", "ＩＢＡＮ　"]))
    tail = draw(st.sampled_from(["", " (Acme)", " [ACME Corp]", " (Acme Holdings Ltd.)"]))
    return label + text + tail


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_every_spelling_of_an_iban_is_its_compact_form(data):
    """Labels, brackets, case, separators, full width and invisible marks: one key."""
    iban = data.draw(st.sampled_from(IBANS))
    assert normalise_account(data.draw(spelled(iban))) == iban.replace(" ", "")


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_every_spelling_of_another_account_is_its_letters_and_digits(data):
    """An account that is no IBAN: its letters and digits, upper-cased, labels stripped."""
    account = data.draw(st.sampled_from(OTHERS))
    key = "".join(ch for ch in account.upper() if ch.isalnum())
    assert normalise_account(data.draw(spelled(account))) == key


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_a_text_stating_an_account_in_any_spelling_states_its_key(data):
    """Evidence is matched by key: a document writing the IBAN in its own way states it."""
    iban = data.draw(st.sampled_from(IBANS))
    text = f"Remit to: {data.draw(spelled(iban))}\nThank you."
    assert states(text, normalise_account(iban))


def test_other_digits_and_short_keys():
    """Digits of other scripts are digits; a key under 6 characters is stated by nothing."""
    arabic = "".join(chr(0x0660 + int(d)) for d in "12345678")
    assert normalise_account(arabic) == "12345678"
    assert not states("pay X1 now", normalise_account("X1"))
    assert normalise_account(unicodedata.normalize("NFD", "Ålesund 1234567")) == \
        normalise_account("ÅLESUND 1234567")


@given(st.sampled_from(["Acme Corp", "ACME  corp.", "acme\u200bcorp"]), st.booleans())
def test_payee_spellings(payee, wide):
    """Case, punctuation, runs of space, full width: one payee (a zero-width space inside a
    word joins it, as it shows)."""
    text = full_width(payee) if wide else payee
    assert normalise_payee(text) in ("acme corp", "acmecorp")
    assert normalise_payee(text) == normalise_payee(payee)


def test_each_execution_counts_once_per_key_and_never_itself():
    """The largest amount of each execution, per key; the execution asked about is left out
    (its amount is added by decide)."""
    rows = [rule.Allowed("account", "a#1", 5000), rule.Allowed("account", "a#1", 5000),
            rule.Allowed("account", "a#2", 5000), rule.Allowed("payee", "b@x", 3000),
            rule.Allowed("payee", "b@x", 4000), rule.Allowed("account", "c#1", 7000)]
    assert rule.already_allowed(rows) == (17000.0, 4000.0)
    assert rule.already_allowed(rows, itself="c#1") == (10000.0, 4000.0)
    assert rule.execution_key("a", 7) == "a#7" and rule.execution_key("a", ask="q") == "a@q"


def test_decide_takes_the_larger_total_and_refuses_a_missing_amount():
    """Above the threshold on either total with fewer than two domains: refused; no amount:
    refused unless declared amount-free."""
    p = rule.GatePolicy()
    assert rule.decide("a", 4000, None, 1, (), p, (6000.0, 1000.0)).allowed
    d = rule.decide("a", 4001, None, 1, (), p, (1000.0, 6000.0))
    assert not d.allowed and d.aggregate == 6000.0 and "same payee" in d.reason
    assert rule.decide("a", 50_000, None, 2, (), p).allowed
    none = rule.decide("a", None, None, 2, (), p)
    assert not none.allowed and "no amount" in none.reason
    assert rule.decide("a", None, None, 0, (), p, amount_free=True).allowed


def test_a_late_decision_is_expired_and_never_allowed():
    """An allowed decision judged after the asker stopped waiting is refused as expired."""
    d = rule.expired(rule.decide("a", 10, None, 1, (), rule.GatePolicy()), 3.2)
    assert not d.allowed and d.reason.startswith("expired: judged 3.2s")


@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_the_reference_reads_every_spelling_as_the_gate_does(data):
    """tests/support/reference.py, written from docs/scenario-format.md, gives the same
    account and payee keys as the gate on every spelling drawn."""
    from tests.support import reference

    account = data.draw(st.sampled_from(IBANS + OTHERS))
    spelling = data.draw(spelled(account))
    assert reference.account(spelling) == normalise_account(spelling)
    payee = data.draw(st.sampled_from(["Acme Corp", "Straße GmbH", "ＡＣＭＥ\u200b  corp."]))
    assert reference.payee(payee) == normalise_payee(payee)


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet="GBDE0123456789 acmeACME-: Иbuk" "АВЕКМНОРСТХаеорсхΑΒΕΚΜΝΟΡΤΧαοκ"
               "бжлпщЖЛλπ" "ëüÉ\u200b\uff21", max_size=40))
def test_the_reference_reads_look_alikes_as_the_gate_does(text):
    """Texts mixing Latin letters with Cyrillic and Greek ones, look-alikes or not: the
    reference (its table copied from docs/scenario-format.md) and the gate give one key."""
    from tests.support import reference

    assert reference.account(text) == normalise_account(text)
    assert reference.payee(text) == normalise_payee(text)


TOKENS = ["iban", "IBAN", "Acct", "account", "a/c", "A.C.", "no", "Nr", "num", "number", "n°",
          "#", "id", "code", "bank", "Payee", "sort code", "sort  code", ":", ".", "-", "—", "=",
          "(", ")", "[", "]", "{", "}", "<", ">", "(Acme)", "[ACME Corp]", "123456", "12-34",
          "GB33", "x", "İBAN", "ıban", "N°", " ", "\t", "\u2028", "\u200b", "ＩＢＡＮ"]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=9).map("".join))
def test_the_reference_takes_labels_and_brackets_off_as_the_gate_does(text):
    """Texts built of label words, punctuation, brackets of every kind (paired or not), spaces
    and look-alike letters: the reference, written from the steps in docs/scenario-format.md,
    and the gate give one account key."""
    from tests.support import reference

    assert reference.account(text) == normalise_account(text)
