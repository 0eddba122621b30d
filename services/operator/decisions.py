"""What people do by hand: security declares a source compromised (a preview first), anyone
asks why a memory stands or fell, and which sources deserve an audit first.

Each function checks its input before touching the graph and raises an error of
``rescind.contract.errors`` with a sentence a person can act on; nothing is written when it
does. Committed decisions also go to the status stream, so that wrapped agents stop reading what went OUT.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import redis

from rescind.contract import events as ev
from rescind.contract.errors import Duplicate, Invalid, NotFound, StalePreview
from rescind.contract.kinds import OUT
from rescind.core.belief import Status, Window
from rescind.core.shapes import RetractionResult
from rescind.engine import gate
from rescind.engine import retraction as ret
from rescind.engine.gate import weakest_of
from rescind.graph.reads import GraphReads
from rescind.graph.store import TenantGraph
from rescind.operator import recalls, sources
from rescind.transport import streams


def parse_time(text: str | None, what: str) -> int | None:
    """ISO 8601 with a zone (``2026-11-16T08:00Z``) to epoch µs; None stays open."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise Invalid(f"{what} {text!r} is not an ISO 8601 time "
                            "(e.g. 2026-11-16T08:00Z)") from None
    if moment.tzinfo is None:
        raise Invalid(f"{what} {text!r} has no zone; add Z or +HH:MM")
    return ev.to_micros(moment)


def when(us: int | None) -> str:
    return "open" if us is None else ev.from_micros(us).strftime("%Y-%m-%d %H:%M UTC")


def resolve(graph: GraphReads, ref: str) -> str:
    """A memory id, the name an agent or scenario gave it (an action's name, say), or a store
    key (namespace/key: its current version)."""
    if graph.statuses([ref]):
        return ref
    named = ev.action_id(graph.tenant, ref)
    if graph.statuses([named]):
        return named
    named = graph.named(ref)
    if len(named) == 1:
        return named[0]
    if keyed := graph.current_of_key(ref):
        return keyed
    raise NotFound(f"no memory or action {ref!r} in tenant {graph.tenant}")


# -- compromise and reinstate -----------------------------------------------------------------
def compromise(graph: TenantGraph, source: str, start: int | None, end: int | None,
               reason: str, by: str, commit: bool = False, rid: str | None = None,
               rev: int | None = None, conn: redis.Redis | None = None,
               now: datetime | None = None, force: bool = False) -> dict:
    """Preview (default) or commit the retraction of ``source`` over [start, end]; ``now`` is
    when the decision is taken (default: the wall clock).

    A commit is refused (Duplicate) while another retraction of the same source over an
    overlapping window is in force, naming it, unless ``force``; the preview names those
    retractions (``duplicates``). Committing the same id again is a repeat, not a duplicate."""
    if not reason.strip():
        raise Invalid("say why the source is compromised (--reason)")
    if start is not None and end is not None and start > end:
        raise Invalid(f"the window ends ({when(end)}) before it starts ({when(start)})")
    source = sources.resolve(graph, source)  # any spelling: the source it names, or Invalid
    if not graph.window_seeds(source, None, None):
        raise Invalid(f"source {source!r} has no observations: nothing rests on it")
    if not graph.window_seeds(source, start, end):
        raise Invalid(f"no observation of {source!r} between {when(start)} and {when(end)}")
    op = ret.Retract(rid or f"cmp-{uuid.uuid4().hex[:10]}", source, start, end, reason, by)
    twins = duplicates(graph, op)
    repeat = rid is not None and graph.retraction(rid) is not None  # decide() tells repeats
    if commit and twins and not force and not repeat:
        first = twins[0]
        raise Duplicate(
            f"{source} is already retracted over an overlapping window by {first['id']} "
            f"({when(first['start'])} to {when(first['end'])}, still in force); nothing "
            "committed. Force it to record another retraction anyway (--force; in the API, "
            '"force": true)', [t["id"] for t in twins])
    return {**decide(graph, op, commit, rev, conn, now), "source": source,
            "duplicates": [{"id": t["id"], "from": _iso(t["start"]), "to": _iso(t["end"])}
                           for t in twins]}


