"""`rescind replay`: apply a scenario file to a fresh tenant and report, in the scenario's names."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

from rescind.contract.errors import RescindError
from rescind.contract.events import action_id, memory_id, to_micros
from rescind.contract.layout import check_tenant
from rescind.core.shapes import GateDecision, Mutation
from rescind.engine import gate as gate_mod
from rescind.engine import retraction as ret
from rescind.engine.writes import UnknownPremise, Write, execute, record
from rescind.graph import tenants
from rescind.graph.queries import versions as vq
from rescind.graph.store import TenantGraph, connect
from rescind.operator.recalls import approve, recall_list
from rescind.scenario.format import (
    ActLine,
    ApproveLine,
    CorrectLine,
    DeleteLine,
    ExecuteLine,
    GateArgs,
    GateLine,
    ObserveLine,
    ReinstateLine,
    RetractLine,
    ScenarioError,
    SourceLine,
    Step,
    UpdateLine,
    WithdrawLine,
    WriteLine,
    parse,
)

# A memory id as the graph makes them (rescind.contract.events): kind prefix, 20 hex digits.
GRAPH_ID = re.compile(r"\b[a-z]{3}-[0-9a-f]{20}\b")


def fresh_tenant() -> str:
    return f"replay-{secrets.token_hex(6)}"


@dataclass
class Replay:
    """The state of one replay: the scenario's names for what it put in the graph."""

    graph: TenantGraph
    mem: dict[str, str] = field(default_factory=dict)  # scenario memory id -> graph id
    kinds: dict[str, str] = field(default_factory=dict)  # write/update id -> its memory's kind
    actions: list[str] = field(default_factory=list)  # scenario action ids, in act order
    gates: list[dict] = field(default_factory=list)
    clock: int = 0
    pending: list[Write] = field(default_factory=list)
    pending_lines: list[int] = field(default_factory=list)
    policy: gate_mod.GatePolicy = field(default_factory=gate_mod.GatePolicy)  # RESCIND_GATE_*

    def gate(self, line: GateLine, at: int) -> GateDecision:
        """The gate the agents' calls go through, at the scenario's time; the decision is
        recorded like theirs, so that later gates count it in their aggregate."""
        a = line.args or GateArgs()
        call = gate_mod.GateCall(self.mem[line.action], None, a.amount, a.account, a.payee, at,
                                 a.currency)
        d = gate_mod.judge(self.graph, call, self.policy)
        return gate_mod.record(self.graph, call, d, line.action)

    def step(self, step: Step) -> None:
        """Apply one line; an error the engine finds while applying names the line."""
        try:
            self._apply(step)
        except ScenarioError:
            raise
        except RescindError as exc:  # the same refusal, with the line it came from
            raise ScenarioError([(step.line, self.named(str(exc)))]) from exc

    def named(self, message: str) -> str:
        """``message`` with the graph's ids (``act-8af3…``) replaced by the scenario's own
        names for them: the first line that defined each."""
        names: dict[str, str] = {}
        for name, mid in self.mem.items():
            names.setdefault(mid, name)
        return GRAPH_ID.sub(lambda m: names.get(m.group(0), m.group(0)), message)

    def _apply(self, step: Step) -> None:
        op = step.op
        at = getattr(op, "at", None)
        now = to_micros(at) if at is not None else self.clock
        self.clock = max(self.clock, now)
        if isinstance(op, (ObserveLine, WriteLine, UpdateLine, DeleteLine, ActLine)):
            self.pending.append(self._write(op, step.line, now))
            self.pending_lines.append(step.line)
            return
        self.flush()
        g = self.graph
        if isinstance(op, SourceLine):
            g.apply(Mutation(op="source", sources=[{
                "id": op.id, "kind": op.kind, "name": op.name or op.id,
                "domain": op.domain or op.id}]), g.revision())  # a fresh tenant: nothing races
        elif isinstance(op, ExecuteLine):
            execute(g, self.mem[op.action], now)
        elif isinstance(op, RetractLine):
            ret.run(g, ret.Retract(op.id, op.source, _us(op.from_), _us(op.to), op.reason, op.by), now)
        elif isinstance(op, WithdrawLine):
            ret.run(g, ret.Withdraw(op.id, self.mem[op.memory], op.reason, op.by), now)
        elif isinstance(op, CorrectLine):
            ret.run(g, ret.Correct(op.id, self.mem[op.memory], op.text, op.by,
                                   reason="correction", name=op.id), now)
            self.mem[op.id] = g.retraction(op.id)["new_memory"]
        elif isinstance(op, ReinstateLine):
            ret.run(g, ret.Reinstate(op.retraction, by="replay"), now)  # as via streams
        elif isinstance(op, GateLine):
            self.gates.append(gate_entry(op.action, self.gate(op, now), step.line))
        elif isinstance(op, ApproveLine):
            approve(g, self.mem[op.action], op.by, now)

    def _write(self, op, line: int, now: int) -> Write:
        tenant = self.graph.tenant
        if isinstance(op, ObserveLine):
            mid = memory_id(tenant, "observation", op.text)
            w = Write(op.id, mid, "observation", op.text, now, name=op.id, source=op.source)
        elif isinstance(op, WriteLine):
            mid = memory_id(tenant, op.kind, op.text)
            w = Write(op.id, mid, op.kind, op.text, now, name=op.id,
                      premises=tuple(self.mem[p] for p in op.premises), agent=op.agent,
                      rule="scenario")
            self.kinds[op.id] = op.kind
        elif isinstance(op, UpdateLine):  # a new version: the old one is no longer current
            kind = self.kinds[op.id] = self.kinds[op.memory]
            mid = memory_id(tenant, kind, op.text)
            w = Write(op.id, mid, kind, op.text, now, name=op.id,
                      premises=tuple(self.mem[p] for p in op.premises), agent=op.agent,
                      rule="scenario", supersedes=self.mem[op.memory])
        elif isinstance(op, DeleteLine):  # defines no memory: the deleted one is not current
            return Write(op.id, self.mem[op.memory], self.kinds[op.memory], "", now,
                         agent=op.agent, deletes=True)
        else:
            mid = action_id(tenant, op.id)
            extra = {"amount": op.amount, "currency": op.currency, "payee": op.payee,
                     "account": op.account, "executed": op.executed,
                     "executed_at": now if op.executed else None, "seq": line}
            w = Write(op.id, mid, "action", op.text, now, name=op.id,
                      premises=tuple(self.mem[p] for p in op.premises), agent=op.agent,
                      rule="scenario", extra=extra)
            self.actions.append(op.id)
        self.mem[op.id] = mid
        return w

    def flush(self) -> None:
        if self.pending:
            batch, self.pending = self.pending, []
            lines, self.pending_lines = self.pending_lines, []
            try:
                record(self.graph, batch)
            except UnknownPremise as exc:  # the first line that names one, in its names
                line = next((n for w, n in zip(batch, lines, strict=True)
                             if set(w.premises) & set(exc.missing)), lines[0])
                raise ScenarioError([(line, self.named(str(exc)))]) from exc

    def report(self) -> dict:
        self.flush()
        g = self.graph
        statuses = g.statuses(set(self.mem.values()))
        back = {mid: name for name, mid in self.mem.items() if name in self.actions}
        facts = {a["id"]: a for a in g.actions_in([self.mem[a] for a in self.actions])}
        memories = {
            name: {"status": statuses[mid].status, "cause": statuses[mid].cause,
                   "hops": statuses[mid].hops}
            for name, mid in self.mem.items()
        }
        why = dict(g.rows(vq.NOT_CURRENT, {"ids": sorted(set(self.mem.values()))}))
        replaced = {name: why[mid] for name, mid in self.mem.items() if mid in why}
        held = [a for a in self.actions
                if not facts[self.mem[a]].get("executed") and statuses[self.mem[a]].status == "OUT"]
        recalls = [{"action": back[r.action], "amount": r.amount, "payee": r.payee,
                    "state": r.state, "draft": r.draft} for r in recall_list(g)]
        fragility = {a: gate_mod.fragility_of(g, self.mem[a])[0] for a in self.actions}
        return {"memories": memories, "held": held, "recalls": recalls, "gates": self.gates,
                "fragility": fragility, "replaced": replaced}


