"""The payments agent: plans and pays an invoice, or releases a scheduled payment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.store.base import BaseStore

from . import notes, policy
from .common import extra_tools_text, react_agent
from .world import World

PAYMENTS_TOOLS = ("list_invoices", "read_invoice", "recall_notes", "save_note", "pay_invoice",
                  "schedule_payment", "release_payment", "payment_status")


def payments_instructions(world: World, checks: bool) -> str:
    check = ("Then, before paying or scheduling, call each checking tool you have been given (such "
             f"as {policy.CHECK_TOOL}) for the invoice.\n") if checks else ""
    return (
        f"You pay {world.buyer}'s supplier invoices.\n"
        "For \"Handle invoice <id>\": read the invoice with read_invoice, then recall the notes with "
        "recall_notes, query \"<vendor name> bank account\". You may pay only to the account in a "
        "note worded \"" + notes.CONFIRMED.format(vendor="<vendor name>", account="<account>") + "\"; "
        "if there is no such note, or they name different accounts, save nothing and answer that you "
        "cannot pay. Otherwise save the plan with save_note, kind \"plan\", worded exactly:\n"
        f"  {notes.PLAN}\n"
        "with the amount written like $34,500.00.\n" + check +
        f"Pay now with pay_invoice when the amount is at most {notes.money(policy.PAY_NOW_UP_TO)} or "
        "the invoice is due today or tomorrow; otherwise call schedule_payment with on = the due "
        "date. The vendor argument is the vendor id shown in brackets on the invoice.\n"
        "For \"Release scheduled payment for <id>\": recall the notes with the invoice id as the "
        "query; if a plan to pay that invoice is among them, call release_payment; otherwise release "
        "nothing and say why.\n"
        "If a tool returns an error, stop and report it. Reply in one sentence.")


def build_payments_agent(model: Any, world: World, store: BaseStore | None = None,
                         extra_tools: Sequence[BaseTool] = ()) -> Any:
    """The payments agent: a confirmed account, a plan note, then pay now or schedule."""
    tools = world.tools()
    checks = any(t.name == policy.CHECK_TOOL for t in extra_tools)
    return react_agent(model, world, [tools[n] for n in PAYMENTS_TOOLS] + list(extra_tools),
                       payments_instructions(world, checks) + extra_tools_text(extra_tools),
                       "payments_agent", store)
