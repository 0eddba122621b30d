"""The planning half of a write batch, on plain facts: what the batch creates, grounds and
justifies, and the status every memory it touches has afterwards.

The engine (``rescind.engine.writes``) reads the facts, calls ``plan_batch`` and writes what it
returns, guarded by the revision it planned against; nothing here touches FalkorDB, so the
planning is tested without a server.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rescind.contract.errors import NotFound
from rescind.core import lineage
from rescind.core.belief import DELETED, SUPERSEDED, Grounding, Node, Rules, Status, settle
from rescind.core.changes import status_changes
from rescind.core.shapes import (
    Change,
    GroundingRow,
    IdentRow,
    JustificationRow,
    MemRow,
    Update,
    WriteBatch,
)


class UnknownPremise(NotFound):
    """A write names a premise that is not in the graph (yet)."""

    def __init__(self, missing: list[str]) -> None:
        self.missing = missing
        super().__init__(f"unknown premise(s): {', '.join(missing)}")


_PROPOSAL = ("amount", "currency", "payee", "account", "seq")  # what a new proposal of an action replaces
_NOWHERE = Status("OUT")  # what a deleted memory that never reached the graph "has"


@dataclass
class Write:
    """One justified write. ``mem_id`` is derived by the caller from kind and text."""

    event_id: str
    mem_id: str
    kind: str
    text: str
    at: int
    name: str | None = None  # the scenario's or agent's own name for the memory
    premises: tuple[str, ...] = ()
    source: str | None = None  # observations: who said it
    agent: str | None = None
    run: str | None = None
    rule: str = "declared"  # how the premises were chosen (matched, turn-context, ...)
    extra: dict = field(default_factory=dict)  # action fields: amount, payee, executed, ...
    key: str | None = None  # a store memory: its namespace/key, shared by its versions
    supersedes: str | None = None  # the version this one replaces: it is no longer current
    deletes: bool = False  # not a write: the version ``mem_id`` was deleted (no longer current)
    adopt: bool = False  # a grounding only if the memory is new (a store item that predates us)
    trace: str | None = None  # the W3C trace id of the run that wrote it (the console links it)


@dataclass
class Ahead:
    """What a batch still being written will leave: the next batch is planned on top of it."""

    rev: int  # the graph's revision once it is written
    seen: set[str]  # the event ids it writes
    known: dict[str, Status]  # the statuses it leaves
    rules: Rules
    idents: dict[str, list[str]] = field(default_factory=dict)  # identifier -> observations
    texts: dict[str, str] = field(default_factory=dict)  # of the memories it creates


@dataclass
class Plan:
    rev: int
    batch: WriteBatch | None  # None: every event was applied already
    statuses: list[Status]  # of each write's memory, afterwards
    ahead: Ahead | None = None
    text: object | None = None  # the batch's query text (graph.cypher.Prepared), built ahead


def named(writes: list[Write]) -> set[str]:
    """Every memory the writes name: what they write, rest on, replace or delete."""
    ids = {w.mem_id for w in writes} | {p for w in writes for p in w.premises}
    return ids | {w.supersedes for w in writes if w.supersedes}


def check_premises(writes: list[Write], known: dict[str, Status]) -> None:
    """UnknownPremise unless every premise is known or written in the same batch."""
    batch_ids = {w.mem_id for w in writes}
    missing = sorted({p for w in writes for p in w.premises} - known.keys() - batch_ids)
    if missing:
        raise UnknownPremise(missing)


def fresh(writes: list[Write], seen: set[str]) -> list[Write]:
    """The writes not applied yet; an event delivered twice in one batch is applied once."""
    out, once = [], set()
    for w in writes:
        if w.event_id not in seen and w.event_id not in once:
            once.add(w.event_id)
            out.append(w)
    return out


def revived(writes: list[Write], known: dict[str, Status]) -> set[str]:
    """Existing memories whose status these writes may change, whose region must be read: OUT
    ones that may come IN with the reason a write adds. A version replaced or deleted is not
    among them: it is no longer current, and stays as IN or OUT as its reasons make it."""
    return {w.mem_id for w in writes
            if w.mem_id in known and not known[w.mem_id].is_in and not w.deletes}


def outside(region: dict[str, Node], known: dict[str, Status]) -> set[str]:
    """Premises of ``region``'s justifications that are neither in it nor known: their
    statuses must be read before ``plan_batch``."""
    premises = {p for n in region.values() for j in n.justifications for p in j}
    return premises - region.keys() - known.keys()


def plan_batch(writes: list[Write], new_writes: list[Write], rev: int,
               known: dict[str, Status], rules: Rules, region: dict[str, Node],
               facts: lineage.Facts | None = None) -> Plan:
    """The batch that applies ``new_writes`` (the ``fresh`` ones among ``writes``) at ``rev``.

    ``known`` holds the statuses of every memory the writes name and of every premise
    ``outside`` the ``region``; ``region`` the revived memories and everything downstream of
    them, as read from the graph (it is extended in place with the new memories). ``facts``:
    what lineage needs (``rescind.core.lineage``; ``known`` then holds the statuses of the
    observations in ``facts.stating``); None gives no write lineage."""
    new: dict[str, MemRow] = {}
    groundings: list[GroundingRow] = []
    justifications: list[JustificationRow] = []
    idents: list[IdentRow] = []
    flagged: set[str] = set()
    ungrounded: dict[str, list[str]] = {}  # existing memories newly flagged
    stating = _stating(new_writes, known, facts, idents)
    replaced: dict[str, str | None] = {}  # existing versions no longer (or again) current
    proposed: dict[str, dict] = {}  # existing actions proposed again: their latest values
    for w in new_writes:
        if w.deletes:
            _replace(w.mem_id, DELETED, known, new, replaced)
            continue
        if w.adopt and (w.mem_id in known or w.mem_id in new):
            continue  # known already: adopting it would add a reason it does not have
        if w.supersedes and w.supersedes != w.mem_id:
            _replace(w.supersedes, SUPERSEDED, known, new, replaced)
        if w.key or w.supersedes:  # a version written (again) is what its key holds now
            _replace(w.mem_id, None, known, new, replaced)
        if w.mem_id not in known and w.mem_id not in new:
            region[w.mem_id] = Node(id=w.mem_id, kind=w.kind)
            props: MemRow = {"id": w.mem_id, "kind": w.kind, "text": w.text, "at": w.at,
                     "agent": w.agent, "run": w.run, "names": [w.name or w.event_id],
                     "key": w.key, "born_rev": rev + 1, "trace": w.trace, **w.extra}
            new[w.mem_id] = {k: v for k, v in props.items() if v is not None}
        if w.source is not None and w.mem_id in new:
            new[w.mem_id]["grounded"] = True
        elif w.source is not None:
            flagged.add(w.mem_id)  # an existing memory gains its first (or another) grounding
        elif w.kind == "action":
            # Proposed again (a retry, another amount): the action is what was proposed last,
            # not a memory of the first try.
            latest = {**{k: w.extra.get(k) for k in _PROPOSAL}, "text": w.text}
            if w.mem_id in new:
                new[w.mem_id].update({k: v for k, v in latest.items() if v is not None})
                for k in [k for k, v in latest.items() if v is None]:
                    new[w.mem_id].pop(k, None)
            else:
                proposed[w.mem_id] = {**latest, "failed": False}
        elif w.mem_id in new:
            names = new[w.mem_id]["names"]
            if (w.name or w.event_id) not in names:
                names.append(w.name or w.event_id)
        node = region.get(w.mem_id)
        if w.source is not None:
            if node is not None:
                node.groundings.append(Grounding(w.source, w.at, None))
            groundings.append({"id": w.event_id, "source": w.source, "mem": w.mem_id, "at": w.at})
        else:
            reasons = _lineage(w, facts, stating, new, known, ungrounded)
            for i, (premises, rule) in enumerate(reasons):
                if node is not None:
                    node.justifications.append(tuple(sorted(premises)))
                justifications.append({"id": w.event_id if i == 0 else f"{w.event_id}#{i}",
                                       "mem": w.mem_id, "premises": list(premises),
                                       "agent": w.agent, "run": w.run, "at": w.at, "rule": rule})
    boundary_ids = {p for n in region.values() for j in n.justifications for p in j} - set(region)
    boundary = {p: known[p] for p in boundary_ids if p in known}
    result = settle(region, boundary, rules)
    max_at = max(w.at for w in new_writes)
    changes = []
    for mid, st in result.items():
        if mid in new:
            new[mid].update(status=st.status, born=st.status)
            if st.cause is not None:
                new[mid].update(cause=st.cause, hops=st.hops, born_cause=st.cause,
                                born_hops=st.hops)
        elif known.get(mid) != st:
            changes.append((mid, st))
    updates: list[Update] = [{"id": m, "props": {"grounded": True}} for m in sorted(flagged)]
    updates += [{"id": m, "props": {"ungrounded": keys}} for m, keys in sorted(ungrounded.items())]
    updates += [{"id": m, "props": {"replaced": why}} for m, why in sorted(replaced.items())]
    updates += [{"id": m, "props": props} for m, props in sorted(proposed.items())]
    batch = WriteBatch(max_at, list(new.values()), updates,
                       status_changes(changes, rev + 1, "write", None, max_at), groundings,
                       justifications, idents)
    final = {**known, **result}
    nxt = Ahead(rev + 1, {w.event_id for w in new_writes}, {m: final[m] for m in result}, rules,
                _indexed(idents), {m: props.get("text", "") for m, props in new.items()})
    return Plan(rev, batch, [final.get(w.mem_id, _NOWHERE) for w in writes], nxt)


def _stating(new_writes: list[Write], known: dict[str, Status], facts: lineage.Facts | None,
             idents: list[IdentRow]) -> dict[str, list[str]]:
    """The observations that state each identifier: those ``facts`` read from the graph and the
    new ones of this batch, which are indexed (``idents``: a row per identifier an observation
    new to the graph states, whatever kinds are configured)."""
    stating = {k: list(v) for k, v in (facts.stating if facts else {}).items()}
    done: set[str] = set()
    for w in new_writes:
        if w.source is None or w.mem_id in known or w.mem_id in done:
            continue
        done.add(w.mem_id)
        for key in lineage.identifiers(w.text):
            idents.append({"key": key, "mem": w.mem_id})
            if w.mem_id not in stating.setdefault(key, []):
                stating[key].append(w.mem_id)
    return stating


def _lineage(w: Write, facts: lineage.Facts | None, stating: dict[str, list[str]],
             new: dict[str, MemRow], known: dict[str, Status], ungrounded: dict[str, list[str]]
             ) -> list[tuple[tuple[str, ...], str]]:
    """The justifications ``w`` is recorded with, each with its rule: its own premises; or,
    when it states a high-value identifier none of them states, one per choice of an
    observation stating each such identifier (rule ``lineage``). With none stating one, the
    memory is flagged as an ungrounded identifier and keeps its own premises."""
    own = [(tuple(w.premises), w.rule)]
    if facts is None or not lineage.applies(w.kind, w.rule, w.source, w.deletes):
        return own
    keys = lineage.identifiers(w.text, facts.kinds)
    if not keys:
        return own
    texts = [facts.texts.get(p) or (new[p]["text"] if p in new else "") for p in w.premises]
    keys = lineage.unstated(keys, texts)
    if not keys:
        return own
    alternatives = lineage.alternatives(tuple(w.premises), keys, stating)
    if alternatives:
        return [(premises, lineage.RULE) for premises in alternatives]
    missing = sorted(k for k in keys if not stating.get(k))
    if w.mem_id in new:
        new[w.mem_id]["ungrounded"] = sorted({*new[w.mem_id].get("ungrounded", ()), *missing})
    elif w.mem_id in known:
        ungrounded[w.mem_id] = sorted({*ungrounded.get(w.mem_id, ()), *missing})
    return own


def _indexed(idents: list[IdentRow]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for row in idents:
        out.setdefault(row["key"], []).append(row["mem"])
    return out


def moved(batch: WriteBatch) -> dict[str, Change]:
    """What a write batch tells the agents' status caches: every existing memory whose status
    it changed, and every new memory born OUT (one born IN needs no word: a cache counts an
    unknown memory as IN)."""
    out = {m["id"]: Change(m["status"], m.get("cause"), m.get("hops")) for m in batch.new
           if m.get("status") == "OUT"}
    for group in batch.changes:
        for mid in group["ids"]:
            out[mid] = Change(group["status"], group["cause"], group["hops"])
    return out


__all__ = ["Ahead", "Plan", "UnknownPremise", "Write", "check_premises", "fresh", "moved",
           "named", "outside", "plan_batch", "revived"]
def _replace(mid: str, why: str | None, known: dict[str, Status], new: dict[str, dict],
             replaced: dict[str, str | None]) -> None:
    """Mark the version ``mid`` as no longer current (``why``: superseded or deleted), or as
    current again (None). Its status does not change: a version that is not current is still a
    valid premise of what was built on it. A memory that never reached the graph has nothing to
    mark."""
    if mid in new:
        if why is None:
            new[mid].pop("replaced", None)
        else:
            new[mid]["replaced"] = why
    elif mid in known:
        replaced[mid] = why
