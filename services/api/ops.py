"""What the API routes and the MCP tools do, once the caller is known to be allowed.

Each function takes a tenant's graph (and the Redis connection where it publishes), calls the
engine, the operator's decisions, recalls and the gate; their refusals (``rescind.contract.errors``)
pass through unchanged and are answered once, in ``rescind.api.app``.
Committed decisions are published on the status stream so that agents' caches learn of them.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import redis
from pydantic import ValidationError

from rescind.api import models
from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import Invalid, NotFound
from rescind.contract.kinds import KINDS
from rescind.core.shapes import BLAST_GROUPS, GateDecision, stored_result
from rescind.engine import gate as gate_mod
from rescind.engine import retraction as ret
from rescind.graph.reads import GraphReads
from rescind.graph.store import TenantGraph
from rescind.operator import decisions
from rescind.operator import history as asof
from rescind.operator import recalls as rc
from rescind.operator import timeline as life


# -- small helpers ----------------------------------------------------------------------------
def iso(us: int | None) -> str | None:
    t = ev.from_micros(us)
    return None if t is None else t.isoformat().replace("+00:00", "Z")


def _time(text: str | None, what: str) -> int | None:
    return decisions.parse_time(text, what)


def _now() -> datetime:
    return datetime.now(UTC)


def resolve(graph: GraphReads, ref: str) -> str:
    """A memory id or name to its id; NotFound otherwise."""
    return decisions.resolve(graph, ref)


def public(f: dict) -> dict:
    """A memory as the API shows it: no internal bookkeeping (history, birth, sequence)."""
    out = {"id": f["id"], "kind": f.get("kind"), "text": f.get("text"),
           "status": f.get("status"), "cause": f.get("cause"), "hops": f.get("hops"),
           "at": iso(f.get("at")), "name": (f.get("names") or [None])[0],
           "agent": f.get("agent"), "trace": f.get("trace")}
    if f.get("kind") == "action":
        out.update(amount=f.get("amount"), currency=f.get("currency"), payee=f.get("payee"),
                   account=f.get("account"), executed=bool(f.get("executed")))
    return out


# -- reading ----------------------------------------------------------------------------------
def revision(graph: GraphReads) -> dict:
    return {"revision": graph.revision()}


def sources(graph: GraphReads) -> list[dict]:
    """Each source with its trust domain, when it was read (its first and last observation
    times, and how many memories it said) and the retractions of it now in force."""
    read = graph.source_reads()
    active: dict[str, list[dict]] = {}
    for r in retractions(graph):
        if r["kind"] == "retract" and r["state"] == "committed" and r.get("source"):
            active.setdefault(r["source"], []).append(
                {"id": r["id"], "from": r["from"], "to": r["to"], "reason": r["reason"]})
    out = []
    for s in graph.sources():
        sid = s["id"]
        first, last, n = read.get(sid, (None, None, 0))
        out.append({**s,
                    "first_read": iso(first), "last_read": iso(last), "observations": n,
                    "retracted": bool(active.get(sid)), "retractions": active.get(sid, [])})
    return out


def memories(graph: GraphReads, kind: str | None = None, status: str | None = None,
             text: str | None = None, skip: int = 0, limit: int = 100) -> dict:
    rows = graph.memory_page(kind, status, text, skip, limit)
    items = [public(r) for r in rows]
    return {"items": items, "next_skip": skip + limit if len(rows) == limit else None}


def counts(graph: GraphReads) -> dict:
    out: dict[str, dict[str, int]] = {k: {"IN": 0, "OUT": 0} for k in KINDS}
    for kind, status, n in graph.memory_counts():
        out.setdefault(kind, {"IN": 0, "OUT": 0})[status] = n
    return out


def overview(graph: GraphReads, per_kind: int = 200) -> dict:
    """The product view: sources, then each kind of memory, and the links between them."""
    rev = graph.revision()
    columns = {k: [public(r) for r in rows]
               for k, rows in graph.first_pages(KINDS, per_kind).items()}
    ids = [m["id"] for col in columns.values() for m in col]
    links, seen = [], set(ids)
    if ids:
        pairs = {(p, m) for m, p in graph.premises_of(ids) if p in seen}
        links = [{"from": s, "to": m} for s, m in graph.said_by(ids)] + [
            {"from": p, "to": m} for p, m in sorted(pairs)]
    return {"revision": rev, "counts": counts(graph), "sources": sources(graph),
            "columns": columns, "links": links,
            "truncated": any(len(c) == per_kind for c in columns.values())}


def memory(graph: GraphReads, ref: str) -> dict:
    mid = resolve(graph, ref)
    [facts] = graph.memories([mid])
    return {"memory": public(facts), "tree": decisions.explain(graph, mid)}


def history(graph: TenantGraph, ref: str) -> dict:
    """Every status the memory had; for an action, also every time the gate was asked about it
    (oldest first, like its statuses)."""
    mid = resolve(graph, ref)
    raw = graph.history(mid)
    out = {"id": mid, "history": [{**e, "at": iso(e.get("at"))} for e in raw]}
    if mid.startswith("act-"):
        log = list(reversed(gate_mod.decisions_log(graph, mid)))
        out["gate"] = log
        out["timeline"] = timeline(graph, mid, raw, log)
    return out


def timeline(graph: TenantGraph, mid: str, raw: list[dict], gate_log: list[dict]) -> list[dict]:
    """A payment's life, oldest first (``rescind.operator.timeline``), its times in ISO."""
    [f] = graph.memories([mid])
    whys = {r["id"]: r for r in retractions(graph)}
    for e in raw:  # a reinstatement's own words are kept with the retraction it undid
        rid = (e.get("by") or "").removesuffix("~reinstated")
        if rid in whys and e.get("op") == "reinstate":
            whys[rid]["reinstated_reason"] = (graph.retraction(rid) or {}).get(
                "reinstated_reason")
    return [{**step, "at": iso(step["at"])} for step in life.steps(f, raw, gate_log, whys)]


