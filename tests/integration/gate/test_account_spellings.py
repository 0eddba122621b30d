"""Finding 4 (issue 28): one account, many spellings, is one account to the aggregate (and
one payee, many spellings, one payee); each total must stay under the threshold."""

from __future__ import annotations

import pytest

from tests.support.gate_book import IBAN, Book

FULL_WIDTH = IBAN.translate({c: c + 0xFEE0 for c in range(0x21, 0x7F)})
SPELLINGS = [
    f"IBAN {IBAN}",
    f"{IBAN} (Acme)",
    FULL_WIDTH,
    IBAN.replace(" ", "\u200b"),  # zero-width spaces
    f"\u202a{IBAN.lower()}\u202c",  # bidi embedding, lower case
    f"Acct: {IBAN.replace(' ', '-')}",
    f"account no. {IBAN} [Acme Ltd]",
    "IBAN" + IBAN.replace(" ", ""),  # the label glued on
    f"ＩＢＡＮ：{FULL_WIDTH}",
    IBAN.replace("B", "\u0412"),  # Cyrillic В, drawn as a Latin B
    IBAN.replace("K", "\u039a").replace("U", "\u03c5"),  # Greek Κ and a Greek υ for the U
]


def _book(falkordb, tenant_name) -> tuple[Book, str]:
    b = Book(falkordb, tenant_name)
    b.source("portal:acme", "vendor_portal")
    return b, b.observe("portal:acme", f"Acme bank account: {IBAN}")


def test_five_spellings_of_one_iban_are_one_account(falkordb, tenant_name):
    """$9,999 to the IBAN in five spellings, each with another payee name: the first runs,
    the rest are refused (the account's total would be above $10,000 on one domain)."""
    b, portal = _book(falkordb, tenant_name)
    payees = ["Acme", "Acme Holdings", "A. C. M. E.", "Acme (EU)", "Globex"]
    got = [b.ask(f"pay-{i}", (portal,), 9999, account, payee)
           for i, (account, payee) in enumerate(zip(SPELLINGS[:5], payees, strict=True))]
    assert [d.allowed for d in got] == [True, False, False, False, False]
    assert all(d.aggregate == 9999.0 for d in got[1:])
    b.g.delete()


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_is_stated_by_the_portal_and_adds_to_the_same_total(falkordb,
                                                                          tenant_name,
                                                                          spelling):
    """Each spelling is the portal's account (fragility 1, not 0), and after $6,000 to the
    plain IBAN, $6,000 more to this spelling is refused."""
    b, portal = _book(falkordb, tenant_name)
    assert b.ask("first", (portal,), 6000, IBAN, "acme").allowed
    d = b.ask("second", (portal,), 6000, spelling, "someone else")
    assert (d.allowed, d.fragility, d.aggregate) == (False, 1, 6000.0)
    b.g.delete()


def test_payee_spellings_are_one_payee_whatever_the_account(falkordb, tenant_name):
    """$6,000 to Acme at one account, then $6,000 to 'ＡＣＭＥ\u200b  corp.' at another: the
    payee's total is $12,000 on one domain, refused."""
    b, portal = _book(falkordb, tenant_name)
    other = b.observe("portal:acme", "Acme second account: DE89 3704 0044 0532 0130 00")
    assert b.ask("a", (portal,), 6000, IBAN, "Acme Corp").allowed
    d = b.ask("b", (other,), 6000, "DE89 3704 0044 0532 0130 00", "ＡＣＭＥ\u200b  corp.")
    assert not d.allowed and "already allowed to the same payee" in d.reason
    b.g.delete()


def test_account_and_payee_totals_are_kept_apart(falkordb, tenant_name):
    """$6,000 matched by account only and $3,000 by payee only: each total alone plus $2,000
    is under $10,000, so the call runs (the totals are not added together)."""
    b, portal = _book(falkordb, tenant_name)
    other = b.observe("portal:acme", "Acme second account: DE89 3704 0044 0532 0130 00")
    assert b.ask("a", (portal,), 6000, IBAN, "Initech").allowed
    assert b.ask("b", (other,), 3000, "DE89 3704 0044 0532 0130 00", "Acme").allowed
    d = b.ask("c", (portal,), 2000, IBAN, "Acme")
    assert d.allowed and d.aggregate == 6000.0
    b.g.delete()
