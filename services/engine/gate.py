"""The payment gate: asked before an action tool runs, and by `gate` lines of a scenario."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from rescind.contract import layout
from rescind.contract.errors import NotFound
from rescind.contract.events import from_micros, to_micros
from rescind.core import gate_rule as rule
from rescind.core.belief import Node, Rules
from rescind.core.evidence import account_evidence, evidence_weakest
from rescind.core.fragility import cone_domains, trust_domains, weakest
from rescind.core.gate_rule import EXPIRED, GatePolicy
from rescind.core.shapes import GateDecision
from rescind.graph import gate_facts, gate_ledger
from rescind.graph import queries as q
from rescind.graph.cone import Cone, ConeRead
from rescind.graph.cypher import CypherError, query
from rescind.graph.store import TenantGraph, log_failure
from rescind.runtime.telemetry import gate_decisions

log = logging.getLogger("rescind.gate")


class UnknownAction(NotFound):
    """The gate was asked about an action the graph does not hold."""


def fragility_of(graph: TenantGraph, target: str) -> tuple[int, tuple[str, ...]]:
    """Exact fragility of ``target`` and the trust domains its cone draws on."""
    frag, _witness, domains = weakest_of(graph, target)
    return frag, domains


def weakest_of(graph: TenantGraph, target: str) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """Fragility of ``target``, one smallest set of domains that would fake it, and every
    trust domain its cone draws on."""
    read = ConeRead(graph, [target], [(q.ACTIVE_RETRACTIONS, None)])
    c = read.finish()
    if target not in c.nodes:
        raise UnknownAction(f"unknown memory {target!r}")
    rules, domain_of = graph.rules_from(read.rows[0]), trust_domains(c.sources)
    domains = tuple(cone_domains(c.nodes, domain_of, rules))
    frag, witness = weakest(target, c.nodes, domain_of, rules)
    return frag, witness, domains


@dataclass(frozen=True)
class GateCall:
    """The call about to run: a new action resting on ``premises``, or (``premises`` None) a
    stored proposal by id, released by a call whose own values must equal it."""

    action: str
    premises: tuple[str, ...] | None = None
    amount: float | None = None
    account: str | None = None
    payee: str | None = None
    at: int | None = None  # when it is asked (epoch µs): the window of the aggregate ends here
    currency: str | None = None  # ISO 4217; None: the policy's (unless it requires one)
    amount_free: bool = False  # the operator declared the action amount-free
    ask: str | None = None  # the question's id: a new action's execution (gate_rule.execution_key)
    # every justification a new action was proposed with (``premises`` is the first): it rests
    # on any of them
    alternatives: tuple[tuple[str, ...], ...] | None = None


def judge(graph: TenantGraph, call: GateCall, policy: GatePolicy = GatePolicy()) -> GateDecision:
    """The one gate: the middleware's question, ``POST …/gate`` and a scenario's ``gate`` line
    all come here. The rule is ``rescind.core.gate_rule``; here are the reads."""
    if call.amount is not None and rule.not_an_amount(call.amount):
        return GateDecision(call.action, False, f"blocked: {call.amount!r} is not an amount", 0)
    if call.premises is None:
        d, agg = _judge_stored(graph, call, policy)
    else:
        d, agg = _judge_new(graph, call, policy)
        d = replace(d, amount=call.amount, currency=call.currency, account=call.account,
                    payee=call.payee,
                    execution=rule.execution_key(call.action, ask=call.ask or uuid.uuid4().hex))
    if agg is not None:
        _judged_on(d, agg, policy)
    return d


def _judge_stored(graph: TenantGraph, call: GateCall, p: GatePolicy
                  ) -> tuple[GateDecision, gate_ledger.Aggregate | None]:
    """A release: the proposal's stored facts are judged, and kept with the decision (the
    call's own where it named one), so that the aggregate of later calls counts them."""
    # The aggregate (the gate's ledger, in Redis) for the call's own account and payee when it
    # names both: they must equal the proposal's (checked below), which then name the same
    # keys. Otherwise it is read for the proposal's, once its facts are read.
    read = _Read(graph, [call.action], [(q.ACTIONS_IN, {"ids": [call.action]}),
                                        (q.ACTIVE_RETRACTIONS, None)], proposals=True,
                 aggregate=_aggregate_call(graph, call.account, call.payee, call.at, p)
                 if call.account and call.payee else None)
    early = read.aggregate
    facts = read.first()[0]
    if not facts:
        raise UnknownAction(f"unknown action {call.action!r}")
    props = facts[0][0]
    values = {n: getattr(call, n) if getattr(call, n) is not None else props.get(n)
              for n in ("amount", "currency", "account", "payee")}
    execution = rule.execution_key(call.action, props.get("seq", 0))
    d, agg = _judge_proposal(call, props, read, early, graph, p, execution)
    return replace(d, execution=execution, **values), agg


