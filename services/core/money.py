"""Amounts in a currency, compared with the gate's threshold in one currency.

A payment of JPY 2,000,000 is not a payment of 2,000,000 dollars, nor of 9,999: every amount
is converted to the threshold's currency with a configured rate table, and a currency the table
does not hold cannot be judged, so it is refused. Codes are ISO 4217 (checked with pycountry).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

import pycountry
from schwifty import IBAN, registry
from schwifty.exceptions import SchwiftyException

from rescind.contract.identity import latin


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


# -- accounts and payees, in the one form the gate compares and adds up --------------------
#
# An attacker chooses how the model spells an account or a payee, so every spelling of one must
# give one key: the gate's aggregate is kept per key, and evidence is matched by it.

# Words that label an account rather than being part of it, stripped from its start (with the
# punctuation after them): "IBAN GB33…", "Acct: 1234", "account no. 1234", "A/C #1234".
# Label words match ASCII letters in any case only ("(?a:"): a dotted İ is no i.
_LABEL = re.compile(
    r"^\s*(?:(?a:bank|beneficiary|payee|vendor|supplier|receiving|destination|target)\s+)*"
    r"(?:(?a:iban|acct|account|a/c|a\.c\.|konto|compte|cuenta|rekening|bic|swift)"
    r"|(?a:sort)\s+(?a:code))"
    r"(?:\s*(?a:number|num|nr|no|n°|#|id|code))?[\s:.#=\-–—]*"
    r"|^\s*(?a:no|nr|number|n°|#)\s*[:.#=\-–—][\s:.#=\-–—]*", re.IGNORECASE)
# A name in brackets at the end (or the start) of an account: "GB33 … (Acme)", "[Acme] 1234".
_BRACKETED = re.compile(r"\s*[(\[{<][^()\[\]{}<>]*[)\]}>]\s*$|^\s*[(\[{<][^()\[\]{}<>]*[)\]}>]\s*")
_IBAN_START = re.compile(r"[A-Z]{2}[0-9]{2}")
MIN_ACCOUNT = 6  # a shorter key is stated by too many texts to be evidence of anything


def plain(text: str) -> str:
    """``text`` in Unicode NFKC (full-width and other compatibility forms become their plain
    letters and digits), with format characters (zero-width spaces and joiners, bidirectional
    marks, soft hyphens, byte-order marks) removed, every decimal digit written in ASCII, and
    Cyrillic or Greek look-alikes of Latin letters in Latin (``identity.latin``): an IBAN or
    a payee spelled with a Cyrillic Е is the same account, the same payee."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(str(unicodedata.decimal(ch)) if ch.isdecimal() and not ch.isascii() else ch
                   for ch in text if unicodedata.category(ch) != "Cf")
    return latin(text)


def compact(text: str) -> str:
    """The letters and digits of ``text`` (plain, as above), upper-cased."""
    return "".join(ch for ch in plain(text).upper() if ch.isalnum())


def _iban_in(key: str) -> str | None:
    """The first valid IBAN (checked by schwifty) in a compacted key, from a position where
    one may start (two letters, two digits), at its country's length."""
    for m in _IBAN_START.finditer(key):
        try:
            length = registry.get_iban_spec(m.group()[:2]).iban_length
            return IBAN(key[m.start():m.start() + length]).compact
        except (SchwiftyException, ValueError, KeyError):
            continue
    return None


def normalise_account(account: str) -> str:
    """The one key of an account however it is spelled, after Unicode NFKC with format
    characters dropped (``plain``): the first valid IBAN among its letters and digits (checked
    by schwifty at its country's length, in schwifty's compact form), so that a label or a name
    around it (``IBAN ``, ``Acct:``, ``(Acme)``, ``IBANGB33…``) does not hide it; any other
    account with its labels stripped (``Acct:``, ``account no.``, ``A/C #``, a name in
    brackets at either end such as ``(Acme)``), as its letters and digits, upper-cased
    (``Acct: 12-34 56 (Acme)`` and ``123456`` are one account)."""
    text = plain(account)
    glued = "".join(ch for ch in text.upper() if ch.isalnum())
    if found := _iban_in(glued):
        return found
    while True:
        shorter = _BRACKETED.sub("", _LABEL.sub("", text, count=1), count=1)
        if shorter == text or not any(ch.isalnum() for ch in shorter):
            break  # a label or a name taken off must leave a letter or digit behind
        text = shorter
    return "".join(ch for ch in text.upper() if ch.isalnum())


def states(text: str, key: str) -> bool:
    """Whether ``text`` states the account whose key (``normalise_account``) is ``key``: its
    letters and digits (plain, upper-cased) contain the key, which has at least
    ``MIN_ACCOUNT`` characters (a shorter one is stated by nothing)."""
    return len(key) >= MIN_ACCOUNT and key in compact(text)


def normalise_payee(payee: str) -> str:
    """The one key of a payee however it is spelled: Unicode NFKC, format characters dropped,
    case-folded, punctuation read as space, runs of space as one (``ACME  Corp.`` and
    ``acme corp`` are one payee)."""
    folded = plain(payee).casefold()
    return " ".join("".join(ch if ch.isalnum() else " " for ch in folded).split())