def duplicates(graph: GraphReads, op: ret.Retract) -> list[dict]:
    """Retractions in force of ``op``'s source whose window overlaps ``op``'s (both ends
    included; a missing bound is open), other than ``op`` itself, oldest first."""
    lo, hi = op.start, op.end
    found = []
    for r in graph.active_retractions():
        if r["kind"] != "retract" or r["source"] != op.source or r["id"] == op.id:
            continue
        start, end = r["start"], r["end"]
        if (hi is None or start is None or start <= hi) and (lo is None or end is None
                                                              or lo <= end):
            found.append({"id": r["id"], "start": start, "end": end, "order": r["order"]})
    return [{k: v for k, v in t.items() if k != "order"}
            for t in sorted(found, key=lambda t: t["order"])]


def _iso(us: int | None) -> str | None:
    t = ev.from_micros(us)
    return None if t is None else t.isoformat().replace("+00:00", "Z")


def decide(graph: TenantGraph, op: ret.Retract | ret.Withdraw | ret.Correct, commit: bool = False,
           rev: int | None = None, conn: redis.Redis | None = None,
           now: datetime | None = None) -> dict:
    """Preview ``op``, or commit it: at ``rev`` when given (StalePreview if the graph moved),
    else on the graph as it is. A repeated commit returns the first result and announces
    nothing; a new one is announced to the agents on the status stream."""
    now = now or datetime.now(UTC)
    at = ev.to_micros(now)
    why = {"reason": op.reason} if op.reason else {}  # why it was decided, for the audit
    try:
        p = ret.preview(graph, op, at)
        kept = kept_by(graph, op, p.after, sorted(
            m for m, st in p.after.items() if st.is_in and m in p.before))
        if not commit:
            return {"committed": False, **describe(graph, p.repeated or p.result(), kept), **why}
        if p.repeated is not None:
            return {"committed": True, "repeated": True, **describe(graph, p.repeated), **why}
        if rev is not None and rev != p.rev:
            raise StalePreview(f"stale preview: the graph is at revision {p.rev}, not {rev}")
        try:
            result = ret.commit(graph, p)
        except StalePreview:  # a write got in between; without a revision, decide afresh
            if rev is not None:
                raise
            result = ret.run(graph, op, at)
    except StalePreview as exc:  # the same error, told what to do next
        raise StalePreview(f"{exc}: the graph changed since that preview; preview again") \
            from None
    _announce(graph, conn, result, now)
    return {"committed": True, **describe(graph, result, kept), **why}