def _judge_proposal(call: GateCall, props: dict, read: _Read,
                    early: gate_ledger.Aggregate | None, graph: TenantGraph, p: GatePolicy,
                    execution: str) -> tuple[GateDecision, gate_ledger.Aggregate | None]:
    for name, asked in (("amount", call.amount), ("currency", call.currency),
                        ("account", call.account), ("payee", call.payee)):
        stored = props.get(name)
        if name == "currency" and stored is None and not p.require_currency:
            stored = p.currency  # a proposal without a currency is in the threshold's
        if asked is not None and not rule.same(name, asked, stored):
            return GateDecision(call.action, False, f"blocked: the call's {name} {asked!r} is "
                                f"not the proposal's {stored!r}", 0), None
    if props.get("failed"):
        return GateDecision(call.action, False, "blocked: the proposal's call failed "
                            f"({props.get('failed_reason') or 'no reason given'}); propose it "
                            "again", 0), None
    stored_amount = props.get("amount")
    if stored_amount is not None and rule.not_an_amount(stored_amount):
        return GateDecision(call.action, False, f"blocked: the proposal's amount "
                            f"{stored_amount!r} is not an amount", 0), None
    # The aggregate of the proposal's own account and payee.
    agg = early if early is not None else _aggregate(
        graph, props.get("account"), props.get("payee"), call.at, p)
    c = read.finish()
    if call.action not in c.nodes:
        raise UnknownAction(f"unknown memory {call.action!r}")
    frag, fall, domains = _evidence(c, c.of(call.action), call.action, props.get("account"),
                                    graph.rules_from(read.rows[1]), p)
    if props.get("status") != "IN":
        reason = f"blocked: the action is OUT (cause {props.get('cause')})"
        return GateDecision(call.action, False, reason, frag, domains, would_fall=fall), None
    already = _allowed(agg.rows, execution) if agg is not None else (0.0, 0.0)
    return replace(rule.decide(call.action, stored_amount, props.get("currency"), frag, domains,
                               p, already, call.amount_free), would_fall=fall), agg


ASKED = "~asked"  # the node a new action would be, in the cone of its premises


def _judge_new(graph: TenantGraph, call: GateCall, p: GatePolicy
               ) -> tuple[GateDecision, gate_ledger.Aggregate | None]:
    """An action not yet in the graph: it would rest on every premise of a justification
    together, on any of its justifications (``alternatives``, else the premises alone), and is
    judged as that node would be."""
    justifications = [tuple(j) for j in call.alternatives or ()] or [tuple(call.premises or ())]
    premises = list(dict.fromkeys(p for j in justifications for p in j))
    # The aggregate (the gate's ledger) beside the cone's read, in one round trip.
    read = _Read(graph, premises, [(q.ACTIVE_RETRACTIONS, None)],
                 aggregate=_aggregate_call(graph, call.account, call.payee, call.at, p))
    agg = read.aggregate
    read.first()
    known = read.cone.status
    missing = [x for x in premises if x not in known]
    if missing:
        return GateDecision(call.action, False,
                            f"blocked: unknown premise(s) {', '.join(missing)}", 0), None
    outs = [[x for x in j if not known[x].is_in] for j in justifications]
    if all(outs):  # every justification has an OUT premise
        out = outs[0][0]
        return GateDecision(call.action, False, f"blocked: it rests on OUT memory {out} "
                            f"(cause {known[out].cause})", 0), None
    c, rules = read.finish(), graph.rules_from(read.rows[0])
    nodes = {m: n for x in premises for m, n in c.of(x).items()}
    nodes[ASKED] = Node(ASKED, "action", justifications)
    frag, fall, domains = _evidence(c, nodes, ASKED, call.account, rules, p)
    already = _allowed(agg.rows) if agg is not None else (0.0, 0.0)
    return replace(rule.decide(call.action, call.amount, call.currency, frag, domains, p,
                               already, call.amount_free), would_fall=fall), agg


