"""The fourth blind programs of `rescind bench fidelity` (``group="blind4"``): six LangGraph
programs written by someone who read neither the attribution's rules nor how it matches values
nor any other program of the benchmark (only ``instrument``'s public API, README.md,
docs/wrapping.md and the interface of the earlier blind sets), in the shapes of public
LangGraph and LangChain examples. Each has a scripted chat model (no network) and the truth
about every memory it writes, labelled by hand and committed before any wrapped run. This set
was measured once, at its first run; that figure is the one that counts (see issue 29).

The labelling rule is the blind sets' rule, unchanged: a premise is an item the step that wrote
the value was shown, directly or through something the program or the model built from it, and
whose facts the value states or computes from; sources are named as the truth names them (a
user's messages by ``user:{user_id}``, a tool's results by their source, a memory by its text).
Items stating the same fact are alternatives; different facts from different items are all
needed; only minimal sets. A message the program builds rests on what it was built from; the
model's own earlier answers are not items, but what they were built from is passed through.

1. ``ap_invoice``: the hand-built tool loop of the LangGraph quickstart (``MessagesState``,
   ``ToolNode``, ``tools_condition``, ``InjectedStore``): an invoice's text ("EUR 12.500,00"),
   the vendor master (IBAN compact) and the vendor's e-mail (IBAN with spaces, a date written
   "3rd of March") feed a payment note and a bank-details check.
2. ``support_retry``: a prebuilt ReAct agent over ``ToolNode(handle_tool_errors=True)``: the
   order lookup fails once and succeeds on the retry; the memory tool uses ``get_store()`` and
   ``get_config()`` inside, and states a delivery window ("14h30-16h30" read, "2:30 pm"
   written) and the customer's own instruction.
3. ``heat_pump``: a research graph that sends each question to a compiled subgraph (``Send``
   to a subgraph node); each branch's node calls the search tool itself and saves a finding;
   the report is written from the findings carried in the state, not read from the store.
4. ``energy_handoff``: ``langgraph_supervisor`` with two agents (``output_mode`` the default
   ``last_message``): the billing agent reads a meter and a tariff; the memory agent only sees
   the billing agent's answer, and saves a summary with the user's threshold.
5. ``reorder_window``: a model node that shows the model only the last four messages
   (``trim_messages``): a stock count is saved while it is in view, and the reorder note,
   written once the count and the user's request were trimmed away, rests on what is left.
6. ``dentist_memory``: langmem's manage and search memory tools in a prebuilt agent over two
   runs of one user: a calendar entry and a weather forecast read in one turn become one
   memory; the next run finds it by search and updates it (same id) after the visit moved.
"""

from __future__ import annotations

import operator
import re
from typing import Annotated, Any, TypedDict

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, trim_messages
from langchain_core.tools import tool
from langgraph.config import get_config, get_store
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode, create_react_agent, tools_condition
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Send

from rescind.middleware import SourceTool

from .fidelity_programs import Policy, Program, Runner, _user, call, say, scripted

BLIND4 = "blind4"


def _policy(decide: Any) -> Policy:
    return Policy(messages=iter(()), decide=decide)


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def _uid() -> str:
    return get_config()["configurable"]["user_id"]


# -- 1. accounts payable: invoice text, vendor master, e-mail (the quickstart's tool loop) --------

INVOICES = {"inv-88231": "RECHNUNG / INVOICE INV-88231\nNordlicht Druck GmbH, Hafenstraße 12, "
                         "20457 Hamburg\nRechnungsdatum: 16.02.2026 · Ihre Lieferantennr.: "
                         "V-3310\nPos. 1 Broschüren A4, 5.000 Stk.  EUR 10.504,20\nMwSt. 19 %  "
                         "EUR 1.995,80\nGesamtbetrag: "
                         "EUR 12.500,00\nZahlbar innerhalb 14 Tagen ohne Abzug."}
VENDORS = {"v-3310": "Vendor V-3310 | Nordlicht Druck GmbH | Hamburg | terms: net 14 | "
                     "IBAN DE89370400440532013000 | BIC COBADEFFXXX | last change 2025-06-30"}
