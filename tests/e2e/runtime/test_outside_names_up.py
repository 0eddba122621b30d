"""The two runs of issue 27 through `rescind up`: a wrapped prebuilt agent reads one vendor's
portal as `northwind`, then as `Northwind ` (capital, trailing space), and saves the same note
under a new key each time. FalkorDB 4.16.3 died on the second run, restarted on the same data
and died again; now the server stays up, both notes are recorded, both reads name one source."""

from __future__ import annotations

import itertools
import signal
import time
from typing import Annotated, Any

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.store.memory import InMemoryStore

from rescind.contract import events as ev
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.middleware import InterceptConfig, instrument
from rescind.middleware.config import SourceTool
from rescind.runtime.server import free_port
from tests.e2e.runtime.test_supervision import _health, _server_pid, _until, _up
from tests.support.agent import ToolCallingFake, settle

NOTE = "Northwind bank account: GB82 WEST 1234 5698 7654 32"
_keys = itertools.count()


@tool
def read_portal(vendor: str) -> str:
    """Read a vendor's portal page."""
    return f"{vendor.strip().title()} Supplies. Bank account: GB82 WEST 1234 5698 7654 32"


@tool
def save_note(content: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Save a note under a new key."""
    store.put(("notes",), f"n{next(_keys)}", {"content": content})
    return "saved"


def _run(url: str, tenant: str, vendor: str, n: int) -> None:
    script = [AIMessage(content="", tool_calls=[{"name": "read_portal", "args": {"vendor": vendor},
                                                 "id": f"c{n}a"}]),
              AIMessage(content="", tool_calls=[{"name": "save_note", "args": {"content": NOTE},
                                                 "id": f"c{n}b"}]),
              AIMessage(content="done")]
    graph = create_react_agent(ToolCallingFake(messages=iter(script)), [read_portal, save_note],
                               store=InMemoryStore())
    wrapped = instrument(graph, InterceptConfig(tenant=tenant, url=url, sources={
        "read_portal": SourceTool(source="portal:{vendor}", kind="vendor_portal")}))
    wrapped.invoke({"messages": [("user", "Check Northwind's bank details")]},
                   {"configurable": {"thread_id": f"t{n}"}})
    settle(url, wrapped)
    wrapped.rescind.close()


def test_two_spellings_of_a_vendor_leave_the_server_up_and_both_notes_recorded(tmp_path):
    """Through `rescind up`: no 'crashed by signal' in falkordb.log, the server's pid unchanged,
    health OK, one portal source, and a note memory for each run's key."""
    port, api_port = free_port(), free_port()
    up = _up(tmp_path / "data", port, api_port)
    try:
        _until("the API", lambda: _health(api_port).get("ok"))
        url = f"redis://127.0.0.1:{port}"
        pid = _server_pid(up)
        tenants.create(connect(url), "shop", by="test")
        _run(url, "shop", "northwind", 1)
        time.sleep(2)
        _run(url, "shop", "Northwind ", 2)

        assert _server_pid(up) == pid
        log = (tmp_path / "data" / "falkordb.log").read_text(errors="replace")
        assert "crashed by signal" not in log
        assert _health(api_port).get("ok")
        graph = TenantGraph(connect(url), "shop")
        portals = graph.rows("MATCH (s:Source {kind: 'vendor_portal'}) RETURN s.id")
        assert portals == [["portal:northwind"]]
        for key in ("notes/n0", "notes/n1"):
            mid = ev.store_memory_id("shop", "belief", key, NOTE)
            assert graph.statuses([mid])[mid].status == "IN", key
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(timeout=60)
