"""`rescind demo`: the reference agents' week through Rescind's real event path, told as a story.

The agents in ``agents/`` know nothing of Rescind. Here they are wrapped from outside: one
interception config names their source and action tools, one recorder (stamped by the world's
clock) publishes to the streams, and real FastStream workers write the graph and answer the
gate. On Thursday security declares the Northwind portal compromised for the attack window.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from langchain_core.tools import StructuredTool

from rescind.contract import layout
from rescind.engine.gate import UnknownAction, weakest_of
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.middleware import InterceptConfig, Recorder, instrument
from rescind.middleware.config import ActionTool, Receipt, SourceTool
from rescind.middleware.gate import GateClient, GateRefused
from rescind.operator import audit_text
from rescind.operator import decisions as security
from rescind.operator.audit import Actor, AuditLog
from rescind.operator.recalls import recall_list
from rescind.scenario.via_streams import wait_idle
from rescind.transport import connection
from rescind.transport import streams as st
from rescind.workers.app import WorkerSettings, WorkerThread

COMPROMISED = "portal:northwind"
ATTACK = ("2026-11-16T08:00:00Z", "2026-11-18T12:00:00Z")  # when the page showed the attacker's
# What the fictional bank's answer says it did: "Paid $34,500.00 to account … for INV-1002
# (PAY-0002) at 2026-11-19T09:00:00Z." A recall asks for that back.
BANK_RECEIPT = Receipt(amount=r"^Paid \$([0-9,]+(?:\.[0-9]+)?) ", account=r" to account (.+?) for ",
                       reference=r"\((PAY-[0-9]+)\)", value_date=r" at (\S+?)\.?$")
REASON = "Northwind's supplier portal was taken over: the bank details on it were the attacker's"
# Who decides in the story, as the audit log names them (via: demo).
SECURITY = Actor("security", "security", "", "demo")
DEMO = Actor("demo", "admin", "", "demo")


def intercept_config(tenant: str, url: str) -> InterceptConfig:
    """Which of the agents' tools are sources and which are actions (kept outside their code).

    Invoices are not a source here: the demo asks where the money goes, not whether a bill is
    genuine (that is the three-way match's job), so a plan rests on the notes about the payee.
    The agents' tasks come from the desk's own schedule, not from a person: user messages are
    not a source here (``users=None``).
    """
    payment = {"id": "payment:{invoice}", "amount": "amount", "payee": "vendor",
               "account": "account", "default_currency": "USD", "receipt": BANK_RECEIPT}
    return InterceptConfig(
        tenant=tenant, url=url, users=None,
        sources={
            # One domain per vendor, as the desk's schedule (not the model) names the vendor
            # each run is about: its configurable ``vendor``, vouched for here.
            "read_vendor_portal": SourceTool(source="portal:{vendor}", kind="vendor_portal",
                                             domain="portal:{vendor}", vouched=["vendor"]),
            "read_contract": SourceTool(source="contract:{vendor}", kind="signed_contract",
                                        domain="signed-contracts"),
        },
        actions={
            "pay_invoice": ActionTool(**payment),
            "schedule_payment": ActionTool(**payment, stage="propose"),
            "release_payment": ActionTool(id="payment:{invoice}", stage="execute",
                                          receipt=BANK_RECEIPT),
        })


@dataclass
class GateLog:
    """Every question the agents' gate client asked, with the answer."""

    decisions: list[dict] = field(default_factory=list)


class LoggedGate(GateClient):
    def __init__(self, url: str, tenant: str, log: GateLog, clock: Callable[[], datetime]):
        super().__init__(url, tenant)
        self.log, self.clock = log, clock

    def ask(self, action: str, premises: list[str], amount: float | None, payee: str | None,
            *args, **kwargs):
        """GateClient.ask, logged: every argument passes through as given."""
        entry = {"action": action, "at": self.clock().isoformat(), "amount": amount}
        try:
            answer = super().ask(action, premises, amount, payee, *args, **kwargs)
        except GateRefused as exc:
            self.log.decisions.append({**entry, "allowed": False, "reason": str(exc)})
            raise
        self.log.decisions.append({**entry, "allowed": True, "reason": answer.reason,
                                   "fragility": answer.fragility})
        return answer


def fragility_tool(graph: TenantGraph, settle: Callable[[], None]):
    """A tool handed to the payments agent from outside: how fragile is the plan to pay this?"""

    def check_fragility(invoice: str) -> str:
        """How many independent trust domains an attacker must control to fake the plan to pay
        this invoice (payments above $10,000 need at least 2)."""
        settle()
        plan = graph.latest_plan_naming(invoice)
        if plan is None:
            return f"No plan to pay {invoice} is recorded."
        try:
            frag, witness, domains = weakest_of(graph, plan)
        except UnknownAction:
            return f"No plan to pay {invoice} is recorded."
        return (f"The plan to pay {invoice} has fragility {frag}: compromising "
                f"{' + '.join(witness) or 'nothing'} would fake it (it draws on "
                f"{', '.join(domains)}).")

    return StructuredTool.from_function(check_fragility)


def run(url: str, tenant: str = "demo", mode: str | None = None, recording: Path | None = None,
        model: Any = None, on_event: Callable[[str, Any], None] | None = None) -> dict:
    """Play the week wrapped by Rescind; a machine-readable summary of what happened."""
    from rescind.agents.llm import chat_model
    from rescind.agents.week import run_week
    from rescind.agents.world import World

    emit = on_event or (lambda kind, data: None)
    # A refusal raised by our callback is part of the story; LangChain would log it as a warning.
    logging.getLogger("langchain_core.callbacks.manager").setLevel(logging.ERROR)
    model = model or chat_model(mode, recording)  # a bad mode or recording: nothing touched yet
    conn = connection.connect(url)
    graph = TenantGraph(connect(url), tenant)
    graph.delete()  # the demo tenant starts afresh, and so do its agents' status caches
    st.forget_status(conn, tenant)
    audit = AuditLog(conn)
    audit.audited(tenant, DEMO, "tenant.create", tenant,  # its agents' events apply only then
                  lambda: tenants.create(graph.server, tenant, by=DEMO.who),
                  lambda created: {"created": created, "message": "the demo week's tenant, "
                                   "started afresh"})
    st.ensure_groups(conn)
    world = World.load()
    config = intercept_config(tenant, url)
    gates = GateLog()
    recorder = Recorder(config, clock=lambda: world.now,
                        gate=LoggedGate(url, tenant, gates, lambda: world.now))
    stream = recorder.publisher.stream_of(tenant)

    def settle() -> None:
        recorder.publisher.flush(30)
        wait_idle(conn, stream, only=(layout.WRITER_GROUP,))

    decisions: dict[str, Any] = {}

    def on_step(name: str, when: datetime) -> None:
        settle()
        emit("step", {"name": name, "when": when})
        if name != "security/thursday":
            return
        start, end = (security.parse_time(t, "window") for t in ATTACK)
        # Security's decisions are audited as the API's and the shell's are (via: demo).
        preview = audit.audited(tenant, SECURITY, "retraction.preview", COMPROMISED,
                                lambda: security.compromise(graph, COMPROMISED, start, end,
                                                            REASON, SECURITY.who, now=world.now),
                                audit_text.radius)
        emit("preview", preview)
        done = audit.audited(tenant, SECURITY, "retraction.commit", COMPROMISED,
                             lambda: security.compromise(
                                 graph, COMPROMISED, start, end, REASON, SECURITY.who,
                                 commit=True, rid="r-northwind-portal", rev=preview["rev"],
                                 now=world.now), audit_text.radius)
        for action in done["to_hold"]:  # treasury holds what Rescind holds
            invoice = (action.get("name") or "").removeprefix("payment:")
            if world.bank.payment_for(invoice) is not None:
                world.bank.hold(invoice, f"held by Rescind: {REASON}")
        decisions["compromise"] = {**done, "previewed_at_rev": preview["rev"]}
        _wait_for_status(recorder, done)
        emit("committed", done)

    settings = WorkerSettings(url=url, worker_id=f"demo-{tenant}")
    with WorkerThread(settings, ("writer", "retraction", "gate")):
        tools = {"payments_agent": [fragility_tool(graph, settle)]}
        week = run_week(model, world=world, extra_tools=tools, on_step=on_step,
                        wrap=lambda g: instrument(g, config, recorder=recorder))
        settle()
    recorder.close()
    return summary(graph, week, gates, decisions.get("compromise"))


def _wait_for_status(recorder: Recorder, done: dict, timeout: float = 10.0) -> None:
    """Until the agents' status cache has heard of everything the commit took OUT."""
    out = {i["id"] for k in ("observations", "beliefs", "plans", "answers", "executed_actions",
                             "pending_actions") for i in done[k]}
    deadline = time.monotonic() + timeout
    while not out <= recorder.status.out and time.monotonic() < deadline:
        recorder.status.refresh(block_ms=100)


def summary(graph: TenantGraph, week: Any, gates: GateLog, compromise: dict | None) -> dict:
    kinds: dict[str, dict[str, int]] = {}
    for kind, status, n in graph.memory_counts():
        kinds.setdefault(kind, {"IN": 0, "OUT": 0})[status] = n
    actions = graph.actions()
    held = sorted((a.get("names") or [a["id"]])[0] for a in actions
                  if not a.get("executed") and a.get("status") == "OUT")
    return {
        "tenant": graph.tenant,
        "memories": kinds,
        "out": {k: v["OUT"] for k, v in sorted(kinds.items())},
        "compromise": None if compromise is None else {
            "source": COMPROMISED, "window": list(ATTACK), "reason": REASON, **compromise},
        "held": held,
        "recalls": [{k: v for k, v in r.to_dict().items() if k != "action"}
                    for r in recall_list(graph)],
        "gates": gates.decisions,
        "bank": [p.as_dict() for p in week.world.bank.payments],
        "steps": [{"name": s.step.name, "agent": s.step.agent, "when": s.step.when.isoformat(),
                   "outcome": s.outcome, "error": s.error, "answer": s.answer,
                   "calls": [{"tool": n, "args": a} for n, a in s.tool_calls]}
                  for s in week.steps],
        "notes": week.notes(),
    }