MAILS = {"msg-5512": "From: buchhaltung@nordlicht-druck.de\nDate: 24 Feb 2026\nSubject: "
                     "INV-88231\n\nHello, a friendly reminder that invoice INV-88231 is due. "
                     "Could you pay it by the 3rd of March at the latest? Our bank details are "
                     "unchanged: IBAN DE89 3704 0044 0532 0130 00.\nKind regards, J. Lindqvist"}
PAY_NOTE = ("Pay INV-88231, 12,500.00 EUR, to Nordlicht Druck GmbH, IBAN DE89 3704 0044 0532 "
            "0130 00, on 2026-03-03")
BANK_CHECK = ("V-3310 Nordlicht Druck GmbH: IBAN DE89370400440532013000 (last changed "
              "2025-06-30) confirmed by the vendor's e-mail of 24 Feb 2026")


@tool
def read_invoice(doc_id: str) -> str:
    """The text extracted from an invoice PDF in the inbox."""
    return INVOICES[doc_id.strip().lower()]


@tool
def vendor_master(vendor_id: str) -> str:
    """The vendor's master record in the ERP."""
    return VENDORS[vendor_id.strip().lower()]


@tool
def read_email(message_id: str) -> str:
    """An e-mail in the accounts-payable mailbox."""
    return MAILS[message_id.strip().lower()]


