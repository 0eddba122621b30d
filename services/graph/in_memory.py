"""``InMemoryGraph``: the named reads of ``rescind.graph.reads.GraphReads`` over plain Python
data, for unit tests of the logic above them (``rescind.api.ops``, ``rescind.operator``).

It holds what a tenant's graph holds, as the reads see it: memories (their properties, the
status of their STATUS edge and their history lines), sources, who said what (SAID), the
justifications, the retraction records and the outbox. It is built with ``add_*``, ``say``,
``justify`` and ``change``; it runs no belief rule and no write guard: a test states the
statuses it wants. Each read answers as its Cypher statement does on FalkorDB, nulls included
(``properties()`` leaves null properties out; an ascending order puts nulls last);
tests/integration/graph/test_reads.py holds the two to the same answers on a real graph.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from rescind.core.belief import Grounding, Node, Rules, Status
from rescind.graph.reads import (
    ACTIVE,
    BIRTH,
    CHANGE_KEYS,
    HISTORY_PAGE,
    PAGE,
    RETRACTION,
    changes,
    rules_from,
)

_STATUS = ("status", "cause", "hops")
_REPLACED = ("superseded", "deleted")


def _last(value):
    """A sort key putting nulls after every value, as Cypher's ascending order does."""
    return (value is None, value)


@dataclass
class _Justification:
    id: str
    mem: str
    premises: list[str]
    rule: str | None = None


