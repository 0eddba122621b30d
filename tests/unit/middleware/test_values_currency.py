"""Amounts with and without a currency (issue 29, blind3 miss 4): an amount stated in a
currency is the same amount stated bare (a bank statement's column: "1,450.00 DR"), never one
stated in another currency; a bare amount is a number, not part of a code word next to it."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from rescind.middleware.attribution import Delivered, attribute
from rescind.middleware.facts import facts
from rescind.middleware.values import canonical, same_currency, scan
from tests.support.examples import examples

_CURRENCIES = [("£", "GBP"), ("€", "EUR"), ("$", "USD"), ("CHF ", "CHF"), ("zł", "PLN")]
_AMOUNTS = st.decimals(min_value=Decimal("100"), max_value=Decimal("999999"), places=2)
_DRCR = st.sampled_from(["DR", "CR", "D", "C", "", "debit"])


def _bare(x: Decimal) -> str:
    return f"{x:,.2f}"


def _with(x: Decimal, currency: tuple[str, str], as_code: bool) -> str:
    symbol, code = currency
    return f"{code} {x:,.2f}" if as_code else f"{symbol}{x:,.2f}"


@given(_AMOUNTS, _DRCR, st.sampled_from(["RENT HOLLIS", "TFR ACME LTD 4410", "Payee"]))
@settings(max_examples=examples(60), deadline=None)
def test_a_bare_amount_in_a_statement_line_is_its_number_not_a_code(x, marker, payee):
    """A statement line's bare amount ("1,450.00 DR") is the number, not an identifier
    swallowed with the debit marker after it."""
    found = facts(f"03 NOV  {payee}  {_bare(x)} {marker}".rstrip())
    assert ("num", canonical(x)) in found
    assert not any(kind == "id" and canonical(x).replace(".", "") in key
                   for kind, key in found)


@given(_AMOUNTS, st.sampled_from(_CURRENCIES), st.booleans(), _DRCR)
@settings(max_examples=examples(60), deadline=None)
def test_an_amount_with_a_currency_rests_on_the_same_amount_stated_bare(x, cur, code, marker):
    """A write stating "£1,450.00" rests on the statement that prints "1,450.00 DR"."""
    statement = Delivered("bank", f"RENT HOLLIS ESTATES  {_bare(x)} {marker}".rstrip())
    got = attribute({"text": f"Budget: rent {_with(x, cur, code)}"}, [statement])
    assert got.justifications == [("bank",)]


@given(_AMOUNTS, st.sampled_from(_CURRENCIES), st.sampled_from(_CURRENCIES), st.booleans(),
       st.booleans())
@settings(max_examples=examples(60), deadline=None)
def test_amounts_in_different_stated_currencies_never_match(x, a, b, a_code, b_code):
    """The same number in two different stated currencies is two facts: "£1,450" does not
    rest on "$1,450"; in the same currency (symbol or code) it does."""
    item = Delivered("quote", f"Quoted: {_with(x, a, a_code)}")
    got = attribute({"text": f"Budget {_with(x, b, b_code)}"}, [item])
    if a[1] == b[1]:
        assert got.justifications == [("quote",)]
    else:
        assert got.justifications == []


@given(_AMOUNTS, st.sampled_from(_CURRENCIES), st.sampled_from(_CURRENCIES))
@settings(max_examples=examples(40), deadline=None)
def test_a_bare_amount_in_the_write_rests_on_the_amount_in_any_currency(x, a, b):
    """A write stating the amount bare states the number only: any item stating it, in any
    currency, is an alternative for it."""
    one = Delivered("one", f"Total {_with(x, a, False)}")
    two = Delivered("two", f"Amount due: {_with(x, b, True)}")
    got = attribute({"text": f"Paid {_bare(x)} today"}, [one, two])
    assert got.justifications == [("one",), ("two",)]


def test_the_currency_stated_is_a_fact_beside_the_number():
    """"£1,450.00" and "GBP 1,450" state the number and the currency GBP; "kr" is whichever
    krona, never another currency."""
    assert {("num", "1450"), ("cur", "1450 GBP")} <= scan("rent £1,450.00")[0]
    assert {("num", "1450"), ("cur", "1450 GBP")} <= scan("rent GBP 1,450")[0]
    assert not any(k == "cur" for k, _ in scan("RENT 1,450.00 DR")[0])
    assert same_currency("kr", "NOK") and same_currency("SEK", "kr")
    assert not same_currency("kr", "GBP") and not same_currency("GBP", "USD")


def test_an_item_stating_the_amount_in_two_currencies_matches_either():
    """An item quoting one number in two currencies is an alternative for both."""
    item = Delivered("fx", "Converted: $1,450.00 = €1,450.00 at parity")
    assert attribute("Paid €1,450.00", [item]).justifications == [("fx",)]
    assert attribute("Paid £1,450.00", [item]).justifications == []