def reinstate(graph: TenantGraph, rid: str, by: str, conn: redis.Redis | None = None,
              now: datetime | None = None, commit: bool = False, rev: int | None = None,
              reason: str | None = None) -> dict:
    """Preview (default) or commit undoing a retraction, withdrawal or correction by its id:
    everything it took out comes back unless something else still keeps it out.

    Money moves on a commit: held payments it brings back IN are released (``to_release``:
    the gate judges them again when they are asked about), and a recall of a payment it brings
    back IN is withdrawn (``recalls_to_withdraw``; one approved is pulled from the outbox,
    ``recalls_to_pull``, and one exported gets a withdrawal notice for the bank to approve).
    The preview says all of it (``warnings``) and gives the revision to commit at; a commit at
    ``rev`` is refused (StalePreview) when the graph moved since. Without ``rev`` (a library
    caller that committed knowingly) it is decided on the graph as it is. ``reason`` (why it
    is undone) is kept with the retraction as ``reinstated_reason``."""
    now = now or datetime.now(UTC)
    at = ev.to_micros(now)
    why = " ".join((reason or "").split()) or None
    op = ret.Reinstate(rid, by)
    try:
        p = ret.preview(graph, op, at)
        if p.repeated is not None:
            return {"committed": commit, "repeated": True, **describe(graph, p.repeated),
                    **_releases(graph, p.repeated, committed=True)}
        if why:
            p.mutation.retraction_updates[-1]["props"]["reinstated_reason"] = why
        if not commit:
            result = p.result()
            return {"committed": False, "reason": why, **describe(graph, result),
                    **_releases(graph, result, committed=False)}
        if rev is not None and rev != p.rev:
            raise StalePreview(f"stale preview: the graph is at revision {p.rev}, not {rev}")
        # What the payments' recalls were before the commit (an approved recall is withdrawn by
        # it): the warnings speak of them.
        before = _releases(graph, p.result(), committed=True)
        try:
            result = ret.commit(graph, p)
        except StalePreview:
            if rev is not None:
                raise
            result = ret.run(graph, op, at)
            before = _releases(graph, result, committed=True)
    except StalePreview as exc:
        raise StalePreview(f"{exc}: the graph changed since that preview; preview again") \
            from None
    _announce(graph, conn, result, now)
    return {"committed": True, "reason": why, **describe(graph, result), **before}


def _releases(graph: TenantGraph, result: RetractionResult, committed: bool) -> dict:
    """What a reinstatement does with money: the held payments it releases, the recalls it
    withdraws (each with what happens to it), the approved ones to pull from the outbox, and a
    sentence for each (``warnings``), worded for a preview or for what was done."""
    if result.blast_radius.direction == OUT:
        return {"to_release": [], "recalls_to_withdraw": [], "recalls_to_pull": [],
                "warnings": []}
    radius = result.blast_radius
    pending = [i.id for i in radius.pending_actions]
    back = [i.id for i in radius.executed_actions]
    facts = {f["id"]: f for f in graph.memories([*pending, *back])}
    release = [{**_item(facts.get(m, {"id": m}), None),
                "currency": facts.get(m, {}).get("currency")} for m in pending]
    withdraw = recalls.withdrawals(graph, back)
    pull = recalls.in_the_outbox(graph, back) if back else []
    warnings = [recalls.release_warning(r, committed) for r in release]
    warnings += [recalls.withdraw_warning(w, committed) for w in withdraw]
    warnings += [recalls.outbox_warning(x) for x in pull]
    return {"to_release": release, "recalls_to_withdraw": withdraw, "recalls_to_pull": pull,
            "warnings": warnings}


def outbox_warnings(graph: TenantGraph, result: RetractionResult) -> dict:
    """Executed payments a reinstatement brought back IN whose recall finance had approved:
    the request is in the outbox (perhaps exported for the bank) and should be pulled
    (``recalls_to_pull``, and a sentence each in ``warnings``)."""
    back = [i.id for i in result.blast_radius.executed_actions] \
        if result.blast_radius.direction != OUT else []
    pull = recalls.in_the_outbox(graph, back) if back else []
    return {"recalls_to_pull": pull, "warnings": [recalls.outbox_warning(p) for p in pull]}


def _announce(graph: TenantGraph, conn: redis.Redis | None, result: RetractionResult,
              now: datetime) -> None:
    streams.publish_status(conn or graph.conn, graph.tenant, result.id, result.rev,
                           result.changed, now)


