"""Scenario files (docs/scenario-format.md): one typed model per op, and all-or-nothing validation.

Validation runs over the whole file before anything is applied; every bad line is reported
as ``line N: reason``. Its rules are in docs/scenario-format.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from rescind.contract import text as tx
from rescind.contract.errors import Invalid
from rescind.contract.events import MAX_TEXT, SourceName, normalise, to_micros
from rescind.contract.kinds import WrittenKind

# Every text field is one of the shared types (rescind.contract.text): a NUL or another control
# character is `line N: <field>: must not contain …` before anything is applied.
Text = tx.text(MAX_TEXT, min_length=1)
Id = tx.line(200, min_length=1)
Name = tx.line(500)  # a display name, a payee
Reason = tx.text(2000)
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False, strict=True)]
Currency = tx.line(3, pattern=r"^[A-Z]{3}$")  # ISO 4217, as the gate's rate table


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceLine(_Line):
    op: Literal["source"]
    id: SourceName  # canonical (rescind.contract.identity): any spelling names one source
    kind: Id
    name: Name | None = None
    domain: SourceName | None = None


class ObserveLine(_Line):
    op: Literal["observe"]
    id: Id
    source: SourceName
    text: Text
    at: AwareDatetime


class WriteLine(_Line):
    op: Literal["write"]
    id: Id
    kind: WrittenKind
    agent: Id
    text: Text
    premises: list[Id] = Field(min_length=1, max_length=1000)
    at: AwareDatetime


class UpdateLine(_Line):
    """A new version of a memory (a store key's new value): ``memory`` is no longer current."""

    op: Literal["update"]
    id: Id
    memory: Id
    agent: Id
    text: Text
    premises: list[Id] = Field(min_length=1, max_length=1000)
    at: AwareDatetime


class DeleteLine(_Line):
    """A memory deleted from the agent's store: no longer current, its status unchanged."""

    op: Literal["delete"]
    id: Id
    memory: Id
    agent: Id
    at: AwareDatetime


class ActLine(_Line):
    op: Literal["act"]
    id: Id
    agent: Id
    text: Text
    premises: list[Id] = Field(min_length=1, max_length=1000)
    at: AwareDatetime
    amount: Amount | None = None
    currency: Currency | None = None
    payee: Name | None = None
    account: tx.line(200, min_length=1) | None = None
    executed: bool


class ExecuteLine(_Line):
    op: Literal["execute"]
    action: Id
    at: AwareDatetime


class RetractLine(_Line):
    op: Literal["retract"]
    id: Id
    source: SourceName
    from_: AwareDatetime | None = Field(None, alias="from")
    to: AwareDatetime | None = None
    reason: Reason
    by: Id
    at: AwareDatetime | None = None


class WithdrawLine(_Line):
    op: Literal["withdraw"]
    id: Id
    memory: Id
    reason: Reason
    by: Id
    at: AwareDatetime | None = None


class CorrectLine(_Line):
    op: Literal["correct"]
    id: Id
    memory: Id
    text: Text
    by: Id
    at: AwareDatetime | None = None


class ReinstateLine(_Line):
    op: Literal["reinstate"]
    retraction: Id
    at: AwareDatetime | None = None


class GateArgs(_Line):
    """The values of the call being judged (a release): each must equal the proposal's."""

    amount: Amount | None = None
    currency: Currency | None = None
    account: tx.line(200, min_length=1) | None = None
    payee: Name | None = None


class GateLine(_Line):
    op: Literal["gate"]
    action: Id
    args: GateArgs | None = None
    at: AwareDatetime | None = None


class ApproveLine(_Line):
    op: Literal["approve"]
    action: Id
    by: Id
    at: AwareDatetime | None = None


Line = Annotated[
    SourceLine | ObserveLine | WriteLine | UpdateLine | DeleteLine | ActLine | ExecuteLine
    | RetractLine | WithdrawLine | CorrectLine | ReinstateLine | GateLine | ApproveLine,
    Field(discriminator="op"),
]
_LINE = TypeAdapter(Line)
OPS = ("source", "observe", "write", "update", "delete", "act", "execute", "retract",
       "withdraw", "correct", "reinstate", "gate", "approve")


class ScenarioError(Invalid):
    """A scenario that cannot be applied; ``errors`` holds (line number, reason) pairs."""

    def __init__(self, errors: list[tuple[int, str]]) -> None:
        self.errors = errors
        super().__init__("\n".join(f"line {n}: {why}" for n, why in errors))


@dataclass(frozen=True)
class Step:
    line: int
    op: BaseModel


@dataclass(frozen=True)
class BadLine:
    """A line that failed validation, with what could be read of it: the ids it defines count
    as defined for the lines after it, so that one mistake is one error, not one per use."""

    line: int
    obj: dict


def parse(text: str) -> list[Step]:
    """Parse and validate a whole scenario; raise ScenarioError with one error for each bad
    line (the first line of each is the one to fix: uses of what a bad line defines are not
    errors of their own)."""
    steps: list[Step | BadLine] = []
    errors: list[tuple[int, str]] = []
    for n, raw in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 is text
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError as exc:
            errors.append((n, f"malformed JSON: {exc.msg} at column {exc.colno}"))
            continue
        if not isinstance(obj, dict):
            errors.append((n, "a line must be a JSON object"))
            continue
        if obj.get("op") not in OPS:
            errors.append((n, f"unknown op {obj.get('op')!r}"))
            steps.append(BadLine(n, obj))
            continue
        try:
            steps.append(Step(n, _LINE.validate_python(obj)))
        except ValidationError as exc:
            errors.append((n, _explain(exc)))
            steps.append(BadLine(n, obj))
    errors.extend(_check_references(steps))
    if errors:
        raise ScenarioError(one_per_line(errors))
    return [s for s in steps if isinstance(s, Step)]


def one_per_line(errors: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """At most one error per line, in line order: a line's reasons joined, first found first."""
    by_line: dict[int, list[str]] = {}
    for n, why in errors:
        if why not in by_line.setdefault(n, []):
            by_line[n].append(why)
    return [(n, "; ".join(by_line[n])) for n in sorted(by_line)]


def _explain(exc: ValidationError) -> str:
    parts = []
    for e in exc.errors():
        where = ".".join(str(x) for x in e["loc"][1:]) or "line"
        if e["type"] == "missing":
            parts.append(f"missing field {where!r}")
        elif "datetime" in e["type"] or e["type"] == "timezone_aware":
            parts.append(f"bad time in {where!r}: {e['msg']}")
        elif e["type"] == "extra_forbidden":
            parts.append(f"unknown field {where!r}")
        else:
            parts.append(f"{where}: {e['msg']}")
    return "; ".join(parts)


MEMORY = ("memory", "action", "correction")
# What the id of a line of each op defines (a line that failed validation defines it too).
DEFINES = {"source": "source", "observe": "memory", "write": "memory", "update": "memory",
           "delete": "deletion", "act": "action", "retract": "retraction",
           "withdraw": "retraction", "correct": "correction"}
VERSIONS = ("write", "update")  # the lines whose memories an update or delete may replace


def _check_references(steps: list[Step | BadLine]) -> list[tuple[int, str]]:
    """Everything a line names must be defined on an earlier line, with the right kind."""
    what: dict[str, str] = {}  # id -> source | memory | action | retraction | correction
    identity: dict[str, tuple[str, str]] = {}  # memory id -> (kind, normalised text)
    executed: set[str] = set()
    approved: set[str] = set()
    reinstated: set[str] = set()
    unsure: set[str] = set()  # defined by a bad line: what else it says is unknown
    nameless: set[str] = set()  # kinds that a bad line without a readable id defined
    versions: set[str] = set()  # ids of write and update lines: what may be updated, deleted
    errors: list[tuple[int, str]] = []

    def version(n: int, ident: str, role: str) -> bool:
        """``ident`` names a write's or an update's memory (observations, actions and
        corrections are not a store's values)."""
        if not need(n, ident, MEMORY, role) or ident in versions:
            return True
        errors.append((n, f"{role} {ident!r} is not a write's or an update's memory"))
        return False

    def need(n: int, ident: str, kinds: tuple[str, ...], role: str) -> bool:
        if ident in unsure or (ident not in what and nameless.intersection(kinds)):
            return False  # perhaps defined by a bad line: that line is the error
        if what.get(ident) not in kinds:
            known = f" (it is a {what[ident]})" if ident in what else ""
            errors.append((n, f"{role} {ident!r} is not defined on an earlier line{known}"))
            return False
        return True

    def define(n: int, ident: str, kind: str) -> None:
        if ident in what:
            errors.append((n, f"duplicate id {ident!r}"))
        else:
            what[ident] = kind

    for step in steps:
        if isinstance(step, BadLine):
            _shadow(step.obj, what, unsure, nameless)
            continue
        n, op = step.line, step.op
        if isinstance(op, SourceLine):
            define(n, op.id, "source")
        elif isinstance(op, ObserveLine):
            need(n, op.source, ("source",), "source")
            define(n, op.id, "memory")
            identity.setdefault(op.id, ("observation", normalise(op.text)))
        elif isinstance(op, (WriteLine, ActLine)):
            for p in op.premises:
                need(n, p, MEMORY, "premise")
            define(n, op.id, "action" if isinstance(op, ActLine) else "memory")
            if isinstance(op, WriteLine):
                identity.setdefault(op.id, (op.kind, normalise(op.text)))
                versions.add(op.id)
            if isinstance(op, ActLine) and op.executed:
                executed.add(op.id)
        elif isinstance(op, UpdateLine):
            version(n, op.memory, "memory")
            for p in op.premises:
                need(n, p, MEMORY, "premise")
            define(n, op.id, "memory")
            versions.add(op.id)
            if op.memory in identity:
                identity.setdefault(op.id, (identity[op.memory][0], normalise(op.text)))
        elif isinstance(op, DeleteLine):
            version(n, op.memory, "memory")
            define(n, op.id, "deletion")
        elif isinstance(op, ExecuteLine):
            if need(n, op.action, ("action",), "action"):
                if op.action in executed:
                    errors.append((n, f"action {op.action!r} was executed already"))
                executed.add(op.action)
        elif isinstance(op, RetractLine):
            need(n, op.source, ("source",), "source")
            if op.from_ and op.to and to_micros(op.from_) > to_micros(op.to):
                errors.append((n, "the window ends before it starts ('to' is before 'from')"))
            define(n, op.id, "retraction")
        elif isinstance(op, WithdrawLine):
            need(n, op.memory, MEMORY, "memory")
            define(n, op.id, "retraction")
        elif isinstance(op, CorrectLine):
            if need(n, op.memory, MEMORY, "memory") and op.memory in identity:
                kind, old_text = identity[op.memory]
                if normalise(op.text) == old_text:
                    errors.append((n, "the correction says the same as the memory it corrects"))
                identity.setdefault(op.id, (kind, normalise(op.text)))
            if what.get(op.by, "source") != "source":
                errors.append((n, f"reviewer {op.by!r} is a {what[op.by]}, not a source"))
            define(n, op.id, "correction")  # names both the correction and its new memory
            what.setdefault(op.by, "source")
        elif isinstance(op, ReinstateLine):
            if need(n, op.retraction, ("retraction", "correction"), "retraction"):
                if op.retraction in reinstated:
                    errors.append((n, f"retraction {op.retraction!r} was reinstated already"))
                reinstated.add(op.retraction)
        elif isinstance(op, GateLine):
            need(n, op.action, ("action",), "action")
        elif isinstance(op, ApproveLine) and need(n, op.action, ("action",), "action"):
            if op.action not in executed:
                errors.append((n, f"action {op.action!r} was not executed: nothing to recall"))
            elif op.action in approved:
                errors.append((n, f"the recall of {op.action!r} was approved already"))
            approved.add(op.action)
    return errors


def _shadow(obj: dict, what: dict[str, str], unsure: set[str], nameless: set[str]) -> None:
    """What a line that failed validation defines, as far as it can be read: its id (and a
    correction's reviewer), of the kind its op defines; without a readable id, that kind."""
    op = obj.get("op")
    ident, kind = obj.get("id"), DEFINES.get(op) if isinstance(op, str) else None
    if kind is not None and not isinstance(ident, str):
        nameless.add(kind)
    elif kind is not None and ident not in what:
        what[ident] = kind
        unsure.add(ident)
    by = obj.get("by")
    if op == "correct" and isinstance(by, str):
        what.setdefault(by, "source")
