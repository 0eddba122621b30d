"""The gate's decisions in words: the CLI's sentences, and the console's the same."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import playwright
import pytest

from rescind.core.gate_rule import GatePolicy
from rescind.views.gate_words import attacker_needs, why

POLICY = GatePolicy(threshold=10_000, min_domains=2, currency="USD")
LABELS = Path(__file__).resolve().parents[3] / "services" / "api" / "static" / "labels.js"

DECISIONS = [
    {"allowed": True, "fragility": 2, "amount": 34_500, "base_amount": 34_500,
     "reason": "allowed: fragility 2"},
    {"allowed": True, "fragility": 1, "amount": 6_000, "base_amount": 6_000, "aggregate": 2_400,
     "reason": "allowed: fragility 1"},
    {"allowed": False, "fragility": 1, "amount": 34_500, "base_amount": 34_500,
     "reason": "blocked: fragility 1 < 2"},
    {"allowed": False, "fragility": 0, "amount": 9_000, "currency": "EUR", "base_amount": 9_900,
     "aggregate": 4_000, "reason": "blocked: fragility 0 < 2"},
    {"allowed": False, "fragility": 1, "amount": 5_000, "base_amount": 5_000, "aggregate": 6_000,
     "reason": "blocked: 11000 to this account within 30 days"},
    {"allowed": True, "fragility": 1, "amount": None, "reason": "allowed: amount-free"},
    {"allowed": False, "fragility": None, "amount": 12_000,
     "reason": "blocked: the call does not match its proposal"},
    {"allowed": False, "expired": True, "fragility": 2, "amount": 100, "reason": "expired"},
]


def test_a_refusal_says_the_amount_the_rule_and_how_many_sources_stood_behind_it():
    """A refused payment above the threshold names its amount, the threshold and the count."""
    assert why(DECISIONS[2], POLICY) == ("Refused: 34,500.00 USD is above 10,000 USD and "
                                         "confirmed by only 1 independent source; 2 needed.")
    assert why(DECISIONS[0], POLICY) == ("Allowed: confirmed by 2 independent sources; 2 needed "
                                         "above 10,000 USD.")
    assert why({**DECISIONS[3], "base_amount": 6_000, "aggregate": 6_000}, POLICY) == (
        "Refused: 9,000.00 EUR (6,000.00 USD), with 6,000.00 USD already allowed to the same "
        "payee or account (12,000.00 USD in all), is above 10,000 USD and confirmed by no "
        "independent source; 2 needed.")
    assert why(DECISIONS[6], POLICY) == "Refused: the call does not match its proposal"
    assert why(DECISIONS[7], POLICY).startswith("Refused: the gate answered after")
    assert attacker_needs(["acme-portal"]) == "acme-portal"
    assert attacker_needs(["a", "b", "c"]) == "a, b and c"
    assert attacker_needs([]).startswith("none")


def _node() -> str:
    """The Node.js that Playwright ships (present wherever the console's browser tests run)."""
    return str(Path(playwright.__file__).parent / "driver" / "node")


@pytest.mark.parametrize("policy", [POLICY, GatePolicy(threshold=2_500.5, min_domains=3,
                                                       currency="EUR")])
def test_the_cli_and_the_console_say_the_same_sentence(policy, tmp_path):
    """Every decision shape gets the same words from views.gate_words and labels.js's gateWhy."""
    script = tmp_path / "why.mjs"
    script.write_text(
        f"import {{ gateWhy }} from {json.dumps(LABELS.as_uri())};\n"
        f"const policy = {json.dumps({'threshold': policy.threshold, 'min_domains': policy.min_domains, 'currency': policy.currency})};\n"  # noqa: E501
        f"const ds = {json.dumps(DECISIONS)};\n"
        "console.log(JSON.stringify(ds.map((d) => gateWhy(d, policy))));\n")
    out = subprocess.run([_node(), str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [why(d, policy) for d in DECISIONS]
