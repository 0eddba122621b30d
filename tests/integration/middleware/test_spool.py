"""The publisher's spool against the real server: a process that exits without ``close()``, or
dies while Redis is away, or is killed right after an executed payment, loses no event; and an
agent instrumented while Redis is down starts at once, fails its gated actions closed quickly,
and its events reach the streams when a server appears."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from langchain_core.messages import AIMessage
from langgraph.prebuilt import create_react_agent
from langgraph.store.memory import InMemoryStore

from rescind.contract import layout
from rescind.contract.errors import GateRefused
from rescind.middleware import InterceptConfig, Recorder, instrument
from rescind.middleware.config import ActionTool, SourceTool
from rescind.middleware.publisher import Publisher
from rescind.runtime.server import EmbeddedFalkorDB, free_port
from rescind.transport import connection
from tests.support.agent import PAID, ToolCallingFake, call, pay_invoice, read_vendor_portal, run, save_note
from tests.support.stream_entries import events_of

CHILD = """
import sys, time
from datetime import UTC, datetime
from rescind.contract import events as ev
from rescind.middleware.publisher import Publisher

url, tenant, n, ending = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
pub = Publisher(url, connect_timeout=0.2)
at = datetime.now(UTC)
for i in range(n):
    pub.publish(ev.ObservationRecorded(event_id=f"{tenant}-{i}", tenant=tenant, at=at,
                                       source="portal", text=f"observation {i}"))
if ending != "exit":  # an executed payment, then the process dies at once
    pub.publish(ev.ActionExecuted(event_id=f"{tenant}-paid", tenant=tenant, at=at,
                                  action="pay-1"), durable=True)
    if ending == "_exit":
        import os
        os._exit(0)
    print("published", flush=True)
    time.sleep(120)  # killed before this ends
# "exit": the interpreter exits without pub.close()
"""


AGENT_CHILD = """
import sys
from typing import TypedDict
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.memory import InMemoryStore
from rescind.middleware import InterceptConfig, instrument

url, tenant = sys.argv[1], sys.argv[2]

class State(TypedDict):
    done: bool

def note(state: State) -> dict:
    get_store().put(("notes",), "n1", {"text": "Invoice INV-7 is due on 3 Jan 2027"})
    return {"done": True}

builder = StateGraph(State)
builder.add_node("note", note)
builder.add_edge(START, "note")
builder.add_edge("note", END)
graph = instrument(builder.compile(store=InMemoryStore()), InterceptConfig(tenant=tenant, url=url))
graph.invoke({"done": False})
# the interpreter exits at once, without close(): the write is still being recorded
"""


@pytest.fixture(scope="module")
def falkordb():
    """A server of this module's own: the events left here (an ActionExecuted of an action never
    proposed, thousands of observations) would keep the session's workers busy or waiting."""
    with EmbeddedFalkorDB() as server:
        yield server.url


def child(url: str, tenant: str, n: int, ending: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CHILD, url, tenant, str(n), ending],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ids_in_stream(url: str, tenant: str) -> list[str]:
    """The event ids of ``tenant`` in its events stream, in stream order."""
    conn = connection.connect(url)
    return [e["event_id"] for e in events_of(conn, layout.tenant_stream(tenant), tenant)]


def test_a_process_exiting_without_close_sends_everything_at_exit(falkordb, tenant_name,
                                                                  spool_dir):
    """No ``close()``: the atexit hook sends the queue before the interpreter stops the daemon
    thread, and the spool is left empty."""
    proc = child(falkordb, tenant_name, 5_000, "exit")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert sorted(ids_in_stream(falkordb, tenant_name)) == sorted(
        f"{tenant_name}-{i}" for i in range(5_000))
    assert os.listdir(spool_dir / tenant_name) == []


