"""Amounts in a currency, compared with the gate's threshold in one currency.

A payment of JPY 2,000,000 is not a payment of 2,000,000 dollars, nor of 9,999: every amount
is converted to the threshold's currency with a configured rate table, and a currency the table
does not hold cannot be judged, so it is refused. Codes are ISO 4217 (checked with pycountry).
"""

from __future__ import annotations

from collections.abc import Mapping

import pycountry


class NoRate(ValueError):
    """The amount's currency cannot be converted to the threshold's."""


def currency_code(text: str) -> str:
    """``text`` as an ISO 4217 code (``" usd"`` gives ``"USD"``); ValueError when it is none."""
    code = text.strip().upper()
    if len(code) != 3 or pycountry.currencies.get(alpha_3=code) is None:
        raise ValueError(f"{text!r} is not an ISO 4217 currency code")
    return code


def checked_rates(rates: Mapping[str, float]) -> dict[str, float]:
    """A rate table with ISO codes as keys and finite positive rates; ValueError otherwise."""
    out = {}
    for code, rate in rates.items():
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not rate > 0 \
                or rate == float("inf"):
            raise ValueError(f"the rate of {code!r} must be a positive number, not {rate!r}")
        out[currency_code(code)] = float(rate)
    return out


def convert(amount: float, currency: str, base: str, rates: Mapping[str, float]) -> float:
    """``amount`` of ``currency`` in ``base``; ``rates[c]`` is what one unit of ``c`` is worth in
    ``base``, rounded to the hundredth. NoRate when the table has no rate for ``currency``."""
    if currency == base:
        return amount
    if currency not in rates:
        raise NoRate(f"no rate from {currency} to {base}")
    return round(amount * rates[currency], 2)


def show(amount: float, currency: str | None, base: str) -> str:
    """An amount as people read it: ``12,000.00`` in the base currency, else with its code."""
    return f"{amount:,.2f}" if currency in (None, base) else f"{currency} {amount:,.2f}"
