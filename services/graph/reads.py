"""The graph as the operator surfaces read it: one interface of named reads (``GraphReads``),
and their Cypher implementation (``CypherReads``, part of ``rescind.graph.store.TenantGraph``).

The API (``rescind.api.ops``), the operator's decisions, recalls and sources
(``rescind.operator``), the demo and the benchmarks ask these questions by name and never
write Cypher of their own; ``rescind.graph.in_memory.InMemoryGraph`` answers the same questions
from plain Python data, so that the logic above them is tested without a server (and a test
holds the two to the same answers on a real graph).

Rows come back as dicts or tuples with named fields, in the order the docstring gives; an
order not given is none (callers that show a list sort it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from rescind.core.belief import Node, Rules, Status, Window
from rescind.graph import queries as q
from rescind.graph.keys import source_uid

if TYPE_CHECKING:
    import redis

# A history line's fields (queries.HISTORY and its kin read the lines as JSON).
CHANGE_KEYS = ("rev", "status", "cause", "hops", "op", "by", "at")


def changes(history: list[str] | None) -> list[list]:
    """A memory's later changes, read from their JSON lines, in commit (revision) order: the
    lines come from its CHANGED edges and from an older graph's list, in no order."""
    return sorted((json.loads(e) for e in history or []), key=lambda e: e[0])


def rules_from(rows: Iterable[Iterable]) -> Rules:
    """The active rules, from rows of ``queries.ACTIVE_RETRACTIONS`` (``ACTIVE``'s columns)."""
    rules = Rules()
    for rid, kind, source, start, end, order in rows:
        if kind == "retract":
            rules.windows.append(Window(rid, source, start, end, order))
        else:
            rules.withdrawal_order[rid] = order
            if kind == "correct":
                rules.corrections[rid] = order
    rules.windows.sort(key=lambda w: w.order)
    return rules


# The columns of a page of memories (``memory_page``), as ``q.MEMORY_PAGE`` returns them.
PAGE = ("id", "kind", "text", "status", "cause", "hops", "at", "names", "agent", "amount",
        "payee", "account", "executed", "currency")
# A memory's birth and its history lines (``histories``), as ``q.HISTORIES`` returns them.
BIRTH = ("born_rev", "born", "born_cause", "born_hops", "at", "history")
# The columns of a page of histories (``history_page``), as ``q.HISTORY_PAGE`` returns them.
HISTORY_PAGE = ("id", "kind", "text", "names", *BIRTH, "amount", "executed", "agent", "payee",
                "account", "currency")
# A retraction record as listed (``retraction_list``), without its stored result.
RETRACTION = ("id", "kind", "state", "source", "start", "end", "memory", "new_memory", "reason",
              "by", "at", "reinstated_by", "reinstated_at", "order")
ACTIVE = ("id", "kind", "source", "start", "end", "order")  # a retraction in force
SOURCE = ("id", "kind", "name", "domain")
SAID = ("source", "kind", "text", "status", "at")  # what a payee's source said
OUTBOX = ("id", "action", "by", "at", "sent")


class Wire(Protocol):
    """What the region walk (``rescind.graph.region``) and the cone (``rescind.graph.cone``)
    read through, below the named reads: the tenant's server, its graph's key, its schema made
    ready, and reads pipelined in one round trip. ``TenantGraph`` is one."""

    conn: redis.Redis
    key: str

    def ensure_schema(self) -> None: ...

    def many(self, *queries: tuple[str, dict | None]) -> list[list[list]]: ...