# Whether the gate reads a cone from the facts the writer keeps (``rescind.graph.gate_facts``)
# before the graph: on by default; the benchmark turns it off to compare.
KEPT_FACTS = True
READS = {"kept": 0, "graph": 0}  # how this process's decisions read their cones


class _Read:
    """A cone read for a decision: from the kept facts, or (any missing or stale) from the
    graph (``ConeRead``), whose facts are then kept in turn. The same face as ``ConeRead``:
    ``first()`` gives the riding reads' rows (the targets' facts are then in ``cone.status``),
    ``finish()`` the cone, and ``rows`` the riding reads' rows."""

    def __init__(self, graph: TenantGraph, targets: list[str], also: list[tuple[str, dict | None]],
                 proposals: bool = False, aggregate: gate_ledger.Call | None = None) -> None:
        self.graph, self.targets, self.also = graph, targets, also
        self.tags: gate_facts.Tags | None = None
        self.graph_read: ConeRead | None = None
        # ``aggregate``: the gate's aggregate, read beside the kept facts (``self.aggregate``)
        self.aggregate: gate_ledger.Aggregate | None = None
        if KEPT_FACTS and aggregate is not None:
            got, self.aggregate = gate_facts.read_beside(graph.conn, graph.tenant, targets,
                                                         proposals, aggregate)
        elif KEPT_FACTS:
            got = gate_facts.read(graph.conn, graph.tenant, targets, proposals)
        else:
            got = None
            if aggregate is not None:
                [self.aggregate] = gate_ledger.run_beside(graph.conn, [aggregate])
        READS["kept" if isinstance(got, gate_facts.Hit) else "graph"] += 1
        if isinstance(got, gate_facts.Hit):
            self.cone = got.cone
            self.rows = [[[got.proposals[t]] for t in targets if t in got.proposals]
                         if c == q.ACTIONS_IN else got.rules for c, _ in also]
            return
        self.tags = got
        self.graph_read = ConeRead(graph, targets, also)
        self.cone, self.rows = self.graph_read.cone, self.graph_read.rows

    @property
    def kept(self) -> bool:
        """Whether it was read from the kept facts."""
        return self.graph_read is None

    def first(self) -> list[list[list]]:
        return self.rows if self.graph_read is None else self.graph_read.first()

    def finish(self) -> Cone:
        if self.graph_read is None:
            return self.cone
        cone = self.graph_read.finish()
        if self.tags is not None:  # read from the graph: kept for the next decision
            taken, self.tags, proposals, rules = self.tags, None, {}, None
            for (c, _), rows in zip(self.also, self.rows, strict=True):
                if c == q.ACTIONS_IN:
                    proposals = {r[0]["id"]: r[0] for r in rows}
                elif c == q.ACTIVE_RETRACTIONS:
                    rules = rows
            try:
                gate_facts.fill(self.graph.conn, self.graph.tenant, taken, self.graph_read.raw,
                                proposals, rules)
            except Exception:  # only the next decision's speed is at stake
                log_failure(log, "a cone read from the graph could not be kept for the gate")
        return cone


def late(d: GateDecision, expires: datetime | None) -> GateDecision:
    """``d``, or (its asker's ``expires`` past) the same decision expired: never allowed."""
    if expires is None:
        return d
    waited = (datetime.now(UTC) - expires).total_seconds()
    return rule.expired(d, waited) if waited > 0 else d


def is_expired(d: GateDecision) -> bool:
    """Whether ``d`` was judged after its asker stopped waiting."""
    return d.reason.startswith(EXPIRED)


def _aggregate_call(graph: TenantGraph, account: str | None, payee: str | None,
                    at: int | None, p: GatePolicy) -> gate_ledger.Call | None:
    """The read of what was already allowed to ``account`` or ``payee`` in the window ending
    at ``at``, from the gate's ledger (``rescind.graph.gate_ledger``: a script, no FalkorDB
    query), with the versions its record checks; sent beside the cone's read (None: nothing
    to add up)."""
    if not account and not payee:
        return None
    log_of(graph)  # the ledger holds what the log held before it, from its first use
    end = at if at is not None else to_micros(datetime.now(UTC))
    return gate_ledger.aggregate_call(graph.tenant, rule.account_key(account),
                                      rule.payee_key(payee), end - p.window_us())