def _why(e: dict) -> dict:
    return {"status": e["status"], "op": e["op"], "cause": e["cause"], "hops": e["hops"],
            "by": e.get("by"), "rev": e["rev"], "at": iso(e["at"])}


def _point(at: str | None, rev: int | None) -> tuple[int | None, int | None]:
    if (at is None) == (rev is None):
        raise Invalid("give exactly one of at (an ISO 8601 time) or rev (a graph revision)")
    return _time(at, "at"), rev


def as_of(graph: GraphReads, at: str | None, rev: int | None, kind: str | None = None,
          status: str | None = None, skip: int = 0, limit: int = 100) -> dict:
    """What was believed at a time (or revision) and why: see ``asof`` for the semantics."""
    at_us, rev = _point(at, rev)
    found, scanned = asof.page(graph, at_us, rev, kind, status, skip, limit)
    items = [{"id": r["id"], "kind": r["kind"], "text": r["text"],
              "name": (r["names"] or [None])[0], "agent": r["agent"],
              **({"amount": r["amount"], "executed": bool(r["executed"]), "payee": r["payee"],
                  "account": r["account"], "currency": r["currency"]}
                 if r["kind"] == "action" else {}),
              "why": _why(e)} for r, e in found]
    return {"as_of": {"at": iso(at_us), "rev": rev}, "items": items,
            "next_skip": skip + limit if scanned == limit else None}


def memory_as_of(graph: GraphReads, ref: str, at: str | None, rev: int | None) -> dict:
    """One memory's status at a point, and its justification tree with each status then."""
    at_us, rev = _point(at, rev)
    mid = resolve(graph, ref)
    tree = decisions.explain(graph, mid)
    nodes: list[dict] = []

    def walk(node: dict) -> None:
        nodes.append(node)
        for premises in node.get("justifications", []):
            for p in premises:
                walk(p)

    walk(tree)
    then = asof.points(graph, sorted({n["id"] for n in nodes}), at_us, rev)
    for n in nodes:
        e = then.get(n["id"])
        n.update(status=e["status"] if e else None, cause=e["cause"] if e else None,
                 existed=e is not None)
        for s in n.get("said_by", []):
            s.pop("valid", None)  # validity under today's retractions, not those at the point
    e = then.get(mid)
    return {"as_of": {"at": iso(at_us), "rev": rev}, "id": mid, "existed": e is not None,
            "why": _why(e) if e else None, "tree": tree}


