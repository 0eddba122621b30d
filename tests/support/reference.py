"""A naive, independent reference for scenario files (docs/scenario-format.md).

Plain Python data, no graph, no incrementality: status is the least fixpoint recomputed from
scratch by naive iteration; fragility is brute force over subsets of trust domains. It assumes
the scenario is valid. Written without reading services/engine or services/graph, so that the
property tests compare two independent readings of the rules.
"""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
LIMIT = 10_000
BASE = "USD"  # the gate's currency
WINDOW = timedelta(days=30)  # the gate's aggregate window
UNTRUSTED_KINDS = {"user", "agent"}  # whoever talks to the agent controls these


def norm(text: str) -> str:
    """Case-folded, runs of white space collapsed to one space, ends stripped."""
    return " ".join(text.casefold().split())


def letters(text: str) -> str:
    """An account as its letters and digits, upper-cased (an IBAN's compact form)."""
    return "".join(ch for ch in text.upper() if ch.isalnum())


def when(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


class Reference:
    """The state of one tenant after the lines applied so far."""

    def __init__(self, rates: dict[str, float] | None = None) -> None:
        self.rates = {BASE: 1.0, **(rates or {})}  # one unit's worth in BASE
        self.domain: dict[str, str] = {}  # source id -> trust domain
        self.kind: dict[str, str] = {}  # source id -> kind
        self.text: dict[tuple, str] = {}  # observation memory -> its text as written
        self.allowed: list[dict] = []  # what earlier gates allowed: action, at, base, account, payee
        self.key: dict[str, tuple] = {}  # scenario memory id -> memory identity
        self.grounds: dict[tuple, list[tuple]] = {}  # memory -> [(source, at, via)]
        self.justs: dict[tuple, list[list[tuple]]] = {}  # memory -> [[premise memory]]
        self.ret: dict[str, dict] = {}  # retract/withdraw/correct id -> op (+ "active")
        self.actions: dict[str, dict] = {}  # act id -> {amount, payee, executed, approved}
        self.gates: list[dict] = []
        self.last_at = EPOCH
        # memory -> why it is not current ("superseded", "deleted"); no part of the belief rule
        self.replaced: dict[tuple, str] = {}

    def _mem(self, key: tuple) -> tuple:
        self.grounds.setdefault(key, [])
        self.justs.setdefault(key, [])
        return key

    def apply(self, op: dict, line: int = 0) -> None:
        kind = op["op"]
        if kind == "source":
            self.domain[op["id"]] = op.get("domain", op["id"])
            self.kind[op["id"]] = op["kind"]
        elif kind == "observe":
            k = self._mem(("observation", norm(op["text"])))
            self.text.setdefault(k, op["text"])
            self.grounds[k].append((op["source"], when(op["at"]), None))
            self.key[op["id"]] = k
        elif kind == "update":  # a write of the old memory's kind; the old one is replaced
            old = self.key[op["memory"]]
            k = self._mem((old[0], norm(op["text"])))
            self.justs[k].append([self.key[p] for p in op["premises"]])
            self.key[op["id"]] = k
            self.replaced[old] = "superseded"
            self.replaced.pop(k, None)  # written again: current (also when it is the old one)
        elif kind == "delete":
            self.replaced[self.key[op["memory"]]] = "deleted"
        elif kind in ("write", "act"):
            k = ("action", op["id"]) if kind == "act" else (op["kind"], norm(op["text"]))
            self._mem(k)
            self.justs[k].append([self.key[p] for p in op["premises"]])
            self.key[op["id"]] = k
            if kind == "act":
                self.actions[op["id"]] = {
                    "amount": op.get("amount"), "payee": op.get("payee"),
                    "currency": op.get("currency"), "account": op.get("account"),
                    "executed": op["executed"], "approved": False}
        elif kind == "execute":
            self.actions[op["action"]]["executed"] = True
        elif kind in ("retract", "withdraw"):
            self.ret[op["id"]] = dict(op, active=True)
        elif kind == "correct":
            self.ret[op["id"]] = dict(op, active=True)
            self.domain.setdefault(op["by"], op["by"])
            at = when(op["at"]) if "at" in op else self.last_at
            k = self._mem((self.key[op["memory"]][0], norm(op["text"])))
            self.text.setdefault(k, op["text"])
            self.grounds[k].append((op["by"], at, op["id"]))
            self.key[op["id"]] = k
        elif kind == "reinstate":
            self.ret[op["retraction"]]["active"] = False
        elif kind == "approve":
            self.actions[op["action"]]["approved"] = True
        elif kind == "gate":
            if "at" in op:
                self.last_at = max(self.last_at, when(op["at"]))
            now = when(op["at"]) if "at" in op else self.last_at
            self.gates.append(dict(self.gate(op["action"], op.get("args") or {}, now), line=line))
        if "at" in op:
            self.last_at = max(self.last_at, when(op["at"]))

    def gate(self, a: str, args: dict, now: datetime) -> dict:
        """The gate's answer about action ``a``, released by a call with ``args``."""
        act = self.actions[a]
        same = {"amount": lambda x, y: y is not None and abs(x - y) < 0.005,
                "currency": lambda x, y: x == (y or BASE),
                "account": lambda x, y: y is not None and letters(x) == letters(y),
                "payee": lambda x, y: y is not None and norm(x) == norm(y)}
        if any(not same[f](v, act[f]) for f, v in args.items() if v is not None):
            return {"action": a, "allowed": False, "fragility": 0, "aggregate": 0.0}
        frag = self.fragility(a, act["account"])
        if self.key[a] not in self.status():
            return {"action": a, "allowed": False, "fragility": frag, "aggregate": 0.0}
        seen: dict[str, float] = {}
        for d in self.allowed:
            if d["at"] >= now - WINDOW and (
                    (act["account"] and d["account"] == letters(act["account"]))
                    or (act["payee"] and d["payee"] == norm(act["payee"]))):
                seen[d["action"]] = max(seen.get(d["action"], 0.0), d["base"] or 0.0)
        aggregate = sum(seen.values())
        entry = {"action": a, "allowed": False, "fragility": frag, "aggregate": aggregate}
        amount, currency = act["amount"], act["currency"] or BASE
        if amount is not None and currency not in self.rates:
            return entry
        base = None if amount is None or currency == BASE else round(
            amount * self.rates[currency], 2)
        base = amount if base is None else base
        if base is not None and base + aggregate > LIMIT and frag < 2:
            return entry
        self.allowed.append({"action": a, "at": now, "base": base,
                             "account": letters(act["account"]) if act["account"] else None,
                             "payee": norm(act["payee"]) if act["payee"] else None})
        return dict(entry, allowed=True)

    def status(self, lost_domains: frozenset = frozenset(), counts=None) -> set[tuple]:
        """The IN memories: least fixpoint by naive iteration, starting from all OUT. With
        ``counts`` (fragility), a grounding whose memory and source it refuses is lost too."""
        active = [r for r in self.ret.values() if r["active"]]
        withdrawn = {self.key[r["memory"]] for r in active if r["op"] in ("withdraw", "correct")}

        def valid(k, source, at, via) -> bool:
            if via is not None and not self.ret[via]["active"]:
                return False
            if self.domain[source] in lost_domains:
                return False
            if counts is not None and not counts(k, source):
                return False
            return not any(r["op"] == "retract" and r["source"] == source
                           and (r.get("from") is None or when(r["from"]) <= at)
                           and (r.get("to") is None or at <= when(r["to"]))
                           for r in active)

        grounded = {k for k, gs in self.grounds.items() if any(valid(k, *g) for g in gs)}
        inn: set[tuple] = set()
        changed = True
        while changed:
            changed = False
            for k in self.grounds:
                if k in inn or k in withdrawn:
                    continue
                if k in grounded or any(all(p in inn for p in j) for j in self.justs[k]):
                    inn.add(k)
                    changed = True
        return inn

    def fragility(self, action: str, account: str | None = None) -> int:
        """Least number of trust domains to lose for ``action`` to be OUT, where a user's or an
        agent's word never counts, nor (an account named) an observation not stating it."""
        k = self.key[action]

        def counts(mem: tuple, source: str) -> bool:
            if self.kind.get(source) in UNTRUSTED_KINDS:
                return False
            return account is None or letters(account) in letters(self.text.get(mem, ""))

        if k not in self.status(counts=counts):
            return 0
        domains = sorted(set(self.domain.values()))
        for size in range(1, len(domains) + 1):
            for lost in itertools.combinations(domains, size):
                if k not in self.status(frozenset(lost), counts):
                    return size
        raise AssertionError("an IN memory survived losing every trust domain")

    def report(self) -> dict:
        inn = self.status()
        out = {a for a in self.actions if self.key[a] not in inn}
        recalls = [
            {"action": a, "amount": v["amount"], "payee": v["payee"],
             "state": ("withdrawn" if v["executed"] and a not in out else "approved")
             if v["approved"] else "drafted"}
            for a, v in self.actions.items() if v["approved"] or (v["executed"] and a in out)
        ]  # in act order; the stable sort below keeps it for ties
        recalls.sort(key=lambda r: (r["amount"] is None, -(r["amount"] or 0)))
        return {
            "memories": {m: {"status": "IN" if k in inn else "OUT"} for m, k in self.key.items()},
            "held": [a for a, v in self.actions.items() if not v["executed"] and a in out],
            "recalls": recalls,
            "gates": [{k: g[k] for k in ("action", "allowed", "fragility", "aggregate", "line")}
                      for g in self.gates],
            "fragility": {a: self.fragility(a) for a in self.actions},
            "replaced": {m: self.replaced[k] for m, k in self.key.items() if k in self.replaced},
        }


def parse(text: str) -> list[tuple[int, dict]]:
    """(1-based line number, op) for every line that is not blank or a comment."""
    lines = []
    for number, raw in enumerate(text.split("\n"), start=1):
        stripped = raw.strip()
        if stripped and not stripped.startswith("#"):
            lines.append((number, json.loads(stripped)))
    return lines


def run(text: str, rates: dict[str, float] | None = None) -> dict:
    """Apply a valid scenario in order and return the comparable part of its report."""
    ref = Reference(rates)
    for number, op in parse(text):
        ref.apply(op, number)
        ref.status()  # naive: the whole fixpoint again after every line
    return ref.report()