@dataclass
class InMemoryGraph:
    """One tenant's graph in memory (see the module's docstring)."""

    tenant: str = "t"
    rev: int = 0
    mems: dict[str, dict] = field(default_factory=dict)  # id -> properties, status included
    lines: dict[str, list[str]] = field(default_factory=dict)  # id -> history lines (JSON)
    source_nodes: dict[str, dict] = field(default_factory=dict)  # id -> kind, name, domain
    said: list[dict] = field(default_factory=list)  # {source, mem, at, via}
    justifications: list[_Justification] = field(default_factory=list)
    retractions: dict[str, dict] = field(default_factory=dict)  # id -> the record
    outbox_entries: dict[str, dict] = field(default_factory=dict)

    # -- building ---------------------------------------------------------------------------
    def add_source(self, sid: str, kind: str = "email", name: str | None = None,
                   domain: str | None = None) -> None:
        self.source_nodes[sid] = {"id": sid, "kind": kind, "name": name or sid,
                                  "domain": domain or sid}

    def add_memory(self, mid: str, kind: str, text: str | None = None, status: str = "IN",
                   cause: str | None = None, hops: int | None = None, at: int | None = None,
                   **props) -> dict:
        """A memory born ``status`` at the current revision (``born_*`` unless given)."""
        born = {"born": status, "born_rev": self.rev, "born_cause": cause, "born_hops": hops}
        m = {"id": mid, "kind": kind, "text": text, "at": at, **born, **props,
             "status": status, "cause": cause, "hops": hops}
        self.mems[mid] = {k: v for k, v in m.items() if v is not None}
        self.lines.setdefault(mid, [])
        return self.mems[mid]

    def say(self, source: str, mem: str, at: int | None = None, via: str | None = None) -> None:
        """``source`` said ``mem`` (a SAID edge); the source is made if it is new."""
        if source not in self.source_nodes:
            self.add_source(source)
        self.said.append({"source": source, "mem": mem, "at": at, "via": via})

    def justify(self, mem: str, premises: Iterable[str], rule: str | None = None) -> None:
        self.justifications.append(_Justification(f"j{len(self.justifications)}", mem,
                                                  list(premises), rule))

    def change(self, mid: str, status: str, cause: str | None = None, hops: int | None = None,
               op: str = "retract", by: str | None = None, at: int | None = None) -> None:
        """A committed change of ``mid``'s status: a new revision and a line of its history."""
        self.rev += 1
        line = dict(zip(CHANGE_KEYS, (self.rev, status, cause, hops, op, by, at), strict=True))
        self.lines[mid].append(json.dumps(list(line.values())))
        m = self.mems[mid]
        for k, v in (("status", status), ("cause", cause), ("hops", hops)):
            if v is None:
                m.pop(k, None)
            else:
                m[k] = v

    def add_retraction(self, rid: str, kind: str = "retract", state: str = "committed",
                       **props) -> dict:
        """A retraction record, ordered after those before it unless ``order`` is given."""
        record = {"id": rid, "kind": kind, "state": state,
                  "order": props.pop("order", len(self.retractions) + 1), **props}
        self.retractions[rid] = {k: v for k, v in record.items() if v is not None}
        return self.retractions[rid]

    def add_outbox(self, oid: str, action: str, by: str, at: int, sent: bool = False) -> None:
        self.outbox_entries[oid] = {"id": oid, "action": action, "by": by, "at": at,
                                    "sent": sent}

    # -- the named reads --------------------------------------------------------------------
    def revision(self) -> int:
        return self.rev

    def statuses(self, ids: Iterable[str]) -> dict[str, Status]:
        return {i: Status(*(self.mems[i].get(k) for k in _STATUS))
                for i in ids if i in self.mems}

    def memories(self, ids: Iterable[str]) -> list[dict]:
        return [dict(self.mems[i]) for i in ids if i in self.mems]

    def upstream(self, target: str) -> set[str]:
        seen, frontier = {target}, [target]
        while frontier:
            nxt = {p for j in self.justifications if j.mem in frontier for p in j.premises
                   if p not in seen}
            seen.update(nxt)
            frontier = list(nxt)
        return seen

    def nodes(self, ids: Iterable[str]) -> dict[str, Node]:
        out = {}
        for i in ids:
            m = self.mems.get(i)
            if m is None:
                continue
            justs = [(j.premises[0],) if len(j.premises) == 1 else tuple(sorted(j.premises))
                     for j in self.justifications if j.mem == i and j.premises]
            grounds = [Grounding(e["source"], e["at"], e["via"]) for e in self.said
                       if e["mem"] == i]
            out[i] = Node(i, m["kind"], justs, grounds, list(m.get("withdrawn_by") or []))
        return out

    def rules(self) -> Rules:
        return rules_from([r[k] for k in ACTIVE] for r in self.active_retractions())

    def history(self, mid: str) -> list[dict]:
        m = self.mems.get(mid)
        if m is None:
            return []
        birth = {"rev": m.get("born_rev"), "status": m.get("born"), "cause": m.get("born_cause"),
                 "hops": m.get("born_hops"), "op": "write", "at": m.get("at")}
        return [birth] + [dict(zip(CHANGE_KEYS, e, strict=True))
                          for e in changes(self.lines[mid])]

    def named(self, name: str) -> list[str]:
        return [i for i, m in self.mems.items() if name in (m.get("names") or [])][:2]

    def current_of_key(self, key: str) -> str | None:
        def not_current(m: dict) -> bool:
            return m.get("replaced") is not None or any(
                w in _REPLACED for w in m.get("withdrawn_by") or [])

        found = sorted((m for m in self.mems.values() if m.get("key") == key),
                       key=lambda m: (not_current(m), -(m.get("born_rev") or 0)))
        return found[0]["id"] if found else None

    def _ordered(self, mems: Iterable[dict]) -> list[dict]:
        return sorted(mems, key=lambda m: (_last(m.get("at")), m["id"]))

    def memory_page(self, kind: str | None = None, status: str | None = None,
                    text: str | None = None, skip: int = 0, limit: int = 100) -> list[dict]:
        needle = text.lower() if text else None
        found = [m for m in self.mems.values()
                 if (kind is None or m["kind"] == kind)
                 and (status is None or m.get("status") == status)
                 and (needle is None or needle in (m.get("text") or "").lower()
                      and m.get("text") is not None)]
        return [{k: m.get(k) for k in PAGE} for m in self._ordered(found)[skip:skip + limit]]

    def first_pages(self, kinds: Iterable[str], limit: int) -> dict[str, list[dict]]:
        return {k: self.memory_page(k, limit=limit) for k in kinds}

    def memory_counts(self) -> list[tuple[str, str, int]]:
        counted = Counter((m["kind"], m.get("status")) for m in self.mems.values())
        return [(k, s, n) for (k, s), n in counted.items()]

    def memory_total(self) -> int:
        return len(self.mems)

    def latest_plan_naming(self, needle: str) -> str | None:
        plans = [m for m in self.mems.values()
                 if m["kind"] == "plan" and needle in (m.get("text") or "")]
        plans.sort(key=lambda m: _last(m.get("at")), reverse=True)  # descending: nulls first
        return plans[0]["id"] if plans else None

    def premises_of(self, ids: Iterable[str]) -> list[tuple[str, str]]:
        wanted = set(ids)
        return [(j.mem, p) for j in self.justifications if j.mem in wanted for p in j.premises]

    def justification_rules(self, ids: Iterable[str]) -> list[tuple[str, str | None, list[str]]]:
        wanted = set(ids)
        return [(j.mem, j.rule, list(j.premises)) for j in self.justifications
                if j.mem in wanted]

    def sources(self) -> list[dict]:
        return [dict(self.source_nodes[s]) for s in sorted(self.source_nodes)]

    def source(self, sid: str) -> dict | None:
        s = self.source_nodes.get(sid)
        return dict(s) if s else None

    def source_reads(self) -> dict[str, tuple[int, int, int]]:
        out: dict[str, tuple] = {}
        for sid in self.source_nodes:
            edges = [e for e in self.said if e["source"] == sid and e["mem"] in self.mems]
            if edges:
                ats = [e["at"] for e in edges if e["at"] is not None]
                out[sid] = (min(ats, default=None), max(ats, default=None),
                            len({e["mem"] for e in edges}))
        return out

    def sources_said(self) -> list[dict]:
        told = Counter(e["source"] for e in self.said)
        return [{**s, "said": told[s["id"]]} for s in self.sources()]

    def said_by(self, ids: Iterable[str]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for i in ids:
            out += list(dict.fromkeys((e["source"], i) for e in self.said if e["mem"] == i))
        return out

    def domains(self, sources: Iterable[str]) -> dict[str, str]:
        return {s: self.source_nodes[s]["domain"] for s in sources if s in self.source_nodes}

    def active_retractions(self) -> list[dict]:
        return [{k: r.get(k) for k in ACTIVE} for r in self.retractions.values()
                if r.get("state") == "committed"]

    def retraction(self, rid: str) -> dict | None:
        r = self.retractions.get(rid)
        return dict(r) if r else None

    def retraction_list(self) -> list[dict]:
        return [{k: r.get(k) for k in RETRACTION}
                for r in sorted(self.retractions.values(), key=lambda r: _last(r.get("order")))]

    def actions(self) -> list[dict]:
        return [dict(m) for m in self.mems.values() if m["kind"] == "action"]

    def actions_in(self, ids: list[str]) -> list[dict]:
        return [dict(self.mems[i]) for i in ids
                if i in self.mems and self.mems[i]["kind"] == "action"]

    def payee_said(self, payee: str) -> list[dict]:
        rows = {}
        for e in self.said:
            m = self.mems.get(e["mem"])
            sid = e["source"]
            if m is None or m["kind"] != "observation":
                continue
            if sid == payee or sid.endswith(f":{payee}"):
                row = (sid, self.source_nodes[sid]["kind"], m.get("text"), m.get("status"),
                       m.get("at"))
                rows[row] = None
        ordered = sorted(rows, key=lambda r: _last(r[4]), reverse=True)
        return [dict(zip(("source", "kind", "text", "status", "at"), r, strict=True))
                for r in ordered]

    def outbox(self, ids: Iterable[str]) -> list[dict]:
        return [dict(self.outbox_entries[i]) for i in ids if i in self.outbox_entries]

    def _birth(self, m: dict) -> tuple:
        return (*(m.get(k) for k in BIRTH[:-1]), list(self.lines[m["id"]]))

    def histories(self, ids: Iterable[str]) -> dict[str, tuple]:
        return {i: self._birth(self.mems[i]) for i in ids if i in self.mems}

    def history_page(self, kind: str | None = None, skip: int = 0,
                     limit: int = 100) -> list[dict]:
        found = [m for m in self.mems.values() if kind is None or m["kind"] == kind]
        out = []
        for m in self._ordered(found)[skip:skip + limit]:
            row = {k: m.get(k) for k in HISTORY_PAGE}
            row.update(zip(BIRTH, self._birth(m), strict=True))
            out.append(row)
        return out


__all__ = ["InMemoryGraph"]