def _aggregate(graph: TenantGraph, account: str | None, payee: str | None, at: int | None,
               p: GatePolicy) -> gate_ledger.Aggregate | None:
    """``_aggregate_call``, on its own."""
    c = _aggregate_call(graph, account, payee, at, p)
    return gate_ledger.run_beside(graph.conn, [c])[0] if c is not None else None


# What each decision ``judge`` returned was judged on (its aggregate and the policy), for
# ``record`` to check and, if it moved, to judge again: by the decision object itself (a
# decision made anew from it, as ``late`` does, is never allowed, so it needs no check).
_JUDGED: dict[int, tuple[GateDecision, gate_ledger.Aggregate, GatePolicy]] = {}
_JUDGED_MAX = 4096  # decisions judged and never recorded are forgotten past this many
_judged_lock = threading.Lock()


def _judged_on(d: GateDecision, agg: gate_ledger.Aggregate, p: GatePolicy) -> None:
    with _judged_lock:
        _JUDGED[id(d)] = (d, agg, p)
        while len(_JUDGED) > _JUDGED_MAX:
            del _JUDGED[next(iter(_JUDGED))]


def _judged(d: GateDecision) -> tuple[gate_ledger.Aggregate, GatePolicy] | None:
    with _judged_lock:
        got = _JUDGED.pop(id(d), None)
    return (got[1], got[2]) if got is not None and got[0] is d else None


def log_of(graph: TenantGraph) -> str:
    """The key of ``graph``'s gate log (``layout.gate_log_key``), made ready on first use:
    its indexes built and operational, and the decisions the tenant's graph kept before it
    copied into it, once, under the tenant's lock."""
    key = layout.gate_log_key(graph.tenant)
    if getattr(graph, "gate_log_ready", False):  # TenantGraph.delete clears it
        return key
    ready = layout.gate_log_ready_key(graph.tenant)
    # The log is in the graph's server; the ledger may be on a server of its own (gate_state).
    if not graph.conn.exists(ready) or not gate_ledger.seeded(graph.conn, graph.tenant):
        with graph.exclusive(purpose="gate-log"):
            if not graph.conn.exists(ready):
                _make_log(graph, key)
                graph.conn.set(ready, 1)
            if not gate_ledger.seeded(graph.conn, graph.tenant):
                # The aggregate is kept in the gate's ledger: it starts with what the log
                # allowed before the ledger existed (once: ``seed`` sets its mark).
                gate_ledger.seed(graph.conn, graph.tenant, _log_rows(lambda: query(
                    graph.conn, key, q.GATE_ALLOWED, read_only=True)))
    graph.gate_log_ready = True
    return key


def _log_rows(read) -> list[list]:
    """The rows of a read of the gate log; none if the log is gone (its tenant's graph was
    deleted by another process since this one made it ready)."""
    try:
        return read().rows
    except CypherError as exc:
        if "empty key" in str(exc):
            return []
        raise


def _make_log(graph: TenantGraph, key: str) -> None:
    # Indexes first, waited for: an aggregate read racing an index under construction could
    # miss a decision. Made again after a crash half-way, or after a graph object that had
    # made it ready recorded into a log deleted since: what the log holds is kept, the
    # indexes it has are kept, and the copy is by each decision's id (MERGE).
    indexed: set[str] = set()
    if key.encode() in graph.conn.execute_command("GRAPH.LIST"):
        indexed = {p for _, props in query(
            graph.conn, key, "CALL db.indexes() YIELD label, properties RETURN label, "
            "properties", read_only=True).rows for p in props}
    if missing := tuple(p for p in q.LOG_INDEXED if p not in indexed):
        query(graph.conn, key, q.create_index("Gate", missing))
    deadline = time.monotonic() + 30
    while any(status != "OPERATIONAL" for _, status in query(
            graph.conn, key, "CALL db.indexes() YIELD label, status RETURN label, status",
            read_only=True).rows):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the indexes of {key} did not become operational")
        time.sleep(0.005)
    if graph.exists():
        kept = [r[0] for r in graph.rows(q.GATE_KEPT)]
        for i in range(0, len(kept), 1000):
            query(graph.conn, key, q.GATE_COPY, {"rows": kept[i:i + 1000]})


def _allowed(rows, itself: str | None = None) -> tuple[float, float]:
    """What was already allowed to the same account and to the same payee
    (``rule.already_allowed``), from ``(by, execution, amount)`` rows."""
    return rule.already_allowed((rule.Allowed(by, execution, amount)
                                 for by, execution, amount in rows), itself)


