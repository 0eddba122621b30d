"""Hypothesis strategies that generate valid scenario files (docs/scenario-format.md) as text.

`scenario_graphs()` is mostly structure (sources, observations, writes, updates and deletes of
written memories, actions) followed by one retraction and a few gates; `operation_sequences()`
is such a graph followed by 5-15 operations (retract, withdraw, correct, reinstate, gate,
execute, approve, update, delete). Validity that depends on state
(an `approve` needs an executed action that is OUT right then) is decided with the naive
reference in tests/reference.py while the scenario is being built.
"""

from __future__ import annotations

import functools
import json
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from tests.support.reference import Reference, norm

BASE = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)

FACTS = [
    "Invoice 4711 is due on June 1",
    "ACME bank account is DE12 5001 0517",
    "Contract caps fees at 12,000",
    "Vendor portal says the account changed",
    "Straße GmbH is an approved vendor",  # casefold("STRASSE") == casefold("Straße")
    "PO 88 was received",
]
TEXTS = {
    "belief": [
        "ACME is owed 6,000",
        "Account DE12 belongs to ACME",
        "Invoice 4711 is due on June 1",  # same text as an observation: a different memory
        "Pay ACME in two parts",  # same text as a plan: a different memory
        "Straße GmbH bank details verified",
    ],
    "plan": ["Pay invoice 4711 next run", "Hold PO 88", "Pay ACME in two parts"],
    "answer": ["Yes, invoice 4711 is payable", "The account is verified"],
}
TEXTS["observation"] = FACTS
AMOUNTS = [250, 6000, 6000, 10000, 10000.01, 12000, 48000.5, 250000]
ACCOUNTS = ["DE12 5001 0517", "de1250010517", "DE99 0000 1111"]  # stated, stated, never stated
RATES = {"EUR": 1.1}  # the gate's rate table in the comparison: JPY has none


# Strategies drawn from thousands of times a run, made once: hypothesis checks a strategy object
# the first time it is drawn from, and a fresh one at every draw cost a third of the generation.
_CASES = st.sampled_from([str, str.upper, str.lower, str.title, str.swapcase])
_GAPS = st.sampled_from([" ", " ", "  ", "\t", " \n "])
_LEADS = st.sampled_from(["", " ", "\t"])
_TAILS = st.sampled_from(["", "  ", "\n"])
_STEPS = st.sampled_from([0, 1, 5, 30, 90])
_ONE_IN_20 = st.integers(0, 19)
_FILLERS = st.sampled_from(["", "# a comment", "   "])
_BOOLS = st.booleans()


@functools.lru_cache(maxsize=64)
def _pick(values: tuple) -> st.SearchStrategy:
    """``st.sampled_from(values)`` for a constant tuple of values, made once."""
    return st.sampled_from(values)


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@st.composite
def _variant(draw, text: str) -> str:
    """The same text as far as normalisation goes: other case, other white space."""
    case = draw(_CASES)
    words = case(text).split(" ")
    gaps = [draw(_GAPS) for _ in words[1:]]
    out = words[0] + "".join(g + w for g, w in zip(gaps, words[1:], strict=False))
    return draw(_LEADS) + out + draw(_TAILS)