@runtime_checkable
class GraphReads(Protocol):
    """The named reads of one tenant's graph that the operator surfaces use."""

    tenant: str

    def revision(self) -> int:
        """The graph's revision (the number of guarded writes so far)."""

    def statuses(self, ids: Iterable[str]) -> dict[str, Status]:
        """The status of each of ``ids`` that exists."""

    def memories(self, ids: Iterable[str]) -> list[dict]:
        """The properties and status of each of ``ids`` that exists."""

    def upstream(self, target: str) -> set[str]:
        """``target`` and every memory it rests on, through justifications."""

    def nodes(self, ids: Iterable[str]) -> dict[str, Node]:
        """Kind, justifications (premise tuples), groundings and withdrawals of ``ids``."""

    def rules(self) -> Rules:
        """The retractions in force, as the belief rule applies them."""

    def history(self, mid: str) -> list[dict]:
        """Every status a memory has had (its birth, then its changes), oldest first."""

    def named(self, name: str) -> list[str]:
        """Up to two memories whose writer gave them ``name`` (two: the name is ambiguous)."""

    def current_of_key(self, key: str) -> str | None:
        """A store key's current version: the one not replaced, else the latest."""

    def memory_page(self, kind: str | None = None, status: str | None = None,
                    text: str | None = None, skip: int = 0, limit: int = 100) -> list[dict]:
        """A page of memories (``PAGE``) ordered by time then id; ``text`` a lower-case
        fragment of the text; None for any."""

    def first_pages(self, kinds: Iterable[str], limit: int) -> dict[str, list[dict]]:
        """The first ``memory_page`` of each of ``kinds``."""

    def memory_counts(self) -> list[tuple[str, str, int]]:
        """(kind, status, how many) for every kind and status present."""

    def memory_total(self) -> int:
        """How many memories the graph holds."""

    def latest_plan_naming(self, needle: str) -> str | None:
        """The latest plan whose text contains ``needle``."""

    def premises_of(self, ids: Iterable[str]) -> list[tuple[str, str]]:
        """(memory, premise) for every premise of every justification of ``ids``."""

    def justification_rules(self, ids: Iterable[str]) -> list[tuple[str, str | None, list[str]]]:
        """(memory, rule, premises) for every justification of ``ids``."""

    def sources(self) -> list[dict]:
        """Every source (``SOURCE``), by id."""

    def source(self, sid: str) -> dict | None:
        """The source named ``sid`` (``SOURCE``)."""

    def source_reads(self) -> dict[str, tuple[int, int, int]]:
        """Each source that said something: (first observation, last, memories said)."""

    def sources_said(self) -> list[dict]:
        """Every source (``SOURCE``) with ``said``, how many SAID edges it has, by id."""

    def said_by(self, ids: Iterable[str]) -> list[tuple[str, str]]:
        """(source, memory) for every source that said one of ``ids``."""

    def domains(self, sources: Iterable[str]) -> dict[str, str]:
        """The trust domain of each of ``sources`` that exists."""

    def active_retractions(self) -> list[dict]:
        """The retractions in force (``ACTIVE``): the committed ones."""

    def retraction(self, rid: str) -> dict | None:
        """A retraction record, whole (its stored result too)."""

    def retraction_list(self) -> list[dict]:
        """Every retraction record (``RETRACTION``), in the order they were decided."""

    def actions(self) -> list[dict]:
        """Every payment (memory of kind ``action``) with its status."""

    def actions_in(self, ids: list[str]) -> list[dict]:
        """The payments among ``ids``, with their statuses."""

    def payee_said(self, payee: str) -> list[dict]:
        """What the sources that speak for ``payee`` said (``SAID``), newest first: a source
        named ``payee``, or ending in ``:payee``."""

    def outbox(self, ids: Iterable[str]) -> list[dict]:
        """The outbox entries of ``ids`` (``OUTBOX``)."""

    def histories(self, ids: Iterable[str]) -> dict[str, tuple]:
        """Each memory's birth and history lines (``BIRTH``), by id."""

    def history_page(self, kind: str | None = None, skip: int = 0,
                     limit: int = 100) -> list[dict]:
        """A page of memories with their births and history lines (``HISTORY_PAGE``),
        ordered by time then id."""


