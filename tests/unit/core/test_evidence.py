"""Evidence for a payment, on plain data: only a trusted source that states the account holds
a payment up; a premise that says nothing about the account (or a user's or an agent's word)
neither holds it up nor brings it down."""

from rescind.core.belief import Grounding, Node, Rules, Window
from rescind.core.evidence import account_evidence, evidence_weakest, normalise_account, states

ACCOUNT = "GB33 BUKB 2020 1555 5555 55"


def cone():
    return {"portal": Node("portal", "observation", groundings=[Grounding("p", 1)]),
            "contract": Node("contract", "observation", groundings=[Grounding("c", 2)]),
            "said": Node("said", "observation", groundings=[Grounding("u", 3)]),
            "note": Node("note", justifications=[("portal",), ("contract",), ("said",)])}


TEXTS = {"portal": f"Bank account: {ACCOUNT}", "contract": "Bank account: GB94 BARC 1020 1530",
         "said": f"pay {ACCOUNT}"}
DOMAINS = {"p": "portal", "c": "contracts", "u": "user:u1", "e": "erp"}
KINDS = {"p": "vendor_portal", "c": "signed_contract", "u": "user", "e": "erp"}


def frag(nodes, texts, target="note", rules=Rules(), **kw):
    e = account_evidence(nodes, texts, ACCOUNT, DOMAINS, KINDS, rules, **kw)
    return evidence_weakest(target, e, rules)


def test_an_iban_is_compared_by_its_compact_form_and_other_accounts_by_letters_and_digits():
    """An IBAN compares in compact form; a text states it by its letters and digits."""
    assert normalise_account("gb33 bukb 2020 1555 5555 55") == "GB33BUKB20201555555555"
    assert normalise_account("ZZ97-QKRB 0000") == "ZZ97QKRB0000"
    assert states("Bank account: GB33-BUKB-2020-1555-5555-55.", normalise_account(ACCOUNT))
    assert states("IBAN GB33 BUKB 2020 1555 5555 55", normalise_account(ACCOUNT))
    assert not states("Bank account: GB94 BARC", normalise_account(ACCOUNT))


def test_only_a_trusted_source_stating_the_account_holds_the_payment_up():
    """Three reasons for the note; only the portal states the account from a trusted kind:
    fragility 1 (the user's word keeps the note IN but is no evidence). With the contract
    stating it too: 2."""
    assert frag(cone(), TEXTS) == (1, ("portal",))
    both = {**TEXTS, "contract": f"Bank account: {ACCOUNT}"}
    assert frag(cone(), both)[0] == 2


def test_a_premise_that_says_nothing_about_the_account_neither_holds_nor_brings_down():
    """Finding 7: the payment rests on the user's "pay INV-5" AND the contract, the contract
    and the portal (two declared domains) state the account: 2, not 0. The ERP invoice (no
    account in it) adds nothing either way."""
    nodes = {"said": Node("said", "observation", groundings=[Grounding("u", 1)]),
             "contract": Node("contract", "observation", groundings=[Grounding("c", 2)]),
             "portal": Node("portal", "observation", groundings=[Grounding("p", 3)]),
             "invoice": Node("invoice", "observation", groundings=[Grounding("e", 4)]),
             "pay": Node("pay", "action", [("said", "contract", "invoice"),
                                           ("said", "portal", "invoice")])}
    texts = {"said": "Pay Umbrella's INV-5.", "contract": f"Bank: {ACCOUNT}",
             "portal": f"IBAN {ACCOUNT}", "invoice": "INV-5 Umbrella 15,000.00"}
    assert frag(nodes, texts, "pay") == (2, ("contracts", "portal"))
    # Without the portal: the contract alone, 1; the ERP's domain never counts.
    del nodes["portal"]
    nodes["pay"] = Node("pay", "action", [("said", "contract", "invoice")])
    assert frag(nodes, texts, "pay") == (1, ("contracts",))


def test_no_evidence_for_the_account_is_fragility_zero_whatever_keeps_it_in():
    """A payment whose account only the user (or nothing) states: nothing vouches for it."""
    nodes = {"said": Node("said", "observation", groundings=[Grounding("u", 1)]),
             "pay": Node("pay", "action", [("said",)])}
    assert frag(nodes, {"said": f"pay {ACCOUNT} now"}, "pay") == (0, ())
    assert frag(nodes, {"said": "pay INV-5"}, "pay") == (0, ())


def test_evidence_held_up_only_by_a_users_word_is_no_evidence():
    """The portal's observation also pasted by the user: the user's grounding does not keep it
    standing as evidence once the portal falls."""
    nodes = {"portal": Node("portal", "observation",
                            groundings=[Grounding("p", 1), Grounding("u", 2)]),
             "pay": Node("pay", "action", [("portal",)])}
    assert frag(nodes, {"portal": f"Bank account: {ACCOUNT}"}, "pay") == (1, ("portal",))


def test_trusted_kinds_narrow_what_counts_and_a_retracted_grounding_stays_retracted():
    """Only the named kinds count; a grounding under a retraction in force stays lost."""
    both = {**TEXTS, "contract": f"Bank account: {ACCOUNT}"}
    assert frag(cone(), both, trusted_kinds={"signed_contract"})[0] == 1
    rules = Rules(windows=[Window("r1", "p")])
    e = account_evidence(cone(), both, ACCOUNT, DOMAINS, KINDS, rules)
    assert e.support["portal"].groundings == [Grounding("p", 1)]  # still covered by r1
    assert evidence_weakest("note", e, rules)[0] == 1
    # A retracted neutral premise still brings the payment down: it is OUT.
    rules = Rules(windows=[Window("r2", "u")])
    nodes = {"said": Node("said", "observation", groundings=[Grounding("u", 1)]),
             "contract": Node("contract", "observation", groundings=[Grounding("c", 2)]),
             "pay": Node("pay", "action", [("said", "contract")])}
    e = account_evidence(nodes, {"said": "pay INV-5", "contract": ACCOUNT}, ACCOUNT, DOMAINS,
                         KINDS, rules)
    assert evidence_weakest("pay", e, rules) == (0, ())
