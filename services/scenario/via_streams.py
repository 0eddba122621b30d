"""`rescind replay --via-streams`: the same scenario, sent through the real event path.

Every line becomes an event published by the middleware's publisher to the Redis streams, where
the FastStream workers apply it. Between a run of writes and a decision (retract, withdraw,
correct, reinstate, execute, approve) and before every gate, the replay waits until both
consumer groups have nothing left on the tenant's partition, so each decision sees exactly the
lines before it, as in a direct replay. The report is then read from the graph as usual.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections.abc import Callable
from datetime import datetime

import redis

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import Unavailable
from rescind.contract.events import action_id, memory_id
from rescind.engine.gate import GatePolicy
from rescind.graph.store import TenantGraph, connect
from rescind.middleware.publisher import Publisher
from rescind.scenario import format as sc
from rescind.scenario.replay import Replay, gate_entry, start, undo
from rescind.transport import streams as st
from rescind.workers.app import WorkerSettings, WorkerThread


class Quiescence(Unavailable):
    """The workers did not finish the tenant's events in time."""


def wait_idle(conn: redis.Redis, stream: str, timeout: float = 60.0,
              only: tuple[str, ...] | None = None) -> None:
    """Until every group on ``stream`` (or those in ``only``) has read and acknowledged all."""
    deadline = time.monotonic() + timeout
    while True:
        groups = [g for g in conn.xinfo_groups(stream)
                  if only is None or g["name"].decode() in only]
        if groups and all(g["pending"] == 0 and (g.get("lag") or 0) == 0 for g in groups):
            return
        if time.monotonic() > deadline:
            raise Quiescence(f"workers did not drain {stream} in {timeout}s: {groups}")
        time.sleep(0.005)