def retractions(graph: GraphReads) -> list[dict]:
    out = []
    for d in graph.retraction_list():
        d.pop("order")
        for k in ("start", "end", "at", "reinstated_at"):
            d[k] = iso(d[k])
        out.append(_from_to(d))
    return out


def _from_to(d: dict) -> dict:
    """A retraction's window as ``from``/``to``; ``start``/``end`` stay beside them, deprecated
    (they go in the next release)."""
    if "start" in d or "end" in d or d.get("kind") == "retract":
        d["from"], d["to"] = d.get("start"), d.get("end")
    return d


def retraction(graph: GraphReads, rid: str) -> dict:
    stored = graph.retraction(rid)
    if stored is None:
        raise NotFound(f"no retraction {rid!r}")
    for k in ("start", "end", "at", "reinstated_at"):
        if k in stored:
            stored[k] = iso(stored[k])
    for k in ("result", "undo_result"):
        if k in stored:
            stored[k] = stored_result(stored[k])
    return _from_to(stored)


def fragility(graph: TenantGraph, ref: str) -> dict:
    return decisions.fragility(graph, resolve(graph, ref))


def pending_payments(graph: TenantGraph, limit: int = 50) -> list[dict]:
    """Payments not executed yet, each with its fragility; those OUT are held, but one the
    gate refused last when it was proposed (never run: nothing to hold) is listed as refused,
    with why. A scheduled payment whose release was refused is still scheduled: held if OUT."""
    rows = []
    pending = [a for a in graph.actions() if not a.get("executed")][:limit]
    last = gate_mod.last_decisions(graph, [a["id"] for a in pending])
    for a in pending:
        frag, witness, domains = gate_mod.weakest_of(graph, a["id"])
        refused = gate_mod.never_ran(last.get(a["id"]))
        rows.append({**public(a), "held": a.get("status") == "OUT" and not refused,
                     "refused": refused, "gate": last.get(a["id"]), "fragility": frag,
                     "would_fake_it": list(witness), "domains": list(domains)})
    rows.sort(key=lambda r: (-(r["amount"] or 0), r["id"]))
    return rows


def audit_order(graph: TenantGraph) -> list[dict]:
    return decisions.audit_order(graph)


def gates(graph: TenantGraph, ref: str | None = None, limit: int = 100) -> list[dict]:
    """The gate's decisions, newest first, each with ``payee_name``: the payee as people know
    it (what its own sources call it, as a recall names it), else the payee as recorded."""
    rows = gate_mod.decisions_log(graph, resolve(graph, ref) if ref else None, limit)
    names = {p: rc.payee_name(graph, p)[0] for p in {r["payee"] for r in rows if r["payee"]}}
    return [{**r, "payee_name": names.get(r["payee"])} for r in rows]


def recalls(graph: GraphReads) -> list[dict]:
    return [r.to_dict() for r in rc.recall_list(graph)]


def recall(graph: GraphReads, ref: str) -> dict:
    return rc.find(graph, resolve(graph, ref)).to_dict()


# -- deciding ---------------------------------------------------------------------------------
def _blast_graph(graph: GraphReads, d: dict, source: str | None) -> dict:
    """The blast radius as a graph: what goes OUT or is kept, with the premise links among them."""
    nodes = [{"id": i["id"], "kind": i["kind"], "text": i["text"], "name": i["name"],
              "hops": i["hops"] or 0, "fate": d["direction"]}
             for k in BLAST_GROUPS for i in d[k]]
    nodes += [{"id": i["id"], "kind": i["kind"], "text": i["text"], "name": i["name"],
               "hops": None, "fate": "kept"} for i in d.get("kept", [])]
    ids = {n["id"] for n in nodes}
    edges = []
    if ids:
        edges = sorted({(p, m) for m, p in graph.premises_of(ids) if p in ids})
    if source is not None:
        nodes.insert(0, {"id": source, "kind": "source", "text": source, "name": source,
                         "hops": -1, "fate": "retracted"})
        edges = [(source, n["id"]) for n in nodes if n["kind"] == "observation"] + edges
    return {"nodes": nodes, "edges": [{"from": a, "to": b} for a, b in edges]}


