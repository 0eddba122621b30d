"""Text that can be stored: one rule for every text field, checked where it enters.

FalkorDB reads a query as a C string: a NUL in a parameter cuts the query there, and the write
fails with a syntax error however often it is tried (one such event held its tenant's writes
back for half a minute). The other control characters are stored, but nothing good comes of
them: a terminal escape in a note, a form feed in a payee. So every text field of every model at
an edge (events, API bodies and paths, scenario lines, CLI arguments) is one of two types:

``Text``  free text (a note, a reason, a receipt): tab, newline and carriage return allowed;
``Line``  an identifier or a one-line value (ids, names, sources, ``by``, payees, accounts,
          store keys, times): no control character at all.

Both refuse U+0000-U+001F (less what ``Text`` allows), U+007F-U+009F and lone surrogates (not
Unicode: they cannot be encoded), with the error type ``control_character``, so every edge says
the same thing, naming the field. The check runs in pydantic-core (a regular expression in
Rust), not in Python. ``escape`` turns any string into an acceptable one, for the
agents' side, where refusing would fail the agent's own call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, StringConstraints, TypeAdapter
from pydantic_core import core_schema

# Character classes (as regular expression text) of what each type refuses.
_TEXT_BAD = r"\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F"
_LINE_BAD = r"\x00-\x1F\x7F-\x9F"
ERROR_TYPE = "control_character"
TEXT_RULE = "must not contain NUL or other control characters (tab, newline and carriage " \
            "return are allowed) nor lone surrogates"
LINE_RULE = "must not contain NUL or other control characters (tab and newline included) " \
            "nor lone surrogates"


@dataclass(frozen=True)
class Clean:
    """``Annotated`` metadata: refuse what ``bad`` (a character class) matches, and lone
    surrogates, with ``rule`` as the message. Chained after the string's own constraints, so
    a length error still reads as one."""

    bad: str
    rule: str

    @property
    def pattern(self) -> str:
        return f"^[^{self.bad}]*$"

    def __get_pydantic_core_schema__(self, source: Any,
                                     handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        check = core_schema.custom_error_schema(
            core_schema.str_schema(pattern=self.pattern),  # a lone surrogate fails here too
            custom_error_type=ERROR_TYPE, custom_error_message=self.rule)
        return core_schema.chain_schema([handler(source), check])

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> dict:
        out = handler(schema)  # a chain shows its first step: the string and its lengths
        out = handler.resolve_ref_schema(out)
        out.setdefault("pattern", self.pattern)  # a pattern of the field's own is stricter
        return out


TEXT = Clean(_TEXT_BAD, TEXT_RULE)
LINE = Clean(_LINE_BAD, LINE_RULE)


def text(max_length: int, min_length: int = 0) -> Any:
    """Free text of at most ``max_length`` characters (tab, newline, CR allowed)."""
    return Annotated[str, StringConstraints(min_length=min_length or None,
                                            max_length=max_length), TEXT]


def line(max_length: int, min_length: int = 0, pattern: str | None = None) -> Any:
    """A one-line value (an id, a name, a key) of at most ``max_length`` characters."""
    return Annotated[str, StringConstraints(min_length=min_length or None, max_length=max_length,
                                            pattern=pattern), LINE]


_BAD = {False: re.compile(f"[{_TEXT_BAD}\ud800-\udfff]"),
        True: re.compile(f"[{_LINE_BAD}\ud800-\udfff]")}


def problem(value: str, one_line: bool = False) -> str | None:
    """Why ``value`` is refused as text (or as a line), naming the first bad character; None
    when it is acceptable. For messages; the models check with the types above."""
    found = _BAD[one_line].search(value)
    if found is None:
        return None
    return (f"{LINE_RULE if one_line else TEXT_RULE}: U+{ord(found.group()):04X} at position "
            f"{found.start()}")


def escape(value: str, one_line: bool = False) -> str:
    """``value`` with each refused character written as an escape (``\\x00``, ``\\udc80``):
    what the agents' side records when an agent's own text holds one, so that its call never
    fails on our account. Unchanged (the same object) when nothing is refused."""
    bad = _BAD[one_line]
    if bad.search(value) is None:
        return value
    return bad.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                   else f"\\u{ord(m.group()):04x}", value)


def check(value: str, max_length: int, one_line: bool = False) -> str:
    """``value`` validated as ``text(max_length)`` (or ``line``): ValueError with the rule
    otherwise. For inputs that are not model fields (CLI arguments)."""
    adapter = _adapter(max_length, one_line)
    from pydantic import ValidationError

    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        detail = problem(value, one_line) if first["type"] == ERROR_TYPE else None
        raise ValueError(detail or first["msg"]) from None


_ADAPTERS: dict[tuple[int, bool], TypeAdapter] = {}


def _adapter(max_length: int, one_line: bool) -> TypeAdapter:
    key = (max_length, one_line)
    if key not in _ADAPTERS:
        _ADAPTERS[key] = TypeAdapter(line(max_length) if one_line else text(max_length))
    return _ADAPTERS[key]


__all__ = ["ERROR_TYPE", "LINE", "LINE_RULE", "TEXT", "TEXT_RULE", "check", "escape", "line",
           "problem", "text"]
