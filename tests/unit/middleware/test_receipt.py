"""What an action tool's result says was executed becomes the ActionExecuted's values; a
pattern without a group is refused when the configuration is read."""

import pytest
from pydantic import ValidationError

from rescind.middleware.config import ActionTool, Receipt
from rescind.middleware.recorder import receipt

BANK = Receipt(amount=r"^Paid \$([0-9,.]+) ", account=r" to account (.+?) for ",
               reference=r"\((PAY-[0-9]+)\)", value_date=r" at (\S+?)\.?$",
               currency=r"currency: ([A-Za-z]+)")


def test_the_bank_s_answer_gives_amount_account_reference_and_date():
    said = "Paid $34,500.00 to account ZZ97 QKRB 0000 for INV-1002 (PAY-0002) at 2026-11-19T09:00Z."
    assert receipt(ActionTool(receipt=BANK), said) == {
        "receipt": said, "amount": 34500.0, "account": "ZZ97 QKRB 0000",
        "reference": "PAY-0002", "value_date": "2026-11-19T09:00Z"}


def test_what_does_not_fit_is_left_out_and_the_text_is_kept_either_way():
    """No pattern: only the text. An amount that is no number, a currency that is no code:
    left out (the proposal's stand)."""
    assert receipt(ActionTool(), "done") == {"receipt": "done"}
    assert receipt(ActionTool(), "  ") == {}
    odd = "Paid $lots to account X for Y (PAY-1) currency: dollars"
    assert receipt(ActionTool(receipt=BANK), odd) == {
        "receipt": odd, "account": "X", "reference": "PAY-1"}


def test_a_pattern_must_compile_and_have_a_group_around_the_value():
    with pytest.raises(ValidationError, match="needs a group"):
        Receipt(amount=r"Paid \$[0-9]+")
    with pytest.raises(ValidationError, match="(?s)amount.*not a regular expression"):
        Receipt(amount="Paid (")
    with pytest.raises(ValidationError, match="pattern"):
        ActionTool(default_currency="usd")


def test_control_characters_in_the_bank_s_answer_are_escaped():
    said = "Paid $5.00 to account ZZ\x0097 for X (PAY-1\x1b) at 2026-11-19."
    got = receipt(ActionTool(receipt=BANK), said)
    assert got["receipt"] == "Paid $5.00 to account ZZ\\x0097 for X (PAY-1\\x1b) at 2026-11-19."
    assert got["account"] == "ZZ\\x0097"