def _window(body: models.Compromise) -> tuple[int | None, int | None]:
    (start, end), (start_name, end_name) = body.window, (
        "start" if body.start is not None else "from", "end" if body.end is not None else "to")
    return _time(start, start_name), _time(end, end_name)


def compromise_preview(graph: TenantGraph, body: models.Compromise, by: str) -> dict:
    start, end = _window(body)
    d = decisions.compromise(graph, body.source, start, end, body.reason, by, rid=body.id)
    return {**d, "graph": _blast_graph(graph, d, d["source"])}


def compromise_commit(conn: redis.Redis, graph: TenantGraph, body: models.CompromiseCommit,
                      by: str) -> dict:
    """Commit a previewed compromise at the revision the preview returned (409 when stale);
    a commit repeated with the same id returns the first result and changes nothing."""
    start, end = _window(body)
    d = decisions.compromise(graph, body.source, start, end, body.reason, by, commit=True,
                            rid=body.id, rev=body.rev, conn=conn, force=body.force)
    return {**d, "repeated": d.get("repeated", False),
            "graph": _blast_graph(graph, d, d["source"])}


def reinstate_preview(graph: TenantGraph, rid: str, body: models.Reinstatement | None,
                      by: str) -> dict:
    """What undoing ``rid`` would bring back IN, the held payments it would release and the
    recalls it would withdraw or pull (``warnings``), and the revision to commit at."""
    d = decisions.reinstate(graph, rid, by, reason=body.reason if body else None)
    return {**d, "graph": _blast_graph(graph, d, None)}


def reinstate(conn: redis.Redis, graph: TenantGraph, rid: str,
              body: models.ReinstatementCommit, by: str) -> dict:
    """Commit a previewed reinstatement at the revision the preview returned (409 when the
    graph moved since); a repeat returns the first result."""
    d = decisions.reinstate(graph, rid, by, conn=conn, commit=True, rev=body.rev,
                            reason=body.reason)
    return {**d, "graph": _blast_graph(graph, d, None)}


def _op(graph: TenantGraph, body, by: str):
    mid = resolve(graph, body.memory)
    rid = body.id or f"{'wd' if isinstance(body, models.Withdrawal) else 'cor'}-{uuid.uuid4().hex[:10]}"
    if isinstance(body, models.Withdrawal):
        return ret.Withdraw(rid, mid, body.reason, by)
    return ret.Correct(rid, mid, body.text, body.reviewer or by, body.reason, body.name)


def change_preview(graph: TenantGraph, body: models.Withdrawal | models.Correction,
                   by: str) -> dict:
    """Preview a withdrawal or a correction: its blast radius and the revision to commit at."""
    d = decisions.decide(graph, _op(graph, body, by))
    return {**d, "graph": _blast_graph(graph, d, None)}


def change_commit(conn: redis.Redis, graph: TenantGraph,
                  body: models.WithdrawalCommit | models.CorrectionCommit, by: str) -> dict:
    d = decisions.decide(graph, _op(graph, body, by), commit=True, rev=body.rev, conn=conn)
    return {**d, "graph": _blast_graph(graph, d, None)}