class CypherReads:
    """``GraphReads`` over FalkorDB, for a class that runs queries (``rows``, ``many``)."""

    def rows(self, cypher: str, params: dict | None = None,
             read_only: bool = True) -> list[list]:
        raise NotImplementedError

    def many(self, *queries: tuple[str, dict | None]) -> list[list[list]]:
        raise NotImplementedError

    def named(self, name: str) -> list[str]:
        return [r[0] for r in self.rows(q.MEMORY_NAMED, {"name": name})]

    def current_of_key(self, key: str) -> str | None:
        rows = self.rows(q.CURRENT_OF_KEY, {"key": key})
        return rows[0][0] if rows else None

    @staticmethod
    def _page_params(kind, status, text, skip, limit) -> dict:
        return {"kind": kind, "status": status, "text": text.lower() if text else None,
                "skip": skip, "limit": limit}

    def memory_page(self, kind: str | None = None, status: str | None = None,
                    text: str | None = None, skip: int = 0, limit: int = 100) -> list[dict]:
        rows = self.rows(q.MEMORY_PAGE, self._page_params(kind, status, text, skip, limit))
        return [dict(zip(PAGE, r, strict=True)) for r in rows]

    def first_pages(self, kinds: Iterable[str], limit: int) -> dict[str, list[dict]]:
        """The first page of each kind, in one round trip."""
        kinds = list(kinds)
        pages = self.many(*[(q.MEMORY_PAGE, self._page_params(k, None, None, 0, limit))
                            for k in kinds])
        return {k: [dict(zip(PAGE, r, strict=True)) for r in rows]
                for k, rows in zip(kinds, pages, strict=True)}

    def memory_counts(self) -> list[tuple[str, str, int]]:
        return [tuple(r) for r in self.rows(q.MEMORY_COUNTS)]

    def memory_total(self) -> int:
        return self.rows(q.MEMORY_TOTAL)[0][0]

    def latest_plan_naming(self, needle: str) -> str | None:
        rows = self.rows(q.LATEST_PLAN_NAMING, {"needle": needle})
        return rows[0][0] if rows else None

    def premises_of(self, ids: Iterable[str]) -> list[tuple[str, str]]:
        return [(m, p) for m, _j, p in self.rows(q.JUSTIFICATIONS_OF, {"ids": sorted(ids)})]

    def justification_rules(self, ids: Iterable[str]) -> list[tuple[str, str | None, list[str]]]:
        return [(m, rule, premises) for m, rule, premises
                in self.rows(q.JUSTIFICATION_RULES, {"ids": sorted(ids)})]

    def sources(self) -> list[dict]:
        return [dict(zip(SOURCE, r, strict=True)) for r in self.rows(q.SOURCES)]

    def source(self, sid: str) -> dict | None:
        rows = self.rows(q.SOURCE, {"uid": source_uid(sid)})
        return dict(zip(SOURCE, rows[0], strict=True)) if rows else None

    def source_reads(self) -> dict[str, tuple[int, int, int]]:
        return {sid: (first, last, n) for sid, first, last, n in self.rows(q.SOURCE_READS)}

    def sources_said(self) -> list[dict]:
        return [dict(zip((*SOURCE, "said"), r, strict=True)) for r in self.rows(q.SOURCES_SAID)]

    def said_by(self, ids: Iterable[str]) -> list[tuple[str, str]]:
        return [(s, m) for s, m in self.rows(q.SOURCES_OF, {"ids": list(ids)})]

    def active_retractions(self) -> list[dict]:
        return [dict(zip(ACTIVE, r, strict=True)) for r in self.rows(q.ACTIVE_RETRACTIONS)]

    def retraction_list(self) -> list[dict]:
        return [dict(zip(RETRACTION, r, strict=True)) for r in self.rows(q.RETRACTIONS)]

    def payee_said(self, payee: str) -> list[dict]:
        rows = self.rows(q.PAYEE_SAID, {"payee": payee, "suffix": f":{payee}"})
        return [dict(zip(SAID, r, strict=True)) for r in rows]

    def outbox(self, ids: Iterable[str]) -> list[dict]:
        return [dict(zip(OUTBOX, r, strict=True)) for r in self.rows(q.OUTBOX_IN, {"ids": list(ids)})]

    def histories(self, ids: Iterable[str]) -> dict[str, tuple]:
        return {r[0]: tuple(r[1:]) for r in self.rows(q.HISTORIES, {"ids": list(ids)})}

    def history_page(self, kind: str | None = None, skip: int = 0,
                     limit: int = 100) -> list[dict]:
        rows = self.rows(q.HISTORY_PAGE, {"kind": kind, "skip": skip, "limit": limit})
        return [dict(zip(HISTORY_PAGE, r, strict=True)) for r in rows]


__all__ = ["ACTIVE", "BIRTH", "CHANGE_KEYS", "HISTORY_PAGE", "OUTBOX", "PAGE", "RETRACTION", "SAID", "SOURCE",
           "CypherReads", "GraphReads",
           "Wire", "changes", "rules_from"]