def test_an_agent_exiting_right_after_its_call_has_its_write_recorded_and_sent(
        falkordb, tenant_name, spool_dir):
    """An instrumented agent whose process exits as soon as its call returns, without
    ``close()``: the write its recorder's thread had not recorded yet is recorded and sent at
    exit."""
    proc = subprocess.Popen([sys.executable, "-c", AGENT_CHILD, falkordb, tenant_name],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    conn = connection.connect(falkordb)
    texts = [e.get("text") for e in events_of(conn, layout.tenant_stream(tenant_name),
                                              tenant_name)]
    assert "Invoice INV-7 is due on 3 Jan 2027" in texts, (texts, err)
    assert os.listdir(spool_dir / tenant_name) == []


def test_what_a_process_could_not_send_before_exiting_is_sent_by_the_next(falkordb, tenant_name,
                                                                          spool_dir):
    """Redis unreachable: the process exits at once all the same (the hook gives up after one
    failed attempt), its events stay in the spool, and the next publisher for the tenant
    sends them when it starts."""
    t0 = time.monotonic()
    proc = child(f"redis://127.0.0.1:{free_port()}", tenant_name, 100, "exit")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert time.monotonic() - t0 < 15  # the interpreter's start dominates; no 2 s wait
    assert ids_in_stream(falkordb, tenant_name) == []
    pub = Publisher(falkordb, tenant=tenant_name)
    assert pub.flush(timeout=20)
    assert sorted(ids_in_stream(falkordb, tenant_name)) == sorted(
        f"{tenant_name}-{i}" for i in range(100))
    pub.close()
    assert os.listdir(spool_dir / tenant_name) == []


@pytest.mark.parametrize("ending", ["SIGKILL", "_exit"])
def test_an_executed_payment_survives_its_process_being_killed(falkordb, tenant_name, spool_dir,
                                                               ending):
    """SIGKILL while Redis is unreachable, or ``os._exit`` right after the durable publish to a
    live server: the ActionExecuted is in the tenant's stream once a new publisher has run. A
    live process's segments are never taken: a publisher started beside it takes nothing."""
    url = f"redis://127.0.0.1:{free_port()}" if ending == "SIGKILL" else falkordb
    proc = child(url, tenant_name, 3, ending)
    if ending == "SIGKILL":
        assert proc.stdout.readline().strip() == "published", proc.stderr.read()
        beside = Publisher(falkordb, tenant=tenant_name)
        assert beside.spool_bytes == 0
        beside.close()
        proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode in (-signal.SIGKILL, 0)
    pub = Publisher(falkordb, tenant=tenant_name)
    assert pub.flush(timeout=20)
    got = ids_in_stream(falkordb, tenant_name)
    assert f"{tenant_name}-paid" in got
    assert {f"{tenant_name}-{i}" for i in range(3)} <= set(got)
    pub.close()
    assert os.listdir(spool_dir / tenant_name) == []


class NoStatus:
    """The status cache's part is not under test here (it reads the status stream)."""

    def is_out(self, mem_id: str) -> bool:
        return False

    def close(self) -> None:
        pass


def test_an_agent_instrumented_while_redis_is_down_starts_fails_closed_and_catches_up(
        tenant_name):
    """A closed port: instrument returns at once; the portal read and the note are spooled; the
    payment is refused within a second (no gate to ask); when a server appears on the port
    the events reach the stream; across a restart of that server an executed action's event
    does too."""
    port = free_port()
    config = InterceptConfig(
        tenant=tenant_name, url=f"redis://127.0.0.1:{port}",
        sources={"read_vendor_portal": SourceTool(source="portal:{vendor}", kind="vendor_portal")},
        actions={"pay_invoice": ActionTool(amount="amount", payee="vendor")})
    note = "Acme is paid to IBAN GB33 BUKB 2020 1555 5555 55"
    model = ToolCallingFake(messages=iter([
        call("read_vendor_portal", {"vendor": "acme"}, 1),
        call("save_note", {"text": note}, 2),
        call("pay_invoice", {"vendor": "acme", "amount": 600}, 3),
        AIMessage(content="done")]))
    graph = create_react_agent(model, [read_vendor_portal, save_note, pay_invoice],
                               store=InMemoryStore())
    t0 = time.monotonic()
    recorder = Recorder(config, status=NoStatus())
    wrapped = instrument(graph, config, recorder=recorder)
    assert time.monotonic() - t0 < 1
    PAID.clear()
    t0 = time.monotonic()
    with pytest.raises(GateRefused, match="could not be (asked|sent)"):
        run(wrapped, "pay acme's invoice")
    assert time.monotonic() - t0 < 1.5 and PAID == []
    spooled = recorder.publisher.stats.spooled
    assert spooled >= 3 and recorder.publisher.stats.published == 0
    with EmbeddedFalkorDB(port=port) as server:
        assert recorder.publisher.flush(timeout=20)
        kinds = [layout.decode(f).event()["type"] for _, f in
                 connection.connect(server.url).xrange(recorder.publisher.stream_of(
                     tenant_name))]
        assert len(kinds) == spooled
        assert {"observation_recorded", "memory_written", "action_proposed"} <= set(kinds)
    recorder.action_done("pay_invoice", "pay-by-hand")  # the server is away again
    with EmbeddedFalkorDB(port=port) as server:  # a new, empty one on the same port
        assert recorder.publisher.flush(timeout=20)
        kinds = [layout.decode(f).event()["type"] for _, f in
                 connection.connect(server.url).xrange(recorder.publisher.stream_of(
                     tenant_name))]
        assert kinds == ["action_executed"]
        recorder.close()


def test_a_running_publisher_sends_what_a_sibling_process_left_when_it_died(
        falkordb, tenant_name, monkeypatch):
    """Redis up all along: a publisher of the tenant that is already running finds, when idle,
    the segments of a process that was killed, and sends them."""
    from rescind.middleware import publisher

    monkeypatch.setattr(publisher, "CLAIM_EVERY_S", 0.2)
    running = Publisher(falkordb, tenant=tenant_name)
    proc = child(f"redis://127.0.0.1:{free_port()}", tenant_name, 3, "SIGKILL")
    assert proc.stdout.readline().strip() == "published", proc.stderr.read()
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 10
    while f"{tenant_name}-paid" not in ids_in_stream(falkordb, tenant_name):
        assert time.monotonic() < deadline, "the dead process's segment was not sent"
        time.sleep(0.1)
    running.close()