def describe(graph: TenantGraph, result: RetractionResult,
             kept: dict[str, list[dict]] | None = None) -> dict:
    """The engine's blast radius with what a person needs: texts, amounts, payees; and what
    the retraction reaches but leaves IN, because it has an independent reason, with that
    reason (``kept_by``). This is the document the API, MCP and the CLI's --json give."""
    kept = kept or {}
    radius = result.blast_radius
    facts = {f["id"]: f for f in graph.memories([*(i.id for i in radius.items()), *kept])}
    groups = {name: [_item(facts.get(i.id, {"id": i.id}), i.hops) for i in items]
              for name, items in radius.groups()}
    out = radius.direction == OUT
    pending = groups["pending_actions"] if out else []
    last = gate.last_decisions(graph, [p["id"] for p in pending]) if pending else {}
    return {"retraction": result.id, "op": result.op, "rev": result.rev,
            "direction": radius.direction, "counts": radius.counts, **groups,
            # a call the gate refused never ran: nothing to hold (a refused release: held)
            "to_hold": [p for p in pending if not gate.never_ran(last.get(p["id"]))],
            "to_recall": groups["executed_actions"] if out else [],
            "kept": [{**_item(facts[m], None), "kept_by": why} for m, why in kept.items()
                     if m in facts]}


def kept_by(graph: TenantGraph, op, after: dict[str, Status], kept: list[str],
            depth: int = 12) -> dict[str, list[dict]]:
    """For each memory ``op`` reaches but leaves IN: what still holds it. Each reason is a
    source that still vouches for it (``source``), or a justification whose premises are all
    still IN (``premises``), with the sources still valid under those premises (``sources``):
    "kept IN by: the signed contract"."""
    if not kept:
        return {}
    rules = graph.rules()
    if isinstance(op, ret.Retract):  # the window being decided counts as if committed
        rules.windows.append(Window(op.id, op.source, op.start, op.end, 1 << 61))
    elif isinstance(op, ret.Correct):
        rules.corrections[op.id] = 1 << 61
    status, nodes, frontier = dict(after), {}, set(kept)
    for _ in range(depth):  # up through what is still IN, reading each memory once
        new = sorted(frontier - nodes.keys())
        if not new:
            break
        nodes.update(graph.nodes(new))
        premises = {p for m in new if m in nodes for j in nodes[m].justifications for p in j}
        status.update(graph.statuses(sorted(premises - status.keys())))
        frontier = {p for p in premises if status.get(p) is not None and status[p].is_in}

    def holding(m: str) -> list[tuple[str, ...]]:
        node = nodes.get(m)
        return list(dict.fromkeys(  # two justifications on the same premises: one reason
            tuple(sorted(j)) for j in node.justifications
            if all(status.get(p) is not None and status[p].is_in for p in j))) if node else []

    def valid(m: str) -> list[str]:
        node = nodes.get(m)
        return sorted({g.source for g in node.groundings if rules.grounding_cause(g) is None}) \
            if node else []

    under: dict[str, set[str]] = {}

    def sources(m: str, path: frozenset[str] = frozenset()) -> set[str]:
        if m not in under:
            found = set(valid(m))
            for j in holding(m):
                for p in j:
                    if p not in path:
                        found |= sources(p, path | {m})
            under[m] = found
        return under[m]

    reasons = {m: ([("source", s) for s in valid(m)] + [("premises", j) for j in holding(m)])
               for m in kept}
    facts = {f["id"]: f for f in graph.memories(
        {p for rs in reasons.values() for kind, j in rs if kind == "premises" for p in j})}
    named = {sid: graph.source(sid) or {} for m in kept for sid in sources(m)}

    def source(sid: str) -> dict:
        return {"source": sid, "name": named[sid].get("name"), "domain": named[sid].get("domain")}

    return {m: [source(x) if kind == "source" else
                {"premises": [_item(facts.get(p, {"id": p}), None) for p in x],
                 "sources": [source(s) for s in sorted(set().union(*(sources(p) for p in x)))]}
                for kind, x in reasons[m]] for m in kept}


def _item(f: dict, hops: int | None) -> dict:
    item = {"id": f["id"], "kind": f.get("kind"), "text": f.get("text"), "hops": hops,
            "name": (f.get("names") or [None])[0]}
    if f.get("kind") == "action":
        item.update(amount=f.get("amount"), payee=f.get("payee"), account=f.get("account"),
                    executed=bool(f.get("executed")))
    return item


