"""The accounts-payable agent (notes from portal pages and contracts) and the confirmer agent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.store.base import BaseStore

from . import notes
from .common import extra_tools_text, react_agent
from .world import World

AP_TOOLS = ("read_vendor_portal", "read_contract", "list_invoices", "read_invoice", "save_note",
            "recall_notes")
CONFIRMER_TOOLS = ("read_vendor_portal", "read_contract", "recall_notes", "save_note")


def ap_instructions(world: World) -> str:
    return (
        f"You are the accounts-payable clerk of {world.buyer}. Each task names one document: a "
        "vendor's portal page (read it with read_vendor_portal) or the signed contract with a vendor "
        "(read it with read_contract); the vendor is given by its id, such as northwind.\n"
        "Read the document, then save each fact it states as its own note with save_note, "
        "kind \"belief\", worded exactly like this and nothing else:\n"
        f"  {notes.BANK}\n  {notes.REMIT}\n"
        "where {vendor} is the vendor name the document gives, and the account and the address are "
        "copied character for character. Save only what the document states. Then reply in one "
        "sentence with what you saved.")


def confirmer_instructions(world: World) -> str:
    return (
        f"You check vendors' bank details for {world.buyer} before anyone pays. A task names a "
        "vendor by its id and the document to check against: \"Confirm the bank account of vendor "
        "<id>.\" means its portal page as it is now (read_vendor_portal); \"... against its signed "
        "contract.\" means the contract (read_contract). If that document states no bank account, "
        "confirm nothing. Otherwise recall the notes with recall_notes, query \""
        + notes.ACCOUNT_QUERY.format(vendor="<vendor name>") + "\" (with the colon, so only the "
        "account notes come back, not earlier confirmations). If they record exactly one bank "
        "account for the vendor and it is the account the document states, save this note with "
        "save_note, kind \"belief\", worded exactly:\n"
        f"  {notes.CONFIRMED}\n"
        "Otherwise save nothing and say what disagrees. Reply in one sentence.")


def build_ap_agent(model: Any, world: World, store: BaseStore | None = None,
                   extra_tools: Sequence[BaseTool] = ()) -> Any:
    """The AP agent: one run per document, one belief note per fact it states."""
    tools = world.tools()
    return react_agent(model, world, [tools[n] for n in AP_TOOLS] + list(extra_tools),
                       ap_instructions(world) + extra_tools_text(extra_tools), "ap_agent", store)


def build_confirmer(model: Any, world: World, store: BaseStore | None = None,
                    extra_tools: Sequence[BaseTool] = ()) -> Any:
    """The confirmer: the notes and a document (the portal, or the contract) agree on a vendor's
    account -> a Confirmed note; checked against both, that note rests on both."""
    tools = world.tools()
    return react_agent(model, world, [tools[n] for n in CONFIRMER_TOOLS] + list(extra_tools),
                       confirmer_instructions(world) + extra_tools_text(extra_tools), "confirmer",
                       store)
