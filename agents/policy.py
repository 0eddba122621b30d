"""The deterministic policy: what a careful clerk would do next, read off the conversation.

The task is the last human message; what has happened is the tool calls since then and their
results. Each turn the policy either calls tools or gives its final answer. The notes a document
supports are saved together, in one turn, so each rests on the document alone and not also on the
note saved just before it. Today's date comes from the system prompt ("Today is YYYY-MM-DD"),
which the agents build from the world's clock.

Tasks it knows:

    Process the portal page of vendor <id>.       read it, save one belief note per fact
    Process the signed contract of vendor <id>.   the same, from the contract
    Confirm the bank account of vendor <id>.      read the portal, recall the account notes,
                                                  save a Confirmed note if they agree
    Confirm the bank account of vendor <id> against its signed contract.
                                                  the same against the contract, when it
                                                  states an account
    Handle invoice <INV-n>.                       read, recall, plan, (check), pay or schedule
    Release scheduled payment for <INV-n>.        recall the plan, release

Any tool error ends the run. ``reckless`` pays every invoice at once with pay_invoice, skipping
the checks (it still needs a confirmed account to know where to send the money).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from . import notes

PAY_NOW_UP_TO = 10_000.00  # at most this much is paid at once, whatever the due date
PAY_NOW_WITHIN_DAYS = 2  # due in fewer days than this (today or tomorrow): paid at once
CHECK_TOOL = "check_fragility"


@dataclass(frozen=True)
class Call:
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    text: str


@dataclass(frozen=True)
class Done:
    """A tool call of this run and its result (``error`` when the tool failed)."""

    name: str
    args: dict[str, Any]
    result: str | None
    error: bool


def decide(messages: list[BaseMessage], tools: list[str], reckless: bool = False) -> list[Call] | Answer:
    """The next move for the conversation so far, given the names of the bound tools: the tool
    calls to make now, or the final answer."""
    move = _decide(messages, tools, reckless)
    return [move] if isinstance(move, Call) else move


def _decide(messages: list[BaseMessage], tools: list[str], reckless: bool) -> Call | list[Call] | Answer:
    task, done = _conversation(messages)
    for step in done:
        if step.error:
            return Answer(f"Stopped: {step.name} failed: {step.result}")
    if m := re.search(r"portal page of vendor ([\w-]+)", task, re.I):
        return _document(done, "read_vendor_portal", m.group(1), "portal page")
    if m := re.search(r"signed contract of vendor ([\w-]+)", task, re.I):
        return _document(done, "read_contract", m.group(1), "signed contract")
    if m := re.search(r"confirm the bank account of vendor ([\w-]+) against its signed contract", task, re.I):
        return _confirm(done, "read_contract", m.group(1), "signed contract")
    if m := re.search(r"confirm the bank account of vendor ([\w-]+)", task, re.I):
        return _confirm(done, "read_vendor_portal", m.group(1), "portal page")
    if m := re.search(r"release scheduled payment for (INV-\d+)", task, re.I):
        return _release(done, m.group(1).upper())
    if m := re.search(r"handle invoice (INV-\d+)", task, re.I):
        return _pay(done, m.group(1).upper(), _today(messages), tools, reckless)
    return Answer("I can process a vendor's portal page or signed contract, confirm a vendor's bank "
                  "account, handle an invoice or release a scheduled payment; not this: " + task)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content or [])


def _conversation(messages: list[BaseMessage]) -> tuple[str, list[Done]]:
    start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    task = _text(messages[start].content) if start >= 0 else ""
    results = {m.tool_call_id: m for m in messages[start + 1:] if isinstance(m, ToolMessage)}
    done = []
    for message in messages[start + 1:]:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                got = results.get(call.get("id") or "")
                done.append(Done(call["name"], dict(call.get("args") or {}),
                                 None if got is None else _text(got.content),
                                 got is not None and got.status == "error"))
    return task, done


def _today(messages: list[BaseMessage]) -> date | None:
    for message in messages:
        found = isinstance(message, SystemMessage) and re.search(r"Today is (\d{4}-\d{2}-\d{2})",
                                                                   _text(message.content))
        if found:
            return date.fromisoformat(found.group(1))
    return None


def _result(done: list[Done], name: str) -> str | None:
    return next((d.result for d in done if d.name == name and d.result is not None), None)


def _saved(done: list[Done]) -> set[str]:
    return {str(d.args.get("text")) for d in done if d.name == "save_note" and d.result is not None}


def _document(done: list[Done], tool: str, vendor: str, what: str) -> Call | list[Call] | Answer:
    text = _result(done, tool)
    if text is None:
        return Call(tool, {"vendor": vendor})
    found = notes.facts(text)
    saved = _saved(done)
    if unsaved := [n for n in found if n not in saved]:
        return [Call("save_note", {"text": n, "kind": "belief"}) for n in unsaved]
    if not found:
        return Answer(f"The {what} of {vendor} states no bank account or remit address; saved nothing.")
    return Answer(f"Saved {len(found)} note(s) from the {what} of {vendor}: " + "; ".join(found))


def _confirm(done: list[Done], tool: str, vendor: str, what: str) -> Call | Answer:
    document = _result(done, tool)
    if document is None:
        return Call(tool, {"vendor": vendor})
    name, shown = notes.field(document, "Vendor"), notes.field(document, "Bank account")
    if not name or not shown:
        return Answer(f"The {what} of {vendor} states no bank account; nothing to confirm.")
    recalled = _result(done, "recall_notes")
    if recalled is None:  # account notes only: an earlier confirmation must not confirm itself
        return Call("recall_notes", {"query": notes.ACCOUNT_QUERY.format(vendor=name)})
    noted = notes.noted_accounts(recalled, name)
    if noted != [shown]:
        return Answer(f"Not confirmed: the notes record {', '.join(noted) or 'no account'} for {name}; "
                      f"the {what} states {shown}.")
    note = notes.CONFIRMED.format(vendor=name, account=shown)
    if note not in _saved(done):
        return Call("save_note", {"text": note, "kind": "belief"})
    return Answer(f"Confirmed the bank account of {name}: {shown}.")


def _invoice(text: str) -> tuple[str, str, float, date] | None:
    """(vendor name, vendor id, amount, due date) of an invoice text, or None."""
    vendor = re.fullmatch(r"(.+?)\s*\(([\w-]+)\)", notes.field(text, "Vendor") or "")
    amount = re.search(r"[\d,]+(?:\.\d+)?", notes.field(text, "Amount") or "")
    due = notes.field(text, "Due date") or ""
    if not (vendor and amount and re.fullmatch(r"\d{4}-\d{2}-\d{2}", due)):
        return None
    return vendor.group(1), vendor.group(2), float(amount.group(0).replace(",", "")), date.fromisoformat(due)


def _pay(done: list[Done], invoice: str, today: date | None, tools: list[str],
         reckless: bool) -> Call | Answer:
    text = _result(done, "read_invoice")
    if text is None:
        return Call("read_invoice", {"invoice": invoice})
    parsed = _invoice(text)
    if parsed is None:
        return Answer(f"Cannot pay {invoice}: I cannot read its vendor, amount and due date.")
    name, vendor, amount, due = parsed
    recalled = _result(done, "recall_notes")
    if recalled is None:
        return Call("recall_notes", {"query": f"{name} bank account"})
    accounts = notes.confirmed_accounts(recalled, name)
    if not accounts:
        return Answer(f"Cannot pay {invoice}: there is no confirmed bank account for {name}.")
    if len(accounts) > 1:
        return Answer(f"Cannot pay {invoice}: the confirmed accounts for {name} disagree "
                      f"({', '.join(accounts)}).")
    account = accounts[0]
    plan = notes.plan(invoice, name, amount, account)
    if plan not in _saved(done):
        return Call("save_note", {"text": plan, "kind": "plan"})
    if not reckless and CHECK_TOOL in tools and _result(done, CHECK_TOOL) is None:
        return Call(CHECK_TOOL, {"invoice": invoice})
    args = {"invoice": invoice, "vendor": vendor, "amount": amount, "account": account}
    soon = today is not None and (due - today).days < PAY_NOW_WITHIN_DAYS
    if reckless or amount <= PAY_NOW_UP_TO or soon:
        tool = "pay_invoice"
    else:
        tool, args = "schedule_payment", {**args, "on": due.isoformat()}
    outcome = _result(done, tool)
    if outcome is None:
        return Call(tool, args)
    return Answer(outcome)


def _release(done: list[Done], invoice: str) -> Call | Answer:
    recalled = _result(done, "recall_notes")
    if recalled is None:
        return Call("recall_notes", {"query": invoice})
    if not any(line.startswith(notes.plan_prefix(invoice)) for line in recalled.splitlines()):
        return Answer(f"Not releasing {invoice}: there is no plan to pay it in memory.")
    outcome = _result(done, "release_payment")
    if outcome is None:
        return Call("release_payment", {"invoice": invoice})
    return Answer(outcome)
