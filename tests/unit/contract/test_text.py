"""The one rule for text (rescind.contract.text), and that every text field of every model at an
edge follows it: events, API bodies, scenario lines."""

from __future__ import annotations

import typing

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from rescind.api import models as api
from rescind.contract import events as ev
from rescind.contract import text as tx
from rescind.scenario import format as sc

CONTROL = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))]
WHITE = ["\t", "\n", "\r"]
TEXT = TypeAdapter(tx.text(100))
LINE = TypeAdapter(tx.line(100))


@pytest.mark.parametrize("c", [c for c in CONTROL if c not in WHITE], ids=lambda c: f"{ord(c):02x}")
def test_text_refuses_every_control_character_but_tab_newline_and_return(c):
    with pytest.raises(ValidationError) as e:
        TEXT.validate_python(f"a{c}b")
    assert e.value.errors()[0]["type"] == tx.ERROR_TYPE
    assert e.value.errors()[0]["msg"] == tx.TEXT_RULE


def test_text_keeps_tab_newline_return_and_any_other_unicode():
    value = "a\tb\nc\r\nd é ß 漢 \u2028 \U0001F600 \ufeff"
    assert TEXT.validate_python(value) == value


@pytest.mark.parametrize("c", CONTROL, ids=lambda c: f"{ord(c):02x}")
def test_a_line_refuses_every_control_character(c):
    with pytest.raises(ValidationError) as e:
        LINE.validate_python(f"a{c}b")
    assert e.value.errors()[0]["msg"] == tx.LINE_RULE


@pytest.mark.parametrize("adapter", [TEXT, LINE], ids=["text", "line"])
def test_lone_surrogates_and_lengths_are_refused(adapter):
    with pytest.raises(ValidationError):
        adapter.validate_python("a\ud800b")
    with pytest.raises(ValidationError) as e:
        adapter.validate_python("x" * 101)
    assert e.value.errors()[0]["type"] == "string_too_long"  # a length error reads as one


def test_json_with_an_escaped_nul_is_refused_too():
    with pytest.raises(ValidationError):
        TEXT.validate_json('"a\\u0000b"')


def test_escape_makes_any_string_acceptable_and_leaves_good_ones_alone():
    bad = "key\x00\x1b[0m\x85\ud800\tend"
    assert tx.escape(bad) == "key\\x00\\x1b[0m\\x85\\ud800\tend"
    assert tx.escape(bad, one_line=True) == "key\\x00\\x1b[0m\\x85\\ud800\\x09end"
    assert TEXT.validate_python(tx.escape(bad)) and LINE.validate_python(tx.escape(bad, True))
    good = "nothing to do"
    assert tx.escape(good) is good


def test_problem_and_check_name_the_character_and_its_place():
    assert tx.problem("fine\ttext") is None
    assert tx.problem("ab\x1bc").endswith("U+001B at position 2")
    assert tx.problem("a\tb", one_line=True).endswith("U+0009 at position 1")
    with pytest.raises(ValueError, match=r"U\+0000 at position 3"):
        tx.check("abc\x00", 100)
    with pytest.raises(ValueError, match="at most 5 characters"):
        tx.check("abcdefg", 5)


def test_the_json_schema_states_the_rule():
    schema = TypeAdapter(tx.text(10)).json_schema()
    assert schema["pattern"] == "^[^\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F-\\x9F]*$"
    assert schema["maxLength"] == 10
    own = TypeAdapter(tx.line(3, pattern=r"^[A-Z]{3}$")).json_schema()
    assert own["pattern"] == "^[A-Z]{3}$"  # a field's own, stricter pattern is kept


# -- every text field of every model at an edge -------------------------------------------------
def _models() -> list[type[BaseModel]]:
    events = list(typing.get_args(typing.get_args(ev.AnyEvent)[0]))
    bodies = [api.Compromise, api.CompromiseCommit, api.Withdrawal, api.WithdrawalCommit,
              api.Correction, api.CorrectionCommit, api.GateAsk, api.NewTenant, api.NewToken]
    lines = list(typing.get_args(typing.get_args(sc.Line)[0])) + [sc.GateArgs]
    return events + bodies + lines


def _fields() -> list[tuple[str, TypeAdapter, object]]:
    """(model.field, the field's validator, a NUL-bearing value of its shape) for every field
    that accepts a string or a list of strings."""
    out = []
    for model in _models():
        for name, info in model.model_fields.items():
            annotation = typing.Annotated[info.annotation, *info.metadata] if info.metadata \
                else info.annotation
            adapter = TypeAdapter(annotation)
            for good, bad in (("ABC", "A\x00C"), (["ABC"], ["A\x00C"])):
                try:
                    adapter.validate_python(good)
                except ValidationError:
                    continue
                out.append((f"{model.__name__}.{name}", adapter, bad))
    return out


FIELDS = _fields()


def test_the_text_fields_are_all_found():
    names = {n for n, _, _ in FIELDS}
    assert len(names) > 120
    assert {"SourceCompromised.reason", "MemoryWithdrawn.reason", "MemoryCorrected.text",
            "Compromise.reason", "Withdrawal.reason", "Correction.text", "GateAsk.payee",
            "RetractLine.reason", "ActLine.payee", "MemoryWritten.premises",
            "ActionExecuted.receipt", "NewToken.who", "SourceDeclared.traceparent"} <= names


@pytest.mark.parametrize(("name", "adapter", "bad"), FIELDS, ids=[n for n, _, _ in FIELDS])
def test_every_text_field_refuses_a_nul(name, adapter, bad):
    with pytest.raises(ValidationError):
        adapter.validate_python(bad)
