"""A bad scenario gets one error per bad line, in the file's own ids: a mistake is reported
where it is, not again at every line that uses what the bad line defines."""

from __future__ import annotations

import json

import pytest

from rescind.scenario.format import ScenarioError, parse
from tests.support.paths import ROOT

EXAMPLE = (ROOT / "examples/vendor-portal.jsonl").read_text().split("\n")


def without(line_id: str, field: str) -> str:
    """The shipped example with ``field`` removed from the line that defines ``line_id``."""
    out = []
    for raw in EXAMPLE:
        if raw.startswith("{") and json.loads(raw).get("id") == line_id:
            obj = json.loads(raw)
            del obj[field]
            raw = json.dumps(obj)
        out.append(raw)
    return "\n".join(out)


def line_of(line_id: str) -> int:
    return next(n for n, raw in enumerate(EXAMPLE, 1)
                if raw.startswith("{") and json.loads(raw).get("id") == line_id)


def errors(text: str) -> list[tuple[int, str]]:
    with pytest.raises(ScenarioError) as exc:
        parse(text)
    return exc.value.errors


@pytest.mark.parametrize("line_id, field", [
    ("portal:acme", "id"),     # used by two observations and the retraction: three follow-ons
    ("portal:acme", "kind"),
    ("o-bank", "at"),          # a premise of the bank note
    ("n-bank-confirmed", "agent"),  # a premise of both plans
    ("pay-1041", "executed"),  # approved at the end: was it executed? unknown, not an error
    ("pay-1042", "premises"),  # asked about at two gate lines
    ("pay-1042", "id"),
])
def test_one_missing_field_is_one_error_on_its_own_line(line_id, field):
    """Before: removing the portal's id gave four errors (its line, and every line naming
    portal:acme); now the one line, naming the field."""
    assert errors(without(line_id, field)) == [(line_of(line_id),
                                                 f"missing field {field!r}")]


def test_other_mistakes_are_still_found_after_a_bad_line():
    """A bad line does not hide the next real mistake: an unknown premise elsewhere, of a kind
    the bad line could not have defined, is still reported on its own line."""
    text = without("o-bank", "at").replace('"premises": ["n-remit"]', '"premises": ["n-nope"]')
    assert errors(text) == [(line_of("o-bank"), "missing field 'at'"),
                            (line_of("a-remit"), "premise 'n-nope' is not defined on an "
                                                 "earlier line")]


def test_several_mistakes_on_one_line_are_one_error():
    """Two unknown premises and a duplicate id on one line: one `line N:` entry, each reason
    once."""
    text = "\n".join([
        '{"op":"source","id":"s","kind":"k"}',
        '{"op":"observe","id":"o","source":"s","text":"x","at":"2026-01-01T00:00:00Z"}',
        '{"op":"write","id":"o","kind":"belief","agent":"a","text":"y","premises":["zz","yy"],'
        '"at":"2026-01-01T00:00:00Z"}',
    ])
    assert errors(text) == [(3, "premise 'zz' is not defined on an earlier line; premise 'yy' "
                                "is not defined on an earlier line; duplicate id 'o'")]
    assert str(ScenarioError(errors(text))).count("line 3:") == 1
