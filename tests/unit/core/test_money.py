"""Amounts in a currency: ISO 4217 codes, a checked rate table, conversion to the cent."""

import pytest

from rescind.core.money import NoRate, checked_rates, convert, currency_code, show


def test_codes_are_iso_4217_whatever_their_case():
    assert currency_code(" jpy ") == "JPY"
    for bad in ("XQQ", "dollars", "US", ""):
        with pytest.raises(ValueError, match="ISO 4217"):
            currency_code(bad)


def test_a_rate_table_holds_codes_and_positive_finite_rates():
    assert checked_rates({"eur": 1.08, "JPY": 1}) == {"EUR": 1.08, "JPY": 1.0}
    for bad in ({"EUR": 0}, {"EUR": -1}, {"EUR": True}, {"EUR": float("inf")},
                {"EUR": float("nan")}, {"EURO": 1.0}):
        with pytest.raises(ValueError):
            checked_rates(bad)


def test_conversion_uses_the_table_and_refuses_a_currency_it_lacks():
    rates = {"JPY": 0.0067, "EUR": 1.1}
    assert convert(2_000_000, "JPY", "USD", rates) == 13_400.0
    assert convert(6000, "EUR", "USD", rates) == 6600.0  # to the cent, not 6600.000000000001
    assert convert(12.5, "USD", "USD", {}) == 12.5
    with pytest.raises(NoRate, match="no rate from GBP to USD"):
        convert(1, "GBP", "USD", rates)


def test_an_amount_shows_its_code_unless_it_is_in_the_base_currency():
    assert show(12000, None, "USD") == show(12000, "USD", "USD") == "12,000.00"
    assert show(2_000_000, "JPY", "USD") == "JPY 2,000,000.00"


def test_look_alike_letters_do_not_split_an_account_or_a_payee():
    """An IBAN with a Cyrillic Е and a payee with a Cyrillic А and о are the account and the
    payee they imitate: the aggregate, kept per key, is not split by them."""
    from rescind.core.money import normalise_account, normalise_payee
    assert normalise_account("GB82 W\u0415ST 1234 5698 7654 32") == "GB82WEST12345698765432"
    assert normalise_payee("\u0410cme C\u043erp.") == normalise_payee("ACME corp") == "acme corp"
    assert normalise_payee("Сбербанк") == "сбербанк"  # a Russian name stays Russian