class _Builder:
    """Emits valid lines and keeps the reference state of the scenario so far."""

    def __init__(self, draw):
        self.draw = draw
        self.lines: list[str] = []
        self.ref = Reference()
        self.t = BASE
        self.n = 0
        self.sources: list[str] = []  # declared sources and reviewers
        self.mems: list[tuple[str, str]] = []  # (id, kind) of every memory id, in order
        self.writes: list[tuple[int, str, str]] = []  # (index in mems, kind, text)
        self.versions: list[tuple[str, str]] = []  # (id, kind) of writes and updates
        self.obs_times: list[datetime] = []
        self.actions: list[str] = []
        self.unexecuted: list[str] = []
        self.executed: list[str] = []
        self.undoable: list[str] = []  # retract/withdraw/correct ids not yet reinstated

    def new_id(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def now(self) -> str:
        self.t += timedelta(minutes=self.draw(_STEPS))
        return _ts(self.t)

    def emit(self, op: dict) -> None:
        if self.draw(_ONE_IN_20) == 19:  # shrinks to no extra line
            self.lines.append(self.draw(_FILLERS))
        self.lines.append(json.dumps(op, ensure_ascii=self.draw(_BOOLS)))
        if op["op"] != "gate":
            self.ref.apply(op)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def premises(self, pool: list[str] | None = None) -> list[str]:
        pool = pool or [m for m, _ in self.mems]
        return self.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))

    # structure
    def sources_(self) -> None:
        n_domains = self.draw(st.integers(2, 5))
        n_sources = self.draw(st.integers(n_domains, min(6, n_domains + 2)))
        owner = list(range(n_domains)) + [
            self.draw(st.integers(0, n_domains - 1)) for _ in range(n_sources - n_domains)]
        names: dict[int, str] = {}
        for d in owner:
            sid = self.new_id("s")
            op = {"op": "source", "id": sid,
                  "kind": self.draw(_pick(("portal", "contract", "inbox", "user")))}
            if d not in names and self.draw(st.booleans()):
                names[d] = sid  # domain left implicit: it is the source's id
                if self.draw(st.booleans()):
                    op["domain"] = sid
            else:
                op["domain"] = names.setdefault(d, f"dom-{d}")
            if self.draw(st.booleans()):
                op["name"] = f"Source {sid}"
            self.sources.append(sid)
            self.emit(op)

    def observe(self) -> None:
        oid, at = self.new_id("o"), self.now()
        text = self.draw(_variant(self.draw(_pick(tuple(FACTS)))))
        self.emit({"op": "observe", "id": oid, "source": self.draw(st.sampled_from(self.sources)),
                   "text": text, "at": at})
        self.obs_times.append(self.t)
        self.mems.append((oid, "observation"))

    def write(self) -> None:
        wid = self.new_id("m")
        restate = self.writes and self.draw(st.integers(0, 2)) == 0
        if restate:  # same kind and text as an earlier write; premises may close a cycle
            index, kind, base = self.draw(st.sampled_from(self.writes))
            later = [m for m, _ in self.mems[index + 1:]]
            premises = self.premises(later) if later and self.draw(st.booleans()) else None
        else:
            index = len(self.mems)
            kind = self.draw(_pick(("belief", "belief", "plan", "answer")))
            base, premises = self.draw(_pick(tuple(TEXTS[kind]))), None
        self.emit({"op": "write", "id": wid, "kind": kind, "agent": "agent-1",
                   "text": self.draw(_variant(base)), "premises": premises or self.premises(),
                   "at": self.now()})
        self.writes.append((index, kind, base))
        self.mems.append((wid, kind))
        self.versions.append((wid, kind))

    def update(self) -> None:
        """A new version of a written memory: often resting on the old one (a profile
        rewritten from itself), sometimes with the old text again or another version's."""
        old, kind = self.draw(st.sampled_from(self.versions))
        uid = self.new_id("u")
        premises = self.premises()
        if old not in premises and self.draw(st.booleans()):
            premises = [old, *premises[:2]]
        self.emit({"op": "update", "id": uid, "memory": old, "agent": "agent-1",
                   "text": self.draw(_variant(self.draw(_pick(tuple(TEXTS[kind]))))),
                   "premises": premises, "at": self.now()})
        self.mems.append((uid, kind))
        self.versions.append((uid, kind))

    def delete(self) -> None:
        self.emit({"op": "delete", "id": self.new_id("d"),
                   "memory": self.draw(st.sampled_from(self.versions))[0], "agent": "agent-1",
                   "at": self.now()})

    def act(self) -> None:
        aid = self.new_id("a")
        op = {"op": "act", "id": aid, "agent": "agent-2", "text": f"pay for {aid}",
              "premises": self.premises(), "at": self.now(), "executed": self.draw(st.booleans())}
        amount = self.draw(st.one_of(st.none(), _pick(tuple(AMOUNTS))))
        if amount is not None:
            op["amount"] = amount
        if self.draw(st.integers(0, 3)):
            op["payee"] = self.draw(_pick(("ACME", "Straße GmbH")))
        if self.draw(st.booleans()):
            op["account"] = self.draw(_pick(tuple(ACCOUNTS)))
        if amount is not None and self.draw(st.integers(0, 2)) == 0:
            op["currency"] = self.draw(_pick(("USD", "EUR", "JPY")))
        self.emit(op)
        self.mems.append((aid, "action"))
        self.actions.append(aid)
        (self.executed if op["executed"] else self.unexecuted).append(aid)

    def structure(self, low: int, high: int) -> None:
        self.sources_()
        self.observe()
        for _ in range(self.draw(st.integers(low, high))):
            steps = ["observe", "write", "write", "act"]
            if self.versions:
                steps += ["update", "delete"]
            step = self.draw(st.sampled_from(steps))
            getattr(self, step)()
        if not self.actions:
            self.act()

    # operations
    def bound(self) -> datetime | None:
        if self.draw(st.integers(0, 3)) == 0:
            return None
        near = self.draw(st.sampled_from(self.obs_times))
        return near + timedelta(minutes=self.draw(_pick((-1, 0, 0, 1))))

    def retract(self) -> None:
        op = {"op": "retract", "id": self.new_id("r"),
              "source": self.draw(st.sampled_from(self.sources)), "reason": "compromised",
              "by": "security"}
        lo, hi = self.bound(), self.bound()
        if lo and hi and lo > hi:
            lo, hi = hi, lo
        if lo:
            op["from"] = _ts(lo)
        if hi:
            op["to"] = _ts(hi)
        self.emit(op)
        self.undoable.append(op["id"])

    def withdraw(self) -> None:
        op = {"op": "withdraw", "id": self.new_id("w"),
              "memory": self.draw(st.sampled_from([m for m, _ in self.mems])),
              "reason": "wrong", "by": "reviewer"}
        self.emit(op)
        self.undoable.append(op["id"])

    def correct(self) -> None:
        memory, kind = self.draw(st.sampled_from([mk for mk in self.mems if mk[1] != "action"]))
        if self.draw(st.booleans()) or not self.sources:
            by = self.new_id("rev")
        else:
            by = self.draw(st.sampled_from(self.sources))
        cid = self.new_id("c")
        # A correction that says the same as the memory it corrects is a validation error
        # (docs/scenario-format.md), so valid scenarios never contain one.
        texts = [t for t in TEXTS[kind] if norm(t) != self.ref.key[memory][1]]
        op = {"op": "correct", "id": cid, "memory": memory,
              "text": self.draw(_variant(self.draw(st.sampled_from(texts)))), "by": by}
        if self.draw(st.booleans()):
            op["at"] = self.now()
        self.emit(op)
        if by not in self.sources:
            self.sources.append(by)
        self.mems.append((cid, kind))
        self.undoable.append(cid)

    def reinstate(self) -> None:
        rid = self.draw(st.sampled_from(self.undoable))
        self.emit({"op": "reinstate", "retraction": rid})
        self.undoable.remove(rid)

    def gate(self) -> None:
        """A gate, sometimes with the releasing call's own values: the proposal's (an account
        spelled otherwise), or another amount or account."""
        aid = self.draw(st.sampled_from(self.actions))
        op: dict = {"op": "gate", "action": aid}
        act = self.ref.actions[aid]
        choice = self.draw(_pick(("none", "none", "same", "other")))
        if choice == "same" and (act["amount"] is not None or act["account"]):
            args = {"amount": act["amount"], "account": act["account"]}
            if act["account"] and self.draw(st.booleans()):
                args["account"] = act["account"].replace(" ", "").lower()
            op["args"] = {k: v for k, v in args.items() if v is not None}
        elif choice == "other":
            op["args"] = self.draw(st.sampled_from([{"amount": 9999}, {"account": ACCOUNTS[2]},
                                                    {"currency": "EUR"}]))
        self.emit(op)

    def execute(self) -> None:
        aid = self.draw(st.sampled_from(self.unexecuted))
        self.emit({"op": "execute", "action": aid, "at": self.now()})
        self.unexecuted.remove(aid)
        self.executed.append(aid)

    def approvable(self) -> list[str]:
        inn = self.ref.status()
        return [a for a in self.executed
                if not self.ref.actions[a]["approved"] and self.ref.key[a] not in inn]

    def approve(self) -> None:
        self.emit({"op": "approve", "action": self.draw(st.sampled_from(self.approvable())),
                   "by": "finance"})

    def operation(self) -> None:
        steps = ["retract", "retract", "withdraw", "correct", "gate", "gate"]
        if self.undoable:
            steps += ["reinstate", "reinstate"]
        if self.unexecuted:
            steps.append("execute")
        if self.approvable():
            steps += ["approve", "approve"]
        if self.versions:
            steps += ["update", "delete"]
        getattr(self, self.draw(st.sampled_from(steps)))()


@st.composite
def scenario_graphs(draw) -> str:
    """Sources, observations, writes and actions, then one retraction and 1-3 gates."""
    b = _Builder(draw)
    b.structure(4, 35)
    getattr(b, draw(st.sampled_from(["retract", "retract", "retract", "withdraw", "correct"])))()
    for _ in range(draw(st.integers(1, 3))):
        b.gate()
    return b.text()


@st.composite
def operation_sequences(draw) -> str:
    """A graph followed by 5-15 retract/withdraw/correct/reinstate/gate/execute/approve lines."""
    b = _Builder(draw)
    b.structure(4, 30)
    for _ in range(draw(st.integers(5, 15))):
        b.operation()
    return b.text()