class StreamReplay:
    def __init__(self, graph: TenantGraph, publisher: Publisher, conn: redis.Redis,
                 gate: GatePolicy | None = None) -> None:
        self.graph, self.publisher, self.conn = graph, publisher, conn
        # names, clock, gate policy and report, shared with the direct replay
        self.state = Replay(graph, policy=gate or GatePolicy())
        self.stream = publisher.stream_of(graph.tenant)
        self.dead_from = "-"
        last = conn.xrevrange(layout.DEAD, count=1)
        if last:
            self.dead_from = "(" + last[0][0].decode()

    def settle(self) -> None:
        if not self.publisher.flush(30):
            raise Quiescence("the publisher could not send its events")
        wait_idle(self.conn, self.stream)

    def step(self, step: sc.Step) -> None:
        op, s = step.op, self.state
        at = getattr(op, "at", None)
        now = ev.to_micros(at) if at is not None else s.clock
        s.clock = max(s.clock, now)
        when = ev.from_micros(now)
        eid = f"line-{step.line}"
        if isinstance(op, (sc.ObserveLine, sc.WriteLine, sc.UpdateLine, sc.DeleteLine,
                           sc.ActLine, sc.SourceLine)):
            self.publisher.publish(self._write_event(op, eid, when, step.line))
            return
        self.settle()
        if isinstance(op, sc.GateLine):
            s.gates.append(gate_entry(op.action, s.gate(op, now), step.line))
            return
        event = self._control_event(op, eid, when)
        self.publisher.publish(event)
        self.settle()
        why = self._dead_reason(eid)
        if why is not None:
            raise sc.ScenarioError([(step.line, s.named(why))])
        if isinstance(op, sc.CorrectLine):
            s.mem[op.id] = self.graph.retraction(op.id)["new_memory"]

    def _write_event(self, op, eid: str, when: datetime, line: int) -> ev.Event:
        t, s = self.graph.tenant, self.state
        base = {"event_id": eid, "tenant": t, "at": when}
        if isinstance(op, sc.SourceLine):
            return ev.SourceDeclared(**base, source=op.id, source_kind=op.kind, name=op.name,
                                     source_domain=op.domain)
        if isinstance(op, sc.ObserveLine):
            s.mem[op.id] = memory_id(t, "observation", op.text)
            return ev.ObservationRecorded(**base, source=op.source, text=op.text, name=op.id)
        if isinstance(op, sc.DeleteLine):  # a store delete, keyed by the scenario's name
            return ev.MemoryDeleted(**base, memory=s.mem[op.memory], key=op.memory,
                                    agent=op.agent)
        premises = [s.mem[p] for p in op.premises]
        if isinstance(op, sc.WriteLine):
            s.mem[op.id], s.kinds[op.id] = memory_id(t, op.kind, op.text), op.kind
            return ev.MemoryWritten(**base, kind=op.kind, text=op.text, premises=premises,
                                    agent=op.agent, name=op.id)
        if isinstance(op, sc.UpdateLine):
            kind = s.kinds[op.id] = s.kinds[op.memory]
            s.mem[op.id] = memory_id(t, kind, op.text)
            return ev.MemoryWritten(**base, kind=kind, text=op.text, premises=premises,
                                    agent=op.agent, name=op.id, supersedes=s.mem[op.memory])
        s.mem[op.id] = action_id(t, op.id)
        s.actions.append(op.id)
        return ev.ActionProposed(**base, action=op.id, text=op.text, premises=premises,
                                 agent=op.agent, amount=op.amount, currency=op.currency,
                                 payee=op.payee, account=op.account, executed=op.executed,
                                 seq=line)

    def _control_event(self, op, eid: str, when: datetime) -> ev.Event:
        base = {"event_id": eid, "tenant": self.graph.tenant, "at": when}
        mem = self.state.mem
        if isinstance(op, sc.ExecuteLine):
            return ev.ActionExecuted(**base, action=op.action)
        if isinstance(op, sc.RetractLine):
            return ev.SourceCompromised(**base, retraction=op.id, source=op.source,
                                        start=op.from_, end=op.to, reason=op.reason, by=op.by)
        if isinstance(op, sc.WithdrawLine):
            return ev.MemoryWithdrawn(**base, retraction=op.id, memory=mem[op.memory],
                                      reason=op.reason, by=op.by)
        if isinstance(op, sc.CorrectLine):
            return ev.MemoryCorrected(**base, retraction=op.id, memory=mem[op.memory],
                                      text=op.text, by=op.by, name=op.id)
        if isinstance(op, sc.ReinstateLine):
            return ev.RetractionReinstated(**base, retraction=op.retraction, by="replay")
        assert isinstance(op, sc.ApproveLine)
        return ev.RecallApproved(**base, action=op.action, by=op.by)

    def _dead_reason(self, event_id: str) -> str | None:
        for entry_id, fields in self.conn.xrange(layout.DEAD, min=self.dead_from):
            self.dead_from = "(" + entry_id.decode()
            body = fields.get(b"body", b"").decode()
            try:
                data = json.loads(body)
            except ValueError:
                continue
            if isinstance(data, dict) and data.get("event_id") == event_id \
                    and data.get("tenant") == self.graph.tenant:
                return fields[b"reason"].decode()
        return None


def replay_via_streams(text: str, url: str, tenant: str | None = None,
                       partitions: int = layout.PARTITIONS,
                       start_workers: bool = True,
                       on_progress: Callable[[int, int], None] | None = None,
                       gate: GatePolicy | None = None) -> dict:
    """Validate ``text`` whole, send it through streams and workers, and return the report.

    With ``start_workers`` the writer and retraction workers run in this process for the
    replay; otherwise workers already running on ``url`` (``rescind up``) do the work.
    """
    steps = sc.parse(text)
    conn = connect(url)
    graph, created = start(conn, tenant)  # created before its first event: the writer checks
    st.ensure_groups(conn, partitions)
    settings = WorkerSettings(url=url, worker_id=f"replay-{graph.tenant}", partitions=partitions,
                              gate=gate or GatePolicy())
    # A spool of its own: a replay regenerates its events, so a failed one leaves nothing for
    # the next publisher of the tenant to send.
    spool = tempfile.TemporaryDirectory(prefix="rescind-replay-spool-")
    publisher = Publisher(url, partitions=partitions, spool_dir=spool.name)
    workers = WorkerThread(settings, ("writer", "retraction")) if start_workers else None
    try:
        with workers or contextlib.nullcontext():
            run = StreamReplay(graph, publisher, conn, gate)
            for i, step in enumerate(steps, 1):
                run.step(step)
                if on_progress:
                    on_progress(i, len(steps))
            run.settle()
            return run.state.report()
    except BaseException:
        undo(graph, created)  # once this process's workers stopped: none writes after it
        raise
    finally:
        publisher.close()
        spool.cleanup()
