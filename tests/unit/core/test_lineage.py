"""Lineage for identifiers on plain facts (rescind.core.lineage, core.planning): which
identifiers a text states, and the justifications a write that states one no premise states
is given."""

from hypothesis import given
from hypothesis import strategies as st

from rescind.core import lineage
from rescind.core.belief import Rules, Status
from rescind.core.planning import Write, fresh, plan_batch

IN = Status("IN")
ATTACKER = "DE89 3704 0044 0532 0130 00"
KEY = "DE89370400440532013000"


def plan(writes, known=None, facts=None):
    known = dict(known or {})
    return plan_batch(writes, fresh(writes, set()), 7, known, Rules(), {},
                      facts if facts is not None else lineage.Facts())


def test_identifiers_are_valid_ibans_and_labelled_account_numbers_in_their_key():
    """An IBAN however spelled (spaces, a label glued on) and a labelled account number are
    found as their gate key; a checksum-failing IBAN, an amount or a date is none."""
    text = (f"Remit to IBAN{ATTACKER.lower()} or acct no. 12-34-5678; "
            "not GB00 BUKB 2020 1555 5555 55, 34,500.00 on 2026-12-01")
    assert lineage.identifiers(text) == ["12345678", KEY]
    assert lineage.identifiers(text, ("iban",)) == [KEY]
    assert lineage.identifiers("Pay INV-7, account 12, 34,500.00") == []
    wide = "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in ATTACKER)
    assert lineage.identifiers(f"Konto\u200b: {wide}") == [KEY]  # full-width, a zero-width space


def test_accented_text_beside_a_country_code_is_read_without_an_error():
    """An accented letter after two letters that name a country ("DE" in "Bestellung DE-…
    Zoë") is no IBAN: it was handed to int(c, 36), and the writer dead-lettered the event."""
    assert lineage.identifiers("Bestellung DE-00419-B · Kundin: Zoë Müller-Łukasik") == []
    assert lineage.identifiers(f"Zoë: {ATTACKER} Łódź") == [KEY]
    # a Cyrillic Е inside the IBAN reads as the Latin E it is drawn as
    assert lineage.identifiers("GB82 WЕST 1234 5698 7654 32") == ["GB82WEST12345698765432"]


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80),
       st.sampled_from(["DE", "GB", "FR", "NO", "PL"]))
def test_any_text_is_read_for_identifiers_without_an_error(text, country):
    """Whatever an observation says, reading it for identifiers never raises."""
    lineage.identifiers(country + text)
    lineage.identifiers(text + country + "89" + text)


def test_a_laundered_note_rests_on_each_observation_stating_the_iban_with_its_own_premises():
    """A note on the user's message only, stating an IBAN two observations state: two
    justifications (rule lineage), each the message plus one of them; the note is IN."""
    facts = lineage.Facts(texts={"said": "Pay INV-7"},
                          stating={KEY: ["portal", "contract"]})
    p = plan([Write("e", "n", "belief", f"banks at {ATTACKER}", 5, premises=("said",),
                    rule="turn-context")],
             known={"said": IN, "portal": IN, "contract": IN}, facts=facts)
    got = [(j["id"], j["rule"], sorted(j["premises"])) for j in p.batch.justifications]
    assert got == [("e", "lineage", ["contract", "said"]), ("e#1", "lineage", ["portal", "said"])]
    assert p.statuses == [IN]


def test_a_premise_stating_the_iban_or_a_declared_write_gets_no_lineage():
    """The premise states the IBAN (in another spelling): the write's own justification. A
    write whose writer declared its premises is taken as it is."""
    facts = lineage.Facts(texts={"portal": f"Bank account: {KEY.lower()}", "said": "hi"},
                          stating={KEY: ["portal"]})
    known = {"portal": IN, "said": IN}
    p = plan([Write("e", "n", "belief", f"banks at {ATTACKER}", 5, premises=("portal",),
                    rule="matched")], known=known, facts=facts)
    assert [j["rule"] for j in p.batch.justifications] == ["matched"]
    p = plan([Write("e", "n", "belief", f"banks at {ATTACKER}", 5, premises=("said",))],
             known=known, facts=facts)
    assert [j["rule"] for j in p.batch.justifications] == ["declared"]


def test_an_iban_no_observation_states_is_flagged_and_keeps_its_justification():
    """No observation states it: flagged ungrounded (the key), its own justification kept."""
    p = plan([Write("e", "n", "belief", f"banks at {ATTACKER}", 5, premises=("said",),
                    rule="agent")], known={"said": IN},
             facts=lineage.Facts(texts={"said": "hi"}))
    assert p.batch.new[0]["ungrounded"] == [KEY]
    assert [(j["rule"], j["premises"]) for j in p.batch.justifications] == [("agent", ["said"])]


def test_an_observation_is_indexed_and_states_the_iban_for_a_note_in_the_same_batch():
    """A new observation's identifiers are rows of the batch (and of what it leaves ahead), and
    a note later in the batch rests on it."""
    p = plan([Write("o1", "obs", "observation", f"IBAN {ATTACKER}", 4, source="portal"),
              Write("e", "n", "belief", f"banks at {KEY}", 5, premises=("said",),
                    rule="turn-context")], known={"said": IN},
             facts=lineage.Facts(texts={"said": "hi"}))
    assert p.batch.idents == [{"key": KEY, "mem": "obs"}]
    assert p.ahead.idents == {KEY: ["obs"]}
    assert [sorted(j["premises"]) for j in p.batch.justifications] == [["obs", "said"]]