def gate(graph: TenantGraph, body: models.GateAsk, policy: gate_mod.GatePolicy) -> dict:
    """The same gate the agents' calls go through (``rescind.engine.gate.judge``), with the
    same settings (``RESCIND_GATE_*``); the decision is kept like theirs."""
    at = ev.to_micros(_now())
    if body.premises:
        call = gate_mod.GateCall(ev.action_id(graph.tenant, body.action), tuple(body.premises),
                                 body.amount, body.account, body.payee, at, body.currency)
        d = gate_mod.judge(graph, call, policy) if body.amount is not None else \
            GateDecision(call.action, False, "blocked: a payment needs an amount", 0)
    else:
        call = gate_mod.GateCall(resolve(graph, body.action), None, body.amount, body.account,
                                 body.payee, at, body.currency)
        d = gate_mod.judge(graph, call, policy)
    d = gate_mod.record(graph, call, d, body.action)  # judged again if its aggregate moved
    return {"action": d.action, "allowed": d.allowed, "reason": d.reason,
            "fragility": d.fragility, "domains": list(d.domains),
            "would_fall": list(d.would_fall), "aggregate": d.aggregate,
            "base_amount": d.base_amount}


def approve(graph: TenantGraph, ref: str, by: str) -> dict:
    return rc.approve(graph, resolve(graph, ref), by, ev.to_micros(_now())).to_dict()


def reject(graph: TenantGraph, ref: str, body: models.RecallRejection, by: str) -> dict:
    return rc.reject(graph, resolve(graph, ref), by, ev.to_micros(_now()), body.reason).to_dict()


def annotate(graph: TenantGraph, ref: str, body: models.RecallNote, by: str) -> dict:
    return rc.annotate(graph, resolve(graph, ref), by, ev.to_micros(_now()), body.text).to_dict()


def export(graph: TenantGraph, ref: str, body: models.RecallExport, by: str,
           currency: str = "USD") -> dict:
    """The recall, marked exported, and the file (``file``: content, media type, name)."""
    r, file = rc.export(graph, resolve(graph, ref), by, ev.to_micros(_now()), body.format,
                        currency, body.allow_placeholders)
    return {**r.to_dict(), "file": file}


def tenant_settings(conn: redis.Redis, tenant: str) -> dict:
    """A created tenant's bank-file settings, with the placeholders they leave."""
    from rescind.graph import tenant_settings as ts
    from rescind.graph.tenants import UnknownTenant, known

    if not known(conn, tenant):
        raise UnknownTenant(tenant)
    return ts.bank_file(conn, tenant).to_dict()


def set_tenant_settings(conn: redis.Redis, tenant: str, changes: dict) -> dict:
    from rescind.graph import tenant_settings as ts

    tenant_settings(conn, tenant)  # a created tenant
    return ts.update(conn, tenant, changes).to_dict()


def approve_notice(graph: TenantGraph, ref: str, by: str) -> dict:
    return rc.approve_notice(graph, resolve(graph, ref), by, ev.to_micros(_now())).to_dict()


def export_notice(graph: TenantGraph, ref: str, body: models.NoticeExport, by: str) -> dict:
    """The recall with its notice marked exported, and the file (``file``)."""
    r, file = rc.export_notice(graph, resolve(graph, ref), by, ev.to_micros(_now()), body.format)
    return {**r.to_dict(), "file": file}


def ingest(conn: redis.Redis, tenant: str, batch: models.EventBatch,
           partitions: int = layout.PARTITIONS) -> dict:
    """Validate every event (all of the caller's tenant), then append them in one transaction
    to the tenant's partition stream, where the writer workers pick them up in order."""
    entries = []
    for i, e in enumerate(batch.events):
        if e.tenant != tenant:
            raise Invalid(f"events[{i}].tenant is {e.tenant!r}; this token sends events of "
                          f"{tenant!r} only")
        try:
            entries.append(layout.encode_event(e))
        except (ValueError, ValidationError) as exc:  # a lone surrogate cannot be encoded
            raise Invalid(f"events[{i}] cannot be encoded as UTF-8 JSON: {type(exc).__name__}") \
                from None
    name = layout.tenant_stream(tenant, partitions)
    pipe = conn.pipeline(transaction=True)
    for entry in entries:
        pipe.xadd(name, entry)
    ids = [i.decode() for i in pipe.execute()]
    return {"accepted": len(ids), "stream": name, "ids": ids}