# -- reading why --------------------------------------------------------------------------------
def explain(graph: GraphReads, ref: str, depth: int = 12) -> dict:
    """The justification tree of a memory down to its sources, with every status on the way."""
    target = resolve(graph, ref)
    ids = graph.upstream(target)
    nodes = graph.nodes(ids)
    facts = {f["id"]: f for f in graph.memories(ids)}
    sources = {g.source for n in nodes.values() for g in n.groundings}
    domains = graph.domains(sources)
    rules = graph.rules()
    chosen = {(mid, tuple(sorted(premises))): rule
              for mid, rule, premises in graph.justification_rules(ids)}
    expanded: set[str] = set()

    def tree(mid: str, path: frozenset[str], left: int) -> dict:
        f, node = facts.get(mid, {}), nodes.get(mid)
        out = {"id": mid, "kind": f.get("kind"), "text": f.get("text"), "status": f.get("status"),
               "cause": f.get("cause"), "name": (f.get("names") or [None])[0]}
        if f.get("kind") == "action":
            out.update(amount=f.get("amount"), payee=f.get("payee"),
                       executed=bool(f.get("executed")))
        if f.get("ungrounded"):  # states an identifier no observation states (core.lineage)
            out["ungrounded"] = f["ungrounded"]
        if node is None or left == 0 or mid in path:
            return out
        if mid in expanded:  # a DAG: each memory's reasons are shown once, where first met
            out["see_above"] = True
            return out
        expanded.add(mid)
        out["said_by"] = [{"source": g.source, "domain": domains.get(g.source, g.source),
                           "at": when(g.at), "valid": rules.grounding_cause(g) is None}
                          for g in node.groundings]
        # An agent run twice on the same premises records the same justification twice: each
        # premise set is shown once, with how many times it was recorded (same order).
        recorded: dict[tuple[str, ...], int] = {}
        for premises in node.justifications:
            key = tuple(sorted(premises))
            recorded[key] = recorded.get(key, 0) + 1
        out["justifications"] = [[tree(p, path | {mid}, left - 1) for p in premises]
                                 for premises in recorded]
        # How each was chosen: matched, turn-context, agent, declared or lineage (same order).
        out["justification_rules"] = [chosen.get((mid, premises)) for premises in recorded]
        out["justification_counts"] = list(recorded.values())
        return out

    return tree(target, frozenset(), depth)


def fragility(graph: TenantGraph, ref: str) -> dict:
    """How many trust domains an attacker must control to fake this, and which would do."""
    target = resolve(graph, ref)
    frag, witness, domains = weakest_of(graph, target)
    [facts] = graph.memories([target])
    return {"id": target, "name": (facts.get("names") or [None])[0], "text": facts.get("text"),
            "status": facts.get("status"), "amount": facts.get("amount"), "fragility": frag,
            "would_fake_it": list(witness), "domains": list(domains)}


def audit_order(graph: TenantGraph) -> list[dict]:
    """Sources ranked by the value of what rests on them alone: what retracting each one for
    all time would take OUT (payments by amount first, then everything else by count)."""
    ranked = []
    for s in graph.sources():
        sid, kind, domain = s["id"], s["kind"], s["domain"]
        p = ret.preview(graph, ret.Retract(f"audit-{uuid.uuid4().hex[:8]}", sid, reason="audit"))
        radius = p.blast_radius()
        actions = radius.executed_actions + radius.pending_actions
        amounts = {f["id"]: f.get("amount") or 0 for f in graph.memories([a.id for a in actions])}
        counts = radius.counts
        ranked.append({"source": sid, "kind": kind, "domain": domain,
                       "value_at_risk": sum(amounts.values()),
                       "payments": len(actions), "memories": sum(counts.values()),
                       "counts": counts})
    ranked.sort(key=lambda r: (-r["value_at_risk"], -r["memories"], r["source"]))
    return ranked