def record(graph: TenantGraph, call: GateCall, d: GateDecision, name: str | None = None,
           trace: str | None = None) -> GateDecision:
    """Keep the decision in the gate's ledger (``rescind.graph.gate_ledger``), from where it is
    copied into the gate log (``copy_log``): the log, the payment's history and the next
    call's aggregate read it. Returns the decision as kept: an allowed one judged on an
    aggregate that moved since (another payment to the same account or payee allowed
    meanwhile) is judged again on the aggregate as it is now, and that is kept, in one script
    with the aggregate's check, so that two payments never both pass under the limit."""
    judged = _judged(d)
    agg, policy = judged if judged is not None else (None, None)
    log_of(graph)  # the ledger holds what the log held before it, from its first use
    record_id = uuid.uuid4().hex
    at = call.at if call.at is not None else to_micros(datetime.now(UTC))
    # Members asked this long before a decision are dropped from its sets: twice the window,
    # and never less than a year (a process with a longer window than this one's).
    keep_us = max(2 * (policy or GatePolicy()).window_us(), 366 * 86_400_000_000)
    while True:
        props = {"id": record_id, "action": call.action, "name": name or call.action, "at": at,
                 "amount": d.amount, "currency": d.currency, "base_amount": d.base_amount,
                 "account": d.account, "account_key": rule.account_key(d.account),
                 "payee": d.payee, "payee_key": rule.payee_key(d.payee), "allowed": d.allowed,
                 "reason": d.reason, "fragility": d.fragility, "domains": list(d.domains),
                 "would_fall": list(d.would_fall), "execution": d.execution or call.action,
                 "expired": is_expired(d), "aggregate": d.aggregate, "trace": trace}
        moved = gate_ledger.record(
            graph.conn, graph.tenant, record_id, props, d.allowed, props["execution"],
            d.base_amount if d.base_amount is not None else d.amount, props["account_key"],
            props["payee_key"], agg, keep_us)
        if moved is None:
            break
        agg, d = moved, _judge_again(d, moved, policy or GatePolicy(), call.amount_free)
    outcome = "allowed" if d.allowed else EXPIRED if is_expired(d) else "blocked"
    gate_decisions.add(1, {"tenant": graph.tenant, "decision": outcome})
    return d


def _judge_again(d: GateDecision, agg: gate_ledger.Aggregate, p: GatePolicy,
                 amount_free: bool) -> GateDecision:
    """``d`` (allowed) judged again on the aggregate ``agg``, all else as it was."""
    again = rule.decide(d.action, d.amount, d.currency, d.fragility, d.domains, p,
                        _allowed(agg.rows, d.execution), amount_free)
    return replace(again, would_fall=d.would_fall, amount=d.amount, currency=d.currency,
                   account=d.account, payee=d.payee, execution=d.execution)


def copy_log(graph: TenantGraph, limit: int = 500) -> int:
    """Copy the decisions the gate's ledger holds, not yet in the gate log, into it (by each
    decision's id: one copied twice is there once); how many were copied. The gate worker
    does it after its answer; every read of the log does it first, so that the log is read
    whole even if the process that recorded a decision died before copying it."""
    copied = 0
    while rows := gate_ledger.pending(graph.conn, graph.tenant, limit):
        if not graph.conn.exists(layout.gate_log_ready_key(graph.tenant)):
            graph.gate_log_ready = False  # deleted by another process since: made again
        query(graph.conn, log_of(graph), q.GATE_COPY, {"rows": rows})
        gate_ledger.copied(graph.conn, graph.tenant, [r["id"] for r in rows])
        copied += len(rows)
        if len(rows) < limit:
            break
    return copied