def gate_entry(action: str, d: GateDecision, line: int) -> dict:
    """A `gate` line's entry in the report."""
    return {"action": action, "allowed": d.allowed, "reason": d.reason,
            "fragility": d.fragility, "aggregate": d.aggregate, "line": line}


def _us(t) -> int | None:
    return to_micros(t) if t is not None else None


def replay_text(text: str, url: str, tenant: str | None = None,
                on_progress: Callable[[int, int], None] | None = None,
                gate: gate_mod.GatePolicy | None = None) -> dict:
    """Validate ``text`` whole, apply it to a fresh tenant, and return the report;
    ``on_progress(done, total)`` after each line; ``gate`` lines judge with ``gate`` (the
    workers' policy, RESCIND_GATE_*, in the CLI).

    On any error nothing is left behind: validation fails before anything is written, and a
    failure while applying removes the tenant's graph (and the tenant, if the replay created
    it: a tenant exists only when created, and a replay creates its own).
    """
    steps = parse(text)
    graph, created = start(connect(url), tenant)
    state = Replay(graph, policy=gate or gate_mod.GatePolicy())
    try:
        for i, step in enumerate(steps, 1):
            state.step(step)
            if on_progress:
                on_progress(i, len(steps))
        return state.report()
    except BaseException:
        undo(graph, created)
        raise


def start(conn, tenant: str | None) -> tuple[TenantGraph, bool]:
    """The graph a replay fills: a new tenant (``tenants.create``), or one created before
    whose graph is still empty; and whether this replay created it. ScenarioError when the
    tenant's graph holds anything already."""
    graph = TenantGraph(conn, check_tenant(tenant or fresh_tenant()))
    if graph.exists():
        raise ScenarioError([(0, f"tenant {graph.tenant!r} already has a graph; replay needs a "
                                 "fresh tenant")])
    return graph, tenants.create(conn, graph.tenant, by="replay", schema=False)


def undo(graph: TenantGraph, created: bool) -> None:
    """A replay that failed leaves nothing: its graph, and the tenant if it created it."""
    if created:
        tenants.drop(graph.server, graph.tenant)
    else:
        graph.delete()
