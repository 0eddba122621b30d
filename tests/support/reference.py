"""A naive, independent reference for scenario files (docs/scenario-format.md).

Plain Python data, no graph, no incrementality: status is the least fixpoint recomputed from
scratch by naive iteration; fragility is brute force over subsets of trust domains. It assumes
the scenario is valid. Written without reading services/engine or services/graph, so that the
property tests compare two independent readings of the rules.
"""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
LIMIT = 10_000


def norm(text: str) -> str:
    """Case-folded, runs of white space collapsed to one space, ends stripped."""
    return " ".join(text.casefold().split())


def when(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


class Reference:
    """The state of one tenant after the lines applied so far."""

    def __init__(self) -> None:
        self.domain: dict[str, str] = {}  # source id -> trust domain
        self.key: dict[str, tuple] = {}  # scenario memory id -> memory identity
        self.grounds: dict[tuple, list[tuple]] = {}  # memory -> [(source, at, via)]
        self.justs: dict[tuple, list[list[tuple]]] = {}  # memory -> [[premise memory]]
        self.ret: dict[str, dict] = {}  # retract/withdraw/correct id -> op (+ "active")
        self.actions: dict[str, dict] = {}  # act id -> {amount, payee, executed, approved}
        self.gates: list[dict] = []
        self.last_at = EPOCH

    def _mem(self, key: tuple) -> tuple:
        self.grounds.setdefault(key, [])
        self.justs.setdefault(key, [])
        return key

    def apply(self, op: dict, line: int = 0) -> None:
        kind = op["op"]
        if kind == "source":
            self.domain[op["id"]] = op.get("domain", op["id"])
        elif kind == "observe":
            k = self._mem(("observation", norm(op["text"])))
            self.grounds[k].append((op["source"], when(op["at"]), None))
            self.key[op["id"]] = k
        elif kind in ("write", "act"):
            k = ("action", op["id"]) if kind == "act" else (op["kind"], norm(op["text"]))
            self._mem(k)
            self.justs[k].append([self.key[p] for p in op["premises"]])
            self.key[op["id"]] = k
            if kind == "act":
                self.actions[op["id"]] = {"amount": op.get("amount"), "payee": op.get("payee"),
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
            self.grounds[k].append((op["by"], at, op["id"]))
            self.key[op["id"]] = k
        elif kind == "reinstate":
            self.ret[op["retraction"]]["active"] = False
        elif kind == "approve":
            self.actions[op["action"]]["approved"] = True
        elif kind == "gate":
            a = op["action"]
            frag = self.fragility(a)
            amount = self.actions[a]["amount"]
            allowed = frag > 0 and (amount is None or amount <= LIMIT or frag >= 2)
            self.gates.append({"action": a, "allowed": allowed, "fragility": frag, "line": line})
        if "at" in op:
            self.last_at = max(self.last_at, when(op["at"]))

    def status(self, lost_domains: frozenset = frozenset()) -> set[tuple]:
        """The IN memories: least fixpoint by naive iteration, starting from all OUT."""
        active = [r for r in self.ret.values() if r["active"]]
        withdrawn = {self.key[r["memory"]] for r in active if r["op"] in ("withdraw", "correct")}

        def valid(source, at, via) -> bool:
            if via is not None and not self.ret[via]["active"]:
                return False
            if self.domain[source] in lost_domains:
                return False
            return not any(r["op"] == "retract" and r["source"] == source
                           and (r.get("from") is None or when(r["from"]) <= at)
                           and (r.get("to") is None or at <= when(r["to"]))
                           for r in active)

        grounded = {k for k, gs in self.grounds.items() if any(valid(*g) for g in gs)}
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

    def fragility(self, action: str) -> int:
        k = self.key[action]
        if k not in self.status():
            return 0
        domains = sorted(set(self.domain.values()))
        for size in range(1, len(domains) + 1):
            for lost in itertools.combinations(domains, size):
                if k not in self.status(frozenset(lost)):
                    return size
        raise AssertionError("an IN memory survived losing every trust domain")

    def report(self) -> dict:
        inn = self.status()
        out = {a for a in self.actions if self.key[a] not in inn}
        recalls = [
            {"action": a, "amount": v["amount"], "payee": v["payee"],
             "state": "approved" if v["approved"] else "drafted"}
            for a, v in self.actions.items() if v["approved"] or (v["executed"] and a in out)
        ]  # in act order; the stable sort below keeps it for ties
        recalls.sort(key=lambda r: (r["amount"] is None, -(r["amount"] or 0)))
        return {
            "memories": {m: {"status": "IN" if k in inn else "OUT"} for m, k in self.key.items()},
            "held": [a for a, v in self.actions.items() if not v["executed"] and a in out],
            "recalls": recalls,
            "gates": list(self.gates),
            "fragility": {a: self.fragility(a) for a in self.actions},
        }


def parse(text: str) -> list[tuple[int, dict]]:
    """(1-based line number, op) for every line that is not blank or a comment."""
    lines = []
    for number, raw in enumerate(text.split("\n"), start=1):
        stripped = raw.strip()
        if stripped and not stripped.startswith("#"):
            lines.append((number, json.loads(stripped)))
    return lines


def run(text: str) -> dict:
    """Apply a valid scenario in order and return the comparable part of its report."""
    ref = Reference()
    for number, op in parse(text):
        ref.apply(op, number)
        ref.status()  # naive: the whole fixpoint again after every line
    return ref.report()
