"""A tenant's graph written directly (sources, observations, proposals) and the engine's own
gate asked about it: the gate's rules on a real FalkorDB server, without an agent."""

from __future__ import annotations

import itertools
import uuid

from rescind.contract.events import action_id, memory_id
from rescind.core.shapes import GateDecision, Mutation
from rescind.engine.gate import GateCall, GatePolicy, judge, record
from rescind.engine.writes import Write
from rescind.engine.writes import record as write
from rescind.graph.store import TenantGraph, connect

IBAN = "GB33 BUKB 2020 1555 5555 55"
ATTACKER = "ZZ97 QKRB 0000 9034 5521 66"


class Book:
    def __init__(self, url: str, tenant: str, policy: GatePolicy = GatePolicy()) -> None:
        self.g = TenantGraph(connect(url), tenant)
        self.g.ensure_schema()
        self.tenant, self.policy = tenant, policy
        self.clock = itertools.count(1_000_000, 1_000_000)  # µs, one second apart

    def source(self, sid: str, kind: str, domain: str | None = None) -> None:
        self.g.apply(Mutation(op="source", sources=[{"id": sid, "kind": kind, "name": sid,
                                                     "domain": domain or sid}]),
                     self.g.revision())

    def observe(self, source: str, text: str) -> str:
        oid = memory_id(self.tenant, "observation", text)
        write(self.g, [Write(uuid.uuid4().hex, oid, "observation", text, next(self.clock),
                             source=source)])
        return oid

    def propose(self, name: str, *alternatives: tuple[str, ...], amount: float | None = None,
                account: str | None = None, payee: str | None = None) -> str:
        """A proposal (again, under the same name: a new one, with a new sequence number)."""
        mid, at = action_id(self.tenant, name), next(self.clock)
        extra = {"amount": amount, "currency": None, "payee": payee, "account": account,
                 "executed": False, "executed_at": None, "seq": at}
        write(self.g, [Write(uuid.uuid4().hex, mid, "action", f"pay {name}", at, name=name,
                             premises=tuple(j), rule="matched", extra=extra)
                       for j in alternatives])
        return mid

    def ask(self, name: str, premises: tuple[str, ...] | None = None, amount=None,
            account: str | None = None, payee: str | None = None, amount_free: bool = False,
            alternatives: tuple[tuple[str, ...], ...] | None = None,
            ask: str | None = None) -> GateDecision:
        """The gate asked, as the worker asks it, and the decision kept."""
        call = GateCall(action_id(self.tenant, name), premises, amount, account, payee,
                        next(self.clock), None, amount_free, ask or uuid.uuid4().hex,
                        alternatives)
        d = judge(self.g, call, self.policy)
        record(self.g, call, d, name)
        return d
