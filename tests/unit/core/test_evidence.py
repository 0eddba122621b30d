"""Evidence for a payment, on plain data: only a trusted source that states the account holds
a payment up; a user's, an agent's, or a source that names another account does not."""

from rescind.core.belief import Grounding, Node, Rules, Window
from rescind.core.evidence import evidence_cone, normalise_account, states
from rescind.core.fragility import fragility

ACCOUNT = "GB33 BUKB 2020 1555 5555 55"


def cone():
    return {"portal": Node("portal", "observation", groundings=[Grounding("p", 1)]),
            "contract": Node("contract", "observation", groundings=[Grounding("c", 2)]),
            "said": Node("said", "observation", groundings=[Grounding("u", 3)]),
            "note": Node("note", justifications=[("portal",), ("contract",), ("said",)])}


TEXTS = {"portal": f"Bank account: {ACCOUNT}", "contract": "Bank account: GB94 BARC 1020 1530",
         "said": f"pay {ACCOUNT}"}
DOMAINS = {"p": "portal", "c": "contracts", "u": "user:u1"}
KINDS = {"p": "vendor_portal", "c": "signed_contract", "u": "user"}


def test_an_iban_is_compared_by_its_compact_form_and_other_accounts_by_letters_and_digits():
    assert normalise_account("gb33 bukb 2020 1555 5555 55") == "GB33BUKB20201555555555"
    assert normalise_account("ZZ97-QKRB 0000") == "ZZ97QKRB0000"
    assert states("Bank account: GB33-BUKB-2020-1555-5555-55.", normalise_account(ACCOUNT))
    assert not states("Bank account: GB94 BARC", normalise_account(ACCOUNT))


def test_only_a_trusted_source_stating_the_account_holds_the_payment_up():
    """Three reasons for the note; only the portal states the account from a trusted kind:
    fragility 1. With the contract stating it too: 2."""
    seen, domains = evidence_cone(cone(), TEXTS, ACCOUNT, DOMAINS, KINDS, Rules())
    assert fragility("note", seen, domains, Rules()) == 1
    both = {**TEXTS, "contract": f"Bank account: {ACCOUNT}"}
    seen, domains = evidence_cone(cone(), both, ACCOUNT, DOMAINS, KINDS, Rules())
    assert fragility("note", seen, domains, Rules()) == 2


def test_trusted_kinds_narrow_what_counts_and_a_retracted_grounding_stays_retracted():
    both = {**TEXTS, "contract": f"Bank account: {ACCOUNT}"}
    seen, domains = evidence_cone(cone(), both, ACCOUNT, DOMAINS, KINDS, Rules(),
                                  trusted_kinds={"signed_contract"})
    assert fragility("note", seen, domains, Rules()) == 1
    rules = Rules(windows=[Window("r1", "p")])
    seen, domains = evidence_cone(cone(), both, ACCOUNT, DOMAINS, KINDS, rules)
    assert seen["portal"].groundings == [Grounding("p", 1)]  # still covered by r1
    assert fragility("note", seen, domains, rules) == 1
