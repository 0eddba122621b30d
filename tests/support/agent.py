"""A LangGraph prebuilt agent with scripted model turns and the tools of an accounts-payable
desk, wrapped by Rescind (portal reads are a source; payments are actions), and the helpers that
run it and wait for the workers."""

from __future__ import annotations

import hashlib
import itertools
from typing import Annotated, Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.store.memory import InMemoryStore

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.middleware import InterceptConfig, instrument
from rescind.middleware.config import ActionTool, SourceTool
from rescind.scenario.via_streams import wait_idle
from rescind.transport import connection

PORTAL = {"acme": "Acme bank account: IBAN GB33 BUKB 2020 1555 5555 55"}
PAID: list[dict] = []


@tool
def read_vendor_portal(vendor: str) -> str:
    """Read a vendor's web portal page."""
    return PORTAL[vendor]


@tool
def save_note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Save a note to long-term memory."""
    store.put(("notes",), note_key(text), {"kind": "belief", "text": text})
    return "saved"


def note_key(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def note_id(tenant: str, text: str) -> str:
    """The memory id of a note ``save_note`` kept: its store key and its text."""
    return ev.store_memory_id(tenant, "belief", f"notes/{note_key(text)}", text)


@tool
def recall_notes(store: Annotated[Any, InjectedStore()]) -> str:
    """Read every saved note."""
    return "\n".join(i.value["text"] for i in store.search(("notes",)))


@tool
def pay_invoice(vendor: str, amount: float) -> str:
    """Pay a vendor."""
    PAID.append({"vendor": vendor, "amount": amount})
    return f"paid {amount} to {vendor}"


class ToolCallingFake(GenericFakeChatModel):
    """A scripted chat model that 'calls tools': LangGraph binds tools, we ignore them."""

    def bind_tools(self, tools: Any, **kw: Any) -> ToolCallingFake:
        return self


def call(name: str, args: dict, n: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{n}"}])


@tool
def schedule_payment(invoice: str, vendor: str, amount: float) -> str:
    """Schedule a payment for later."""
    SCHEDULED[invoice] = {"vendor": vendor, "amount": amount}
    return f"scheduled {invoice}"


@tool
def release_payment(invoice: str, amount: float = 0) -> str:
    """Release a scheduled payment."""
    PAID.append({"invoice": invoice, **SCHEDULED.pop(invoice)})
    return f"released {invoice}"


SCHEDULED: dict[str, dict] = {}


def agent(script: list[AIMessage], url: str, tenant: str):
    model = ToolCallingFake(messages=iter(script))
    graph = create_react_agent(model, [read_vendor_portal, save_note, recall_notes, pay_invoice,
                                       schedule_payment, release_payment], store=InMemoryStore())
    config = InterceptConfig(
        tenant=tenant, url=url,
        sources={"read_vendor_portal": SourceTool(source="portal:{vendor}", kind="vendor_portal")},
        actions={"pay_invoice": ActionTool(amount="amount", payee="vendor"),
                 "schedule_payment": ActionTool(id="payment:{invoice}", stage="propose",
                                                amount="amount", payee="vendor"),
                 "release_payment": ActionTool(id="payment:{invoice}", stage="execute")})
    return instrument(graph, config)


_thread = itertools.count()


def run(wrapped, text: str) -> dict:
    return wrapped.invoke({"messages": [("user", text)]},
                          {"configurable": {"thread_id": f"t{next(_thread)}"}})


def settle(url: str, wrapped) -> None:
    wrapped.rescind.publisher.flush()
    wait_idle(connection.connect(url), layout.tenant_stream(wrapped.rescind.tenant))