class LogCopier:
    """Copies what the gate's ledger holds into the gate log (``copy_log``), in a thread of
    its own, after being told (``wake``) which tenants' decisions to copy: off the answer's
    path, batched when answers come faster than the copies. The thread ends when idle and
    starts again on the next ``wake``. ``graph_of`` gives a tenant's graph."""

    IDLE_S = 5.0  # the thread ends after this long with nothing to copy
    RETRY_S = 1.0  # a copy that failed is tried again after this long

    def __init__(self, graph_of) -> None:
        self.graph_of = graph_of
        self.lock = threading.Lock()
        self.tenants: set[str] = set()
        self.event = threading.Event()
        self.thread: threading.Thread | None = None
        self.copying = False

    def wake(self, tenant: str) -> None:
        with self.lock:
            self.tenants.add(tenant)
            self.event.set()
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="gate-log-copier",
                                               daemon=True)
                self.thread.start()

    def _run(self) -> None:
        while True:
            if not self.event.wait(self.IDLE_S):
                with self.lock:
                    if not self.event.is_set():
                        self.thread = None
                        return
            with self.lock:
                self.event.clear()
                todo, self.tenants, self.copying = self.tenants, set(), True
            for tenant in todo:
                try:
                    copy_log(self.graph_of(tenant))
                except Exception:  # kept in the ledger; the next wake (or a read) copies it
                    log_failure(log, f"{tenant}: gate decisions not copied into the log yet")
                    with self.lock:
                        self.tenants.add(tenant)
                    time.sleep(self.RETRY_S)
                    self.event.set()
            with self.lock:
                self.copying = False

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until nothing is left to copy (tests, the benchmark's end)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                idle = not self.tenants and not self.event.is_set() and not self.copying
            if idle:
                return True
            time.sleep(0.01)
        return False


def evidence_fragility(graph: TenantGraph, target: str, account: str | None,
                       p: GatePolicy = GatePolicy()
                       ) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """How many trust domains that vouch for ``account`` would have to fall to fake
    ``target``, one smallest set of them, and every domain that counts (see
    ``rescind.core.evidence``). With no account named, every trust domain its cone draws on
    counts, but a user's or an agent's word never does."""
    read = ConeRead(graph, [target], [(q.ACTIVE_RETRACTIONS, None)])
    c = read.finish()
    if target not in c.nodes:
        raise UnknownAction(f"unknown memory {target!r}")
    return _evidence(c, c.of(target), target, account, graph.rules_from(read.rows[0]), p)


def _evidence(c: Cone, nodes: dict[str, Node], target: str, account: str | None,
              rules: Rules, p: GatePolicy) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """``evidence_fragility`` over ``nodes`` (``target``'s cone), with the sources and texts
    of the cone ``c`` read around it."""
    sources = {g.source: c.sources[g.source] for n in nodes.values() for g in n.groundings
               if g.source in c.sources}
    if not account:  # no account named: every domain its cone draws on counts (as before)
        domain_of = trust_domains(sources)
        frag, witness = weakest(target, nodes, domain_of, rules)
        return frag, tuple(witness), tuple(cone_domains(nodes, domain_of, rules))
    e = account_evidence(nodes, c.texts, account, {s: d for s, (d, _) in sources.items()},
                         {s: k for s, (_, k) in sources.items()}, rules, p.trusted_kinds)
    frag, witness = evidence_weakest(target, e, rules)
    return frag, tuple(witness), e.domains


_LOG_FIELDS = ("at", "action", "name", "amount", "currency", "base_amount", "account", "payee",
               "allowed", "reason", "fragility", "domains", "would_fall", "aggregate", "trace",
               "execution", "expired")


def last_decisions(graph: TenantGraph, actions: list[str]) -> dict[str, dict]:
    """The gate's last decision about each of ``actions`` that it was asked about: whether it
    allowed it, why, when (ISO), and whether it was the release of a stored proposal (the
    proposing tool ran: a scheduled payment stays scheduled whatever its release was told)."""
    if not actions:
        return {}
    copy_log(graph)
    return {a: {"allowed": bool(allowed), "reason": reason, "at": from_micros(at).isoformat(),
                "release": "#" in (execution or "")}
            for a, allowed, reason, at, execution in _log_rows(lambda: query(
                graph.conn, log_of(graph), q.GATE_LAST, {"ids": list(actions)}, read_only=True))}


def never_ran(decision: dict | None) -> bool:
    """Whether the gate's last decision (``last_decisions``) refused the call itself: the tool
    never ran, so there is nothing to hold. A refused release is not that: the proposing tool
    ran (a payment scheduled at the bank), and what is OUT of it must be held."""
    return decision is not None and not decision["allowed"] and not decision["release"]


def decisions_log(graph: TenantGraph, action: str | None = None, limit: int = 100) -> list[dict]:
    """The gate's decisions, newest first (of one action, by id, when given)."""
    copy_log(graph)
    rows = _log_rows(lambda: query(graph.conn, log_of(graph), q.GATE_LOG,
                                   {"action": action, "limit": limit}, read_only=True))
    return [{**dict(zip(_LOG_FIELDS, r, strict=True)), "at": from_micros(r[0]).isoformat()}
            for r in rows]
