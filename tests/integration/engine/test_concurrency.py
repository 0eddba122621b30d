"""Writes racing retractions on one tenant stay linearised: afterwards no memory is IN whose
every justification has an OUT premise, and every status equals the independent reference."""

from __future__ import annotations

import json
import random
import threading
import time
from datetime import UTC, datetime, timedelta

from rescind.contract.events import memory_id, to_micros
from rescind.core.shapes import Mutation
from rescind.engine import retraction as ret
from rescind.engine.writes import Write, record
from rescind.graph.store import TenantGraph, connect
from tests.support.reference import run as reference

T0 = datetime(2026, 11, 1, tzinfo=UTC)
WRITERS, WRITES_EACH, SOURCES, OBSERVATIONS = 50, 32, 5, 20


def iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def test_fifty_writers_and_a_retraction_leave_no_stale_in(falkordb, tenant_name):
    """1,600 concurrent justified writes while retractions commit and are undone."""
    g = TenantGraph(connect(falkordb), tenant_name)
    lines = [{"op": "source", "id": f"s{i}", "kind": "portal", "domain": f"d{i}"}
             for i in range(SOURCES)]
    g.apply(Mutation(op="source", sources=[{"id": f"s{i}", "kind": "portal", "name": f"s{i}",
                                            "domain": f"d{i}"} for i in range(SOURCES)]),
            g.revision())
    known: list[tuple[str, str]] = []  # (scenario id, graph id), in order of completion
    lock = threading.Lock()
    for i in range(OBSERVATIONS):
        at = T0 + timedelta(hours=i)
        line = {"op": "observe", "id": f"o{i}", "source": f"s{i % SOURCES}",
                "text": f"fact {i}", "at": iso(at)}
        mid = memory_id(tenant_name, "observation", line["text"])
        record(g, [Write(line["id"], mid, "observation", line["text"], to_micros(at),
                         source=line["source"])])
        lines.append(line)
        known.append((line["id"], mid))

    def writer(j: int) -> None:
        mine = TenantGraph(connect(falkordb), tenant_name)
        r = random.Random(j)
        for k in range(WRITES_EACH):
            with lock:
                picks = r.sample(known, min(len(known), r.choice((1, 2))))
            text = f"note {r.randrange(400)}"  # restatements converge across threads
            sid = f"w{j}-{k}"
            at = T0 + timedelta(days=1, seconds=j * 100 + k)
            mid = memory_id(tenant_name, "belief", text)
            record(mine, [Write(sid, mid, "belief", text, to_micros(at),
                                premises=tuple(p for _, p in picks), agent=f"a{j}")])
            with lock:
                lines.append({"op": "write", "id": sid, "kind": "belief", "agent": f"a{j}",
                              "text": text, "premises": [s for s, _ in picks], "at": iso(at)})
                known.append((sid, mid))

    def security() -> None:
        mine = TenantGraph(connect(falkordb), tenant_name)
        ops = [ret.Retract("r0", "s0", None, to_micros(T0 + timedelta(hours=10))),
               ret.Retract("r1", "s1"), ret.Retract("r2", "s0", to_micros(T0 + timedelta(hours=5))),
               ret.Reinstate("r1"), ret.Retract("r3", "s3")]
        for op in ops:
            time.sleep(0.15)
            ret.run(mine, op)
            with lock:
                if isinstance(op, ret.Reinstate):
                    lines.append({"op": "reinstate", "retraction": op.retraction})
                else:
                    line = {"op": "retract", "id": op.id, "source": op.source,
                            "reason": "test", "by": "sec"}
                    if op.start is not None:
                        line["from"] = iso(T0 + timedelta(microseconds=op.start - to_micros(T0)))
                    if op.end is not None:
                        line["to"] = iso(T0 + timedelta(microseconds=op.end - to_micros(T0)))
                    lines.append(line)

    threads = [threading.Thread(target=writer, args=(j,)) for j in range(WRITERS)]
    threads.append(threading.Thread(target=security))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(1 for x in lines if x["op"] == "write") == WRITERS * WRITES_EACH

    # Retractions and reinstates go last in the scenario: the final statuses do not depend on
    # when they happened, only on which are active.
    text = "\n".join(json.dumps(x) for x in sorted(
        lines, key=lambda x: x["op"] in ("retract", "reinstate")))
    expected = reference(text)["memories"]
    graph_status = {r[0]: r[1] for r in g.rows("MATCH (m:Mem)-[st:STATUS]->() RETURN m.id, st.status")}
    ids = dict(known)
    got = {sid: graph_status[ids[sid]] for sid in ids}
    stale = [sid for sid, st in got.items() if st == "IN" and expected[sid]["status"] == "OUT"]
    assert stale == []
    assert got == {sid: v["status"] for sid, v in expected.items()}
    assert "OUT" in got.values() and "IN" in got.values()
    g.delete()