@tool
def save_ap_note(kind: str, text: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Save an accounts-payable note: kind is 'payment' or 'bank_check'."""
    store.put(("ap_notes", kind), "INV-88231" if kind == "payment" else "V-3310", {"text": text})
    return f"Saved the {kind} note."


def _ap_invoice(runner: Runner) -> None:
    tools = [read_invoice, vendor_master, read_email, save_ap_note]
    model = scripted(
        call(("read_invoice", {"doc_id": "inv-88231"}), ("read_email", {"message_id": "msg-5512"})),
        call(("vendor_master", {"vendor_id": "v-3310"})),
        call(("save_ap_note", {"kind": "bank_check", "text": BANK_CHECK}),
             ("save_ap_note", {"kind": "payment", "text": PAY_NOTE})),
        say("INV-88231 is scheduled for 3 March 2026; the IBAN matches the vendor master."))
    bound = model.bind_tools(tools)

    def assistant(state: MessagesState) -> dict:
        system = SystemMessage("You are an accounts-payable clerk. Check bank details against "
                               "the vendor master before you schedule a payment.")
        return {"messages": [bound.invoke([system, *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("assistant", assistant)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "assistant")
    builder.add_conditional_edges("assistant", tools_condition)
    builder.add_edge("tools", "assistant")
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    runner.invoke(graph, _user("New invoice in the inbox (inv-88231), and the vendor's "
                               "reminder e-mail msg-5512. Check the bank details against the "
                               "vendor master and schedule the payment."),
                  {"configurable": {"user_id": "sofie"}})


AP_INVOICE = Program(
    "ap_invoice", "hand-built MessagesState/ToolNode loop: invoice text, vendor master and an "
    "e-mail (IBAN compact and spaced, '3rd of March') feed a payment note and a bank check",
    _ap_invoice, group=BLIND4,
    sources={"read_invoice": SourceTool(source="invoice:{doc_id}", kind="document"),
             "vendor_master": SourceTool(source="erp:{vendor_id}", kind="erp"),
             "read_email": SourceTool(source="mail:{message_id}", kind="email")},
    # The payment note: invoice number, amount and vendor name from the invoice (the amount
    # only there); the IBAN from the master (compact) or the e-mail (spaced); the date from the
    # e-mail ("3rd of March", only there). So the invoice and the e-mail, the master being
    # redundant; Sofie's message names the invoice only as a document id the invoice states.
    # The bank check: V-3310 and the name in the master and the invoice, the IBAN in the
    # master and the e-mail, the last change (2025-06-30) only in the master, the e-mail's
    # date only in the e-mail: the master and the e-mail.
    truth={PAY_NOTE: {frozenset({"invoice:inv-88231", "mail:msg-5512"})},
           BANK_CHECK: {frozenset({"erp:v-3310", "mail:msg-5512"})}},
    out_when={"invoice:inv-88231": {PAY_NOTE}, "mail:msg-5512": {PAY_NOTE, BANK_CHECK},
              "erp:v-3310": {BANK_CHECK}})


# -- 2. customer support: a tool that fails once, a memory tool using get_store/get_config -------

ORDERS = {"a-5521": "Order A-5521 · 2 x LED desk lamp 'Lumo' @ 38.90 EUR · paid · shipped "
                    "05.12.2026 with DPD, parcel 01906771233345"}
PARCELS = {"01906771233345": "DPD parcel 01906771233345: out for delivery tomorrow, Tue "
                             "08/12, slot 14h30-16h30, depot Hannover-Laatzen"}
DELIVERY = ("Order A-5521 (2 x LED desk lamp 'Lumo', 38.90 EUR each): DPD delivers Tue 8 "
            "Dec between 2:30 pm and 4:30 pm; if she is out, leave it with the neighbour at "
            "no. 12 (Mr. Brandt)")


@tool
def save_customer_memory(text: str) -> str:
    """Remember something about this customer for future conversations."""
    get_store().put(("customer_memory", _uid()), "delivery", {"text": text})
    return "Remembered."


def _support_retry(runner: Runner) -> None:
    attempts: list[str] = []

    @tool
    def order_status(order_id: str) -> str:
        """Look up an order in the shop's order system."""
        attempts.append(order_id)
        if len(attempts) == 1:
            raise TimeoutError("order service did not answer within 5 s")
        return ORDERS[order_id.strip().lower()]

    @tool
    def track_parcel(parcel: str) -> str:
        """The carrier's tracking status for a parcel number."""
        return PARCELS[re.sub(r"\D", "", parcel)]

    model = scripted(
        call(("order_status", {"order_id": "A-5521"})),
        call(("order_status", {"order_id": "A-5521"})),
        call(("track_parcel", {"parcel": "01906771233345"})),
        call(("save_customer_memory", {"text": DELIVERY})),
        say("Your two Lumo lamps arrive tomorrow between 2:30 and 4:30 pm. If you're out, DPD "
            "will leave them with Mr. Brandt at no. 12."))
    agent = create_react_agent(
        model, ToolNode([order_status, track_parcel, save_customer_memory],
                        handle_tool_errors=True),
        prompt="You are the shop's support assistant. Be brief and friendly.",
        store=InMemoryStore())
    graph = runner.graph(agent)
    runner.invoke(graph, _user("Hi, where is my order A-5521? I won't be home all day - if I'm "
                               "out, please leave it with my neighbour at no. 12 (Mr. Brandt)."),
                  {"configurable": {"user_id": "lena"}})


SUPPORT_RETRY = Program(
    "support_retry", "prebuilt ReAct agent over ToolNode(handle_tool_errors=True): the order "
    "lookup fails once, then succeeds; the memory tool uses get_store() and get_config()",
    _support_retry, group=BLIND4,
    sources={"order_status": SourceTool(source="orders:{order_id}", kind="shop"),
             "track_parcel": SourceTool(source="dpd:{parcel}", kind="carrier")},
    # The order (number, lamps, price) from the order system's second answer (the first was an
    # error, stating nothing); the day and the window from the tracking (14h30-16h30 written
    # as 2:30-4:30 pm; DPD is in both); the neighbour at no. 12, Mr. Brandt, from Lena's message.
    truth={DELIVERY: {frozenset({"orders:a-5521", "dpd:01906771233345", "user:lena"})}},
    out_when={"orders:a-5521": {DELIVERY}, "dpd:01906771233345": {DELIVERY},
              "user:lena": {DELIVERY}})


# -- 3. research: one compiled subgraph per question (Send), a report from the state -----------

SEARCH = {"cop": "Field trial 2025 (742 homes): air-source heat pumps reached a seasonal COP "
                 "of 3.2 on average; at -7 °C outdoor the COP fell to 2.1.",
          "cost": "Installed cost of a 9 kW air-source heat pump in 2026: EUR 11,500 on "
                  "average (range 9,800-14,200), incl. buffer tank and electrical work.",
          "grant": "BEG 2026: the federal grant covers 30% of eligible costs, capped at "
                   "eligible costs of EUR 30,000 per home."}
FINDINGS = {"cop": "Efficiency: seasonal COP 3.2 on average (2.1 at -7 °C), 2025 field trial "
                   "of 742 homes",
            "cost": "Cost: EUR 11,500 installed on average for 9 kW (range 9,800-14,200)",
            "grant": "Grant: 30% of eligible costs (BEG 2026), eligible costs capped at EUR "
                     "30,000"}
REPORT = ("Heat pump for a 140 m² house built 1978: a 9 kW air-source unit, seasonal COP 3.2, "
          "costs about EUR 11,500 installed; the 30% BEG grant (EUR 3,450) brings it to EUR "
          "8,050")
QUESTION = ("Is a heat pump worth it for our 140 m² house, built 1978? efficiency, cost, "
            "grants please")


@tool
def web_search(topic: str) -> str:
    """Search the web for a research topic."""
    return SEARCH[topic.strip().lower()]


def _research_model(messages: list[BaseMessage]) -> Any:
    head, last = _text(messages[0]), _text(messages[-1])
    if head.startswith("Summarise"):
        topic = next(t for t, text in SEARCH.items() if text in last)
        return say(FINDINGS[topic])
    return say(REPORT)


class _Research(TypedDict, total=False):
    question: str
    findings: Annotated[list[str], operator.add]
    report: str


class _Branch(TypedDict, total=False):
    topic: str
    results: str
    findings: Annotated[list[str], operator.add]


def _heat_pump(runner: Runner) -> None:
    model = _policy(_research_model)

    def search(state: _Branch) -> dict:
        return {"results": web_search.invoke({"topic": state["topic"]})}

    def summarise(state: _Branch) -> dict:
        finding = _text(model.invoke([SystemMessage("Summarise the search results in one line."),
                                      HumanMessage(state["results"])]))
        get_store().put(("findings", _uid()), state["topic"], {"text": finding})
        return {"findings": [finding]}

    branch = StateGraph(_Branch)
    branch.add_node("search", search)
    branch.add_node("summarise", summarise)
    branch.add_edge(START, "search")
    branch.add_edge("search", "summarise")
    researcher = branch.compile()

    def fan_out(state: _Research) -> list[Send]:
        return [Send("researcher", {"topic": t}) for t in ("cop", "cost", "grant")]

    def report(state: _Research, *, store: BaseStore) -> dict:
        text = _text(model.invoke([
            SystemMessage("Write the homeowner a three-line report."),
            HumanMessage(f"Question: {state['question']}\n\nFindings:\n"
                         + "\n".join(f"- {f}" for f in sorted(state["findings"])))]))
        store.put(("reports", _uid()), "heat-pump", {"text": text, "kind": "answer"})
        return {"report": text}

    builder = StateGraph(_Research)
    builder.add_node("researcher", researcher)
    builder.add_node("report", report)
    builder.add_conditional_edges(START, fan_out, ["researcher"])
    builder.add_edge("researcher", "report")
    builder.add_edge("report", END)
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    runner.invoke(graph, {"question": QUESTION}, {"configurable": {"user_id": "noor"}})


HEAT_PUMP = Program(
    "heat_pump", "Send to a compiled subgraph per question; each branch's node calls the "
    "search itself and saves a finding; the report is written from the findings in the state",
    _heat_pump, group=BLIND4,
    sources={"web_search": SourceTool(source="web:{topic}", kind="web")},
    # Each finding restates its own search result. The report is shown Noor's question (the
    # 140 m², 1978) and the three findings, built from the three results: 9 kW, COP 3.2 and
    # EUR 11,500 from two of them, 30% and BEG from the third, 3,450 and 8,050 computed from
    # cost and grant. The findings in the store are never read back: not items of the report.
    truth={FINDINGS["cop"]: {frozenset({"web:cop"})},
           FINDINGS["cost"]: {frozenset({"web:cost"})},
           FINDINGS["grant"]: {frozenset({"web:grant"})},
           REPORT: {frozenset({"web:cop", "web:cost", "web:grant", "user:noor"})}},
    out_when={"web:cop": {FINDINGS["cop"], REPORT}, "web:cost": {FINDINGS["cost"], REPORT},
              "web:grant": {FINDINGS["grant"], REPORT}, "user:noor": {REPORT}})


# -- 4. a supervisor hands off to a billing agent, then to a memory agent -----------------------

METERS = {"em-400217": "Meter EM-400217 (electricity): 18,942 kWh on 01.12.2026, 18,530 kWh "
                       "on 01.11.2026: 412 kWh in November"}
TARIFFS = {"green-flex": "Tariff Green Flex: 31.84 ct/kWh, standing charge EUR 9.90 per month, "
                         "price guaranteed until 31.03.2027"}
ENERGY = ("November electricity: 412 kWh at 31.84 ct/kWh + EUR 9.90 standing charge = "
          "EUR 141.08; below the EUR 150 a month the customer wants to be warned about")


@tool
def meter_reading(meter_id: str) -> str:
    """The latest readings of a smart meter."""
    return METERS[meter_id.strip().lower()]


@tool
def tariff(plan: str) -> str:
    """The prices of an energy tariff."""
    return TARIFFS[plan.strip().lower()]


def _energy_handoff(runner: Runner) -> None:
    from langgraph_supervisor import create_supervisor

    @tool
    def save_summary(text: str, store: Annotated[BaseStore, InjectedStore()]) -> str:
        """Save a summary of the user's energy use for next month's check."""
        store.put(("energy", _uid()), "2026-11", {"text": text})
        return "Summary saved."

    billing = create_react_agent(
        scripted(call(("meter_reading", {"meter_id": "EM-400217"}),
                      ("tariff", {"plan": "green-flex"})),
                 say("November: 412 kWh x 31.84 ct/kWh = EUR 131.18, plus the EUR 9.90 "
                     "standing charge: EUR 141.08.")),
        [meter_reading, tariff], name="billing_agent",
        prompt="You compute electricity bills from meter readings and tariffs.")
    memory = create_react_agent(
        scripted(call(("save_summary", {"text": ENERGY})), say("Saved for next month.")),
        [save_summary], name="memory_agent",
        prompt="You keep a short record of each month's energy use.")
    supervisor = scripted(
        call(("transfer_to_billing_agent", {})),
        call(("transfer_to_memory_agent", {})),
        say("November came to EUR 141.08, under your EUR 150 limit. I've noted it."))
    workflow = create_supervisor(
        [billing, memory], model=supervisor,
        prompt="You manage a billing agent and a memory agent. Use billing for bills, memory "
               "to record the result.")
    graph = runner.graph(workflow.compile(store=InMemoryStore()))
    runner.invoke(graph, _user("What did November's electricity cost me? meter EM-400217, "
                               "Green Flex tariff. Keep a note, and tell me whenever a month "
                               "goes over EUR 150."), {"configurable": {"user_id": "olu"}})


ENERGY_HANDOFF = Program(
    "energy_handoff", "langgraph_supervisor with two agents (last_message output): the memory "
    "agent sees only the billing agent's answer, built from a meter and a tariff",
    _energy_handoff, group=BLIND4,
    sources={"meter_reading": SourceTool(source="meter:{meter_id}", kind="meter"),
             "tariff": SourceTool(source="tariff:{plan}", kind="tariff")},
    # The memory agent is shown Olu's message (no name in it) and the billing agent's answer; that answer was
    # built from the meter (412 kWh) and the tariff (31.84 ct, 9.90), which pass through it;
    # 141.08 is computed from both. The EUR 150 threshold is Olu's.
    truth={ENERGY: {frozenset({"meter:em-400217", "tariff:green-flex", "user:olu"})}},
    out_when={"meter:em-400217": {ENERGY}, "tariff:green-flex": {ENERGY},
              "user:olu": {ENERGY}})


# -- 5. the model sees only the last four messages (trim_messages) ------------------------------

STOCK = {"sku-77810": "SKU-77810 M8 hex bolts, zinc, box of 200: 42 boxes on hand, bin C-14 "
                      "(cycle count 2026-12-01 09:00)"}
SUPPLIERS = {"sku-77810": "SKU-77810 supplier Brennan Fasteners Ltd: lead time 14 days, "
                          "minimum order 100 boxes, EUR 18.40 per box"}
FORECASTS = {"sku-77810": "SKU-77810 forecast: 31 boxes/week in December (+12% on November)"}
COUNT = "SKU-77810: 42 boxes on hand in bin C-14, counted 1 Dec 2026 at 09:00"
REORDER = ("Reorder SKU-77810 from Brennan Fasteners Ltd: lead time 14 days, minimum 100 boxes "
           "at EUR 18.40 (EUR 1,840.00); December demand 31 boxes/week, up 12%")


@tool
def stock_level(sku: str) -> str:
    """The warehouse's stock of an item."""
    return STOCK[sku.strip().lower()]


@tool
def supplier_terms(sku: str) -> str:
    """The supplier, lead time and prices for an item."""
    return SUPPLIERS[sku.strip().lower()]


@tool
def sales_forecast(sku: str) -> str:
    """The demand forecast for an item."""
    return FORECASTS[sku.strip().lower()]


@tool
def save_inventory_note(key: str, text: str) -> str:
    """Save a note in the inventory log under a key ('count' or 'reorder')."""
    get_store().put(("inventory", "SKU-77810"), key, {"text": text})
    return "Noted."


def _reorder_window(runner: Runner) -> None:
    tools = [stock_level, supplier_terms, sales_forecast, save_inventory_note]
    model = scripted(
        call(("stock_level", {"sku": "SKU-77810"})),
        call(("save_inventory_note", {"key": "count", "text": COUNT})),
        call(("supplier_terms", {"sku": "SKU-77810"})),
        call(("sales_forecast", {"sku": "SKU-77810"})),
        call(("save_inventory_note", {"key": "reorder", "text": REORDER})),
        say("Logged the count and a reorder note for SKU-77810."))
    bound = model.bind_tools(tools)

    def agent(state: MessagesState) -> dict:
        window = trim_messages(state["messages"], max_tokens=4, token_counter=len,
                               strategy="last")
        system = SystemMessage("You are a warehouse assistant. Log counts and reorders.")
        return {"messages": [bound.invoke([system, *window])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    runner.invoke(graph, _user("Check SKU-77810, log the count, and note a reorder if we need "
                               "one."), {"configurable": {"user_id": "dara"}})


REORDER_WINDOW = Program(
    "reorder_window", "a model node shown only the last four messages (trim_messages): the "
    "count is saved in view; the reorder note is written after the count was trimmed away",
    _reorder_window, group=BLIND4,
    sources={"stock_level": SourceTool(source="stock:{sku}", kind="wms"),
             "supplier_terms": SourceTool(source="supplier:{sku}", kind="purchasing"),
             "sales_forecast": SourceTool(source="forecast:{sku}", kind="planning")},
    # The count restates the stock result. The reorder note is written at a call shown only
    # the supplier's and the forecast's turns (Dara's message and the stock result were
    # trimmed away): supplier, lead time, minimum, price (and 1,840.00 computed from them)
    # from the supplier terms; 31/week and +12% from the forecast. The SKU is in both.
    truth={COUNT: {frozenset({"stock:sku-77810"})},
           REORDER: {frozenset({"supplier:sku-77810", "forecast:sku-77810"})}},
    out_when={"stock:sku-77810": {COUNT}, "supplier:sku-77810": {REORDER},
              "forecast:sku-77810": {REORDER}})


# -- 6. langmem manage/search memory tools over two runs: a memory found and updated ------------

CALENDAR = {"2026-12-08": "Tue 8 Dec 2026\n14:30-15:15 Dentist - Dr. Okafor, Elm Street "
                          "Dental, 41 Elm Street\n18:00 Choir",
            "2026-12-09": "Wed 9 Dec 2026\n09:15-10:00 Dentist - Dr. Okafor (moved from "
                          "Tue 8 Dec by the practice)"}
WEATHER = {"bristol": "Bristol, Tue 8 Dec 2026: rain, 80% chance from 13:00, 6 °C, wind "
                      "SW 30 km/h"}
APPT = ("Dentist with Dr. Okafor at 41 Elm Street on Tue 8 Dec 2026 at 2:30 pm; 80% chance of "
        "rain and 6 °C in Bristol, so take the umbrella")
APPT_MOVED = "Dentist with Dr. Okafor at 41 Elm Street, moved to Wed 9 Dec 2026 at 9:15 am"


@tool
def calendar(day: str) -> str:
    """The user's calendar for a day (YYYY-MM-DD)."""
    return CALENDAR[day.strip()]


@tool
def weather(city: str) -> str:
    """Tomorrow's weather forecast for a city."""
    return WEATHER[city.strip().lower()]


def _memory_model(messages: list[BaseMessage]) -> Any:
    last = messages[-1]
    if last.type == "human" and "tomorrow" in _text(last):
        return call(("calendar", {"day": "2026-12-08"}), ("weather", {"city": "Bristol"}))
    if last.type == "human":
        return call(("search_memory", {"query": "dentist appointment"}),
                    ("calendar", {"day": "2026-12-09"}))
    if last.type == "tool" and last.name != "manage_memory":
        found = [m for m in messages if m.type == "tool" and m.name == "search_memory"]
        if not found:
            return call(("manage_memory", {"content": APPT, "action": "create"}))
        key = re.search(r'"key":\s*"([^"]+)"', _text(found[-1]))
        return call(("manage_memory", {"content": APPT_MOVED, "action": "update",
                                       "id": key.group(1)}))
    return say("Noted.")


def _dentist_memory(runner: Runner) -> None:
    from langmem import create_manage_memory_tool, create_search_memory_tool

    namespace = ("memories", "{user_id}")
    agent = create_react_agent(
        _policy(_memory_model),
        [calendar, weather, create_manage_memory_tool(namespace),
         create_search_memory_tool(namespace)],
        prompt="You are a personal assistant with long-term memory.", store=InMemoryStore())
    graph = runner.graph(agent)
    runner.invoke(graph, _user("what's on tomorrow? anything I should prepare for? remember it "
                               "for me"), {"configurable": {"user_id": "hana", "thread_id": "d1"}})
    runner.invoke(graph, _user("the practice just rang, they moved my appointment. update my "
                               "note"), {"configurable": {"user_id": "hana", "thread_id": "d2"}})


DENTIST_MEMORY = Program(
    "dentist_memory", "langmem manage/search memory tools over two runs: a calendar entry and "
    "a forecast read in one turn become a memory; the next run searches it and updates it",
    _dentist_memory, group=BLIND4,
    sources={"calendar": SourceTool(source="calendar:{day}", kind="calendar"),
             "weather": SourceTool(source="weather:{city}", kind="weather")},
    # The first memory: dentist, Dr. Okafor, 41 Elm Street, Tue 8 Dec, 14:30 (as 2:30 pm) from
    # the calendar; 80% rain, 6 °C, Bristol from the forecast. The update keeps 41 Elm Street,
    # which only the found memory states (the new day's calendar does not), and takes the new
    # day and 09:15 from the calendar of 9 Dec (which states the dentist and Dr. Okafor too).
    truth={APPT: {frozenset({"calendar:2026-12-08", "weather:bristol"})},
           APPT_MOVED: {frozenset({APPT, "calendar:2026-12-09"})}},
    out_when={"calendar:2026-12-08": {APPT, APPT_MOVED}, "weather:bristol": {APPT, APPT_MOVED},
              "calendar:2026-12-09": {APPT_MOVED}})


BLIND4_PROGRAMS: dict[str, Program] = {p.name: p for p in (
    AP_INVOICE, SUPPORT_RETRY, HEAT_PUMP, ENERGY_HANDOFF, REORDER_WINDOW, DENTIST_MEMORY)}

__all__ = ["BLIND4", "BLIND4_PROGRAMS"]
