"""The second blind programs of `rescind bench fidelity` (``group="blind2"``): six LangGraph
programs that nobody tunes the attribution against, written by someone who read neither the
attribution's rules nor how it matches values (only ``instrument``'s public API and
docs/wrapping.md), in shapes none of the other twenty programs has, the way public LangGraph
examples write them. Each has a scripted chat model and the truth about every memory it
writes, labelled by hand, before any run, from what the value actually uses.

How the labels are made (as for the blind group): a premise is an item the step that wrote the
value was shown, directly or through something the program or the model built from it (a prompt
that renders the state, a worker's summary, an executor's answer), and whose facts the value
states or computes from; the sources are named as the truth names them (a user's messages by
``user:{user_id}``, a tool's results by their source, a memory by its text). Items stating the
same fact are alternatives; different facts from different items are all needed; only minimal
sets. A message the program builds (a planner's or a replanner's prompt around the user's
objective) rests on what it was built from; the model's own earlier answers are not items.

1. ``plan_execute``: a plan-and-execute agent: a planner writes a plan memory (kind ``plan``),
   an executor (a prebuilt ReAct agent invoked inside a node) runs each step with its tools,
   a replanner answers from the past steps, and the outcome is saved.
2. ``supervisor``: ``langgraph_supervisor.create_supervisor`` over two worker agents with
   handoff tools: a researcher reads a company registry and a credit report (a dict), an
   account manager files the notes from the researcher's summary (the supervisor passes on
   only the worker's last message).
3. ``analytics``: a SQL agent whose query tool returns rows as a list of dicts, an FX tool,
   a data-quality note saved by a store tool, then a reflection loop (draft, critique,
   revise) whose revised report is saved.
4. ``expenses``: a travel-expense agent reading receipts in several currencies and renderings
   (``EUR 1.234,50``, ``£12.00``, ``twelve pounds fifty``); the receipt tool fails once and the
   model retries it (``ToolNode(handle_tool_errors=True)``).
5. ``crm``: a CRM agent in the memory-agent template's style (async nodes, memories rendered
   into the system prompt, an ``upsert_memory`` node of its own): a contact built from a
   business card, an e-mail and the user, then updated in a second thread from a new e-mail.
6. ``reminders``: a quickstart-style chatbot (``ToolNode``, ``tools_condition``, a
   checkpointer) over three invocations of one thread; the third sets reminders from the tool
   results of the first two.
"""

from __future__ import annotations

import json
import operator
import re
import uuid
from collections.abc import Callable, Iterator
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import InjectedStore, ToolNode, create_react_agent, tools_condition
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from rescind.middleware import SourceTool

from .fidelity_programs import Policy, Program, Runner, _user, call, one, say, scripted

BLIND2 = "blind2"


def _uid() -> str:
    return get_config()["configurable"]["user_id"]


@tool
def file_note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
    """File a note in the user's records."""
    store.put(("notes", _uid()), uuid.uuid5(uuid.NAMESPACE_URL, text).hex, {"text": text})
    return "filed"


# -- 1. plan-and-execute -------------------------------------------------------------------------

OBJECTIVE = ("Plan our team offsite in Porto, 14–16 May 2027 — we're 22 people, coming from "
             "Lisbon by train, budget is 9k euros all in. charge it to cost centre CC-4410 pls")
STEPS = ["Find venues in Porto for 22 people for two nights, 14-16 May 2027",
         "Find morning trains from Lisbon to Porto on 14 May 2027",
         "Pick the venue and the trains that keep the total under EUR 9,000"]
PLAN = ("Porto offsite, 14-16 May 2027, 22 people, budget EUR 9,000: "
        + "; ".join(f"{i}) {s}" for i, s in enumerate(STEPS, 1)))
VENUES = {"porto": "Venues in Porto for 14.05.2027-16.05.2027 (2 noites), groups of 20-30:\n"
                   "1) Casa do Rio - Ribeira | sala plenária 30 pax | 11 quartos duplos | pacote "
                   "7.480,00 EUR (pequeno-almoço incl.)\n2) Hotel Bolhão Central | sala 25 pax "
                   "| 12 quartos | pacote 9.960,00 EUR (IVA incluído)"}
TRAINS = {("lisboa", "porto"): "CP · Alfa Pendular · Lisboa Santa Apolónia → Porto Campanhã · "
                               "14/05/2027\nAP 121  06h39 → 09h32\nAP 123  08h39 → 11h27\n"
                               "AP 131  10h39 → 13h32\nTarifa 2.ª classe: 31,30 €/pessoa"}
OUTCOME = ("Porto offsite 14-16 May 2027 (22 people, cost centre CC-4410): Casa do Rio in "
           "Ribeira, 7,480.00 EUR for two nights with breakfast; train AP 123, Lisboa Santa "
           "Apolónia 8:39 am -> Porto Campanhã 11:27 am, 22 x 31.30 = 688.60 EUR; total "
           "8,168.60 EUR, within the 9,000 EUR budget")


@tool
def find_venues(city: str, check_in: str, nights: int) -> str:
    """Event venues with rooms for a group in a city."""
    return VENUES[city.strip().lower()]


@tool
def train_times(origin: str, destination: str, date: str) -> str:
    """Train departures between two cities on a day."""
    return TRAINS[(origin.strip().lower(), destination.strip().lower())]


class _PlanExecute(TypedDict):
    input: str
    plan: list[str]
    past_steps: Annotated[list[tuple[str, str]], operator.add]
    response: str


def _plan_execute(runner: Runner) -> None:
    model = scripted(
        say(json.dumps({"objective": PLAN.split(": 1)")[0], "steps": STEPS})),
        call(("find_venues", {"city": "Porto", "check_in": "2027-05-14", "nights": 2})),
        say("Casa do Rio (Ribeira) fits: plenary room for 30, 11 doubles, 7,480 EUR with "
            "breakfast. Hotel Bolhão Central is 9,960 EUR, over budget on its own."),
        say(json.dumps({"steps": STEPS[1:]})),
        call(("train_times", {"origin": "Lisboa", "destination": "Porto",
                              "date": "2027-05-14"})),
        say("AP 123 leaves Santa Apolónia at 08h39 and is in Campanhã at 11h27; 31,30 € a "
            "person in 2nd class."),
        say(json.dumps({"response": OUTCOME})))
    executor = create_react_agent(model, [find_venues, train_times],
                                  prompt="You are a helpful assistant.")

    def planner(state: _PlanExecute, *, store: BaseStore) -> dict:
        out = json.loads(model.invoke([
            ("system", "For the given objective, come up with a simple step by step plan. "
                       'Answer as JSON: {"objective": a one-line summary, "steps": [...]}'),
            ("user", state["input"])]).content)
        text = f"{out['objective']}: " + "; ".join(f"{i}) {s}"
                                                  for i, s in enumerate(out["steps"], 1))
        store.put(("offsites", _uid()), "porto-2027-plan", {"text": text, "kind": "plan"})
        return {"plan": out["steps"]}

    def execute_step(state: _PlanExecute) -> dict:
        plan = "\n".join(f"{i}. {step}" for i, step in enumerate(state["plan"], 1))
        task = state["plan"][0]
        done = executor.invoke({"messages": [("user", f"For the following plan:\n{plan}\n\nYou "
                                              f"are tasked with executing step 1, {task}.")]})
        return {"past_steps": [(task, done["messages"][-1].content)]}

    def replan(state: _PlanExecute) -> dict:
        past = "\n".join(f"{task}: {result}" for task, result in state["past_steps"])
        out = json.loads(model.invoke([("user", (
            f"Your objective was this:\n{state['input']}\n\nYour original plan was this:\n"
            + "\n".join(state["plan"]) + f"\n\nYou have currently done the follow steps:\n"
            f"{past}\n\nUpdate your plan accordingly. If no more steps are needed and you can "
            'return to the user, answer {"response": ...}, else {"steps": [...]}'))]).content)
        return {"response": out["response"]} if "response" in out else {"plan": out["steps"]}

    def save_outcome(state: _PlanExecute, *, store: BaseStore) -> dict:
        store.put(("offsites", _uid()), "porto-2027-outcome", {"text": state["response"]})
        return {}

    builder = StateGraph(_PlanExecute)
    builder.add_node("planner", planner)
    builder.add_node("agent", execute_step)
    builder.add_node("replan", replan)
    builder.add_node("save", save_outcome)
    builder.add_edge(START, "planner")
    builder.add_edge("planner", "agent")
    builder.add_edge("agent", "replan")
    builder.add_conditional_edges("replan", lambda s: "save" if s.get("response") else "agent",
                                  ["agent", "save"])
    builder.add_edge("save", END)
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    runner.invoke(graph, {"input": OBJECTIVE}, {"configurable": {"user_id": "dilnoza"}})


PLAN_EXECUTE = Program(
    "plan_execute", "plan-and-execute: a planner writes a plan memory, a ReAct executor invoked "
    "inside a node runs each step, a replanner answers from the past steps; outcome saved",
    _plan_execute, group=BLIND2,
    sources={"find_venues": SourceTool(source="venues:{city}", kind="venue_search"),
             "train_times": SourceTool(source="cp:{origin}-{destination}", kind="rail")},
    # The plan restates the user's objective. The outcome takes the venue and its price from
    # the venue search, the train, its times and fare from the timetable, and the head count,
    # budget and cost centre from the user's objective (in the replanner's prompt); the plan
    # states the head count and budget too, but not the cost centre: the user is needed anyway.
    truth={PLAN: one("user:dilnoza"),
           OUTCOME: one("venues:porto", "cp:lisboa-porto", "user:dilnoza")},
    out_when={"user:dilnoza": {PLAN, OUTCOME}, "venues:porto": {OUTCOME},
              "cp:lisboa-porto": {OUTCOME}})


# -- 2. a supervisor with two workers --------------------------------------------------------------

REGISTRY = {"923456789": "Enhetsregisteret · Organisasjonsnummer: 923 456 789\nNavn: NØRDLYS "
                         "FISKERI AS\nOrganisasjonsform: Aksjeselskap\nForretningsadresse: "
                         "Strandkaien 14, 5013 BERGEN\nDaglig leder: Siv Åsheim\n"
                         "Stiftelsesdato: 04.09.2019"}
CREDIT = {"923456789": {"company": "NØRDLYS FISKERI AS", "org_no": "923456789", "rating": "A2",
                        "limit_nok": 250000, "payment_remarks": 0, "as_of": "2026-11-30",
                        "bank_account": "NO93 8601 1117 947"}}
ACCOUNT = ("Nørdlys Fiskeri AS, org. no. 923456789, Strandkaien 14, 5013 Bergen; managing "
           "director Siv Åsheim; account owner Paulo; invoice in NOK, 30 days net")
CREDIT_NOTE = ("Nørdlys Fiskeri credit: rating A2, limit NOK 250,000 as of 30 Nov 2026, no "
               "payment remarks; pays from NO9386011117947")


@tool
def registry_lookup(org_number: str) -> str:
    """The Norwegian register of business enterprises' entry for an organisation number."""
    return REGISTRY[org_number.replace(" ", "")]


@tool
def credit_report(org_number: str) -> dict:
    """A credit agency's report on a company."""
    return CREDIT[org_number.replace(" ", "")]


def _supervisor(runner: Runner) -> None:
    from langgraph_supervisor import create_supervisor

    model = scripted(
        call(("transfer_to_company_researcher", {})),
        call(("registry_lookup", {"org_number": "923456789"}),
             ("credit_report", {"org_number": "923456789"})),
        say("Nørdlys Fiskeri AS (923 456 789): Strandkaien 14, 5013 Bergen, daglig leder Siv "
            "Åsheim, founded 2019. Credit A2, limit 250 000 NOK as of 30.11.2026, no remarks; "
            "bank account NO93 8601 1117 947."),
        call(("transfer_to_account_manager", {})),
        call(("file_note", {"text": ACCOUNT}), ("file_note", {"text": CREDIT_NOTE})),
        say("Both notes are filed."),
        say("Nørdlys Fiskeri is onboarded: registry and credit checked, notes filed."))
    researcher = create_react_agent(model, [registry_lookup, credit_report],
                                    name="company_researcher",
                                    prompt="You research companies. Use the registry and the "
                                           "credit agency; report the facts, nothing else.")
    manager = create_react_agent(model, [file_note], name="account_manager",
                                 prompt="You keep the customer records: file an account note "
                                        "and a credit note for each new customer.")
    workflow = create_supervisor(
        [researcher, manager], model=model,
        prompt="You are a team supervisor managing a company researcher and an account "
               "manager. For facts about a company use company_researcher; to file records "
               "use account_manager.")
    graph = runner.graph(workflow.compile(store=InMemoryStore()))
    runner.invoke(graph, _user("Onboard Nørdlys Fiskeri AS (org nr 923 456 789) as a customer "
                               "— I'll be the account owner. they want invoices in NOK, 30 "
                               "days. -Paulo"), {"configurable": {"user_id": "paulo"}})


SUPERVISOR = Program(
    "supervisor", "langgraph-supervisor over two ReAct workers with handoff tools; the filing "
    "worker is shown only the researcher's summary of two sources (one a dict)", _supervisor,
    group=BLIND2,
    sources={"registry_lookup": SourceTool(source="brreg:{org_number}", kind="registry"),
             "credit_report": SourceTool(source="credit:{org_number}", kind="credit_agency")},
    # The account note restates the registry (name, number, address, managing director) and
    # the user (owner, currency, terms); the credit note restates the credit report alone
    # (rating, limit, date, remarks, bank account), through the researcher's summary.
    truth={ACCOUNT: one("brreg:923456789", "user:paulo"), CREDIT_NOTE: one("credit:923456789")},
    out_when={"brreg:923456789": {ACCOUNT}, "user:paulo": {ACCOUNT},
              "credit:923456789": {CREDIT_NOTE}})


# -- 3. a SQL agent with a reflection loop ---------------------------------------------------------

ROWS = [{"region": "UK & Ireland", "currency": "GBP", "net_revenue": 182340.5, "orders": 1204},
        {"region": "DACH", "currency": "EUR", "net_revenue": 241118.0, "orders": 1580},
        {"region": "Polska", "currency": "PLN", "net_revenue": 611020.75, "orders": 2231},
        {"region": None, "currency": "EUR", "net_revenue": 1830.0, "orders": 7}]
RATES = {"2026-09-30": {"base": "EUR", "date": "2026-09-30",
                        "rates": {"GBP": 0.8562, "PLN": 4.2705, "CHF": 0.9371}}}
QUERY = ("SELECT region, currency, SUM(net_amount) AS net_revenue, COUNT(*) AS orders FROM "
         "orders WHERE quarter = '2026-Q3' GROUP BY region, currency")
DATA_NOTE = ("Sales warehouse, Q3 2026: 7 orders (1,830.00 EUR net) have no region; they are "
             "left out of the split by region")
REPORT = ("Q3 2026 net revenue in EUR (ECB rates of 30 Sep 2026): DACH €241k, UK & Ireland "
          "€213k (£182,340.50 at 0.8562), Polska €143k (611 020,75 zł at 4.2705); total €597k, "
          "€3k (0.5%) short of the €600k target")


@tool
def sql_db_query(query: str) -> list[dict]:
    """Run a read-only SQL query against the sales warehouse; rows as dicts."""
    return ROWS


@tool
def fx_rates(date: str) -> dict:
    """Euro reference exchange rates on a day."""
    return RATES[date]


class _Analysis(MessagesState):
    draft: str
    critique: str
    rounds: int


def _analytics(runner: Runner) -> None:
    model = scripted(
        call(("sql_db_query", {"query": QUERY})),
        call(("fx_rates", {"date": "2026-09-30"}), ("file_note", {"text": DATA_NOTE})),
        say("I have the rows and the rates; drafting the report."),
        say("Q3 2026: DACH €241k, UK & Ireland €213k; total €454k, well below the €600k "
            "target."),
        say("The Polska row is missing: 611,020.75 PLN at 4.2705 is about €143k, which "
            "changes the conclusion. Give the total with all three regions."),
        say(REPORT))
    tools = [sql_db_query, fx_rates, file_note]

    def analyst(state: _Analysis) -> dict:
        system = SystemMessage("You are an analyst with read access to the sales warehouse. "
                               "Query it, convert to EUR, and note data problems you find.")
        return {"messages": [model.bind_tools(tools).invoke([system, *state["messages"]])]}

    def draft(state: _Analysis) -> dict:
        text = model.invoke([SystemMessage("Write the report the user asked for, in three "
                                           "lines."), *state["messages"]]).content
        return {"draft": text, "rounds": 0}

    def reflect(state: _Analysis) -> dict:
        text = model.invoke([SystemMessage("You are a strict reviewer. Check the draft against "
                                           "the data in the conversation; list what to fix."),
                             *state["messages"], ("user", state["draft"])]).content
        return {"critique": text}

    def revise(state: _Analysis, *, store: BaseStore) -> dict:
        text = model.invoke([SystemMessage("Revise the report following the critique."),
                             *state["messages"], AIMessage(state["draft"]),
                             ("user", state["critique"])]).content
        store.put(("reports", _uid()), "q3-2026-revenue", {"text": text})
        return {"draft": text, "rounds": state["rounds"] + 1,
                "messages": [AIMessage(text)]}

    builder = StateGraph(_Analysis)
    builder.add_node("analyst", analyst)
    builder.add_node("tools", ToolNode(tools))
    builder.add_node("draft", draft)
    builder.add_node("reflect", reflect)
    builder.add_node("revise", revise)
    builder.add_edge(START, "analyst")
    builder.add_conditional_edges("analyst", tools_condition, {"tools": "tools", END: "draft"})
    builder.add_edge("tools", "analyst")
    builder.add_edge("draft", "reflect")
    builder.add_edge("reflect", "revise")
    builder.add_conditional_edges("revise", lambda s: END if s["rounds"] >= 1 else "reflect",
                                  ["reflect", END])
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    runner.invoke(graph, _user("what was Q3 2026 net revenue by region, in EUR? use the ECB "
                               "rate of 30 Sep, round to thousands. our Q3 target was €600k"),
                  {"configurable": {"user_id": "sipho"}})


ANALYTICS = Program(
    "analytics", "SQL agent: rows as a list of dicts, an FX tool returning a dict, a data note "
    "saved by a store tool; then draft, critique and revise, the revision saved", _analytics,
    group=BLIND2,
    sources={"sql_db_query": SourceTool(source="warehouse:sales", kind="warehouse"),
             "fx_rates": SourceTool(source="ecb:{date}", kind="fx")},
    # The data note restates the row without a region, and the quarter, which only the user
    # states (the rows do not; the query the model wrote is no part of the result). The report
    # converts the three regions' rows with the day's rates and compares with the user's target.
    truth={DATA_NOTE: one("warehouse:sales", "user:sipho"),
           REPORT: one("warehouse:sales", "ecb:2026-09-30", "user:sipho")},
    out_when={"warehouse:sales": {DATA_NOTE, REPORT}, "ecb:2026-09-30": {REPORT},
              "user:sipho": {DATA_NOTE, REPORT}})


# -- 4. travel expenses, a receipt tool that fails once --------------------------------------------

RECEIPTS = {
    "RC-7781": "HÔTEL LE LIÈVRE D'OR ★★★ · 12 rue Mercière, 69002 Lyon\nFacture n° F2026-1187 · "
               "Mme N. ADEYEMI\nSéjour du 23/11/2026 au 25/11/2026 (2 nuits)\nTotal TTC : EUR "
               "1.234,50 · dont TVA 10 % : 112,23 · Réglé CB",
    "RC-7782": "SNCF Voyageurs · e-billet · TGV INOUI 6620\nLyon Part-Dieu 25.11.2026 17:04 → "
               "Paris Gare de Lyon 19:00\nPrix : 89,00 €",
    "RC-7790": "LONDON BLACK CAB · Licence 84410\n26 Nov 26  18:42\nKing's Cross St Pancras -> "
               "Shoreditch\nFARE £12.00  TIP £0.00  TOTAL £12.00",
    "N-12": "Note to expenses (receipt lost): dinner with the Brightwater client at Dishoom "
            "Shoreditch on the 26th, my share was twelve pounds fifty. - Ngozi"}
CLAIM_EUR = ("Claim BW-311, Lyon 23-25 Nov 2026: Hôtel Le Lièvre d'Or, invoice F2026-1187, 2 "
             "nights, 1,234.50 EUR; TGV 6620 Lyon Part-Dieu - Paris Gare de Lyon on 25 Nov, "
             "89.00 EUR; EUR total 1,323.50")
CLAIM_GBP = ("Claim BW-311, London 26 Nov 2026: black cab King's Cross - Shoreditch, £12.00; "
             "dinner with Brightwater at Dishoom (receipt lost, own note), £12.50; GBP total "
             "£24.50")
PAYOUT = "Reimburse Ngozi Adeyemi for claim BW-311 to IBAN DE89370400440532013000"


def _expenses(runner: Runner) -> None:
    tries: dict[str, int] = {}

    @tool
    def read_receipt(receipt_id: str) -> str:
        """The text of a scanned receipt or note in the expense system (OCR)."""
        key = receipt_id.strip().upper()
        tries[key] = tries.get(key, 0) + 1
        if key == "RC-7781" and tries[key] == 1:
            raise TimeoutError("OCR service did not answer within 10 s")
        return RECEIPTS[key]

    model = scripted(
        call(("read_receipt", {"receipt_id": "RC-7781"}), ("read_receipt", {"receipt_id":
                                                                            "RC-7782"})),
        call(("read_receipt", {"receipt_id": "RC-7781"}), ("read_receipt", {"receipt_id":
                                                                            "RC-7790"}),
             ("read_receipt", {"receipt_id": "n-12"})),
        call(("file_note", {"text": CLAIM_EUR}), ("file_note", {"text": CLAIM_GBP}),
             ("file_note", {"text": PAYOUT})),
        say("Filed: 1,323.50 EUR and £24.50 under BW-311, to be paid to your DE89 account."))
    tools = [read_receipt, file_note]

    def clerk(state: MessagesState) -> dict:
        system = SystemMessage("You file travel expenses. Read every receipt, one claim line "
                               "per currency, and the payout instruction.")
        return {"messages": [model.bind_tools(tools).invoke([system, *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("clerk", clerk)
    builder.add_node("tools", ToolNode(tools, handle_tool_errors=True))
    builder.add_edge(START, "clerk")
    builder.add_conditional_edges("clerk", tools_condition)
    builder.add_edge("tools", "clerk")
    graph = runner.graph(builder.compile(store=InMemoryStore()))
    runner.invoke(graph, _user("hi! please file my expenses for the Lyon/London trip (23-26 "
                               "Nov): receipts RC-7781, RC-7782, RC-7790 and my note N-12 for "
                               "the dinner (lost the receipt). project BW-311. reimburse to DE89 "
                               "3704 0044 0532 0130 00 please - Ngozi Adeyemi"),
                  {"configurable": {"user_id": "ngozi"}})


EXPENSES = Program(
    "expenses", "travel expenses: receipts in several currencies and renderings; the receipt "
    "tool fails once (handle_tool_errors) and is retried; three claim lines filed in one turn",
    _expenses, group=BLIND2,
    sources={"read_receipt": SourceTool(source="receipts:{receipt_id}", kind="receipt")},
    # Each claim line restates its two receipts and the user's project code; the payout is the
    # user's alone (name, IBAN, project).
    truth={CLAIM_EUR: one("receipts:rc-7781", "receipts:rc-7782", "user:ngozi"),
           CLAIM_GBP: one("receipts:rc-7790", "receipts:n-12", "user:ngozi"),
           PAYOUT: one("user:ngozi")},
    out_when={"receipts:rc-7781": {CLAIM_EUR}, "receipts:rc-7782": {CLAIM_EUR},
              "receipts:rc-7790": {CLAIM_GBP}, "receipts:n-12": {CLAIM_GBP},
              "user:ngozi": {CLAIM_EUR, CLAIM_GBP, PAYOUT}})


# -- 5. a CRM agent in the memory-agent template's style -------------------------------------------

CARDS = {"0193": "Dr. ŁUKASZ WIŚNIEWSKI\nHead of Bioprocess\nBALTIC BIOTECH S.A.\nul. Trzy Lipy "
                 "3 · 80-172 Gdańsk · Poland\nT +48 58 123 45 67\nE l.wisniewski@balticbio.pl"}
MAILS = {"7f3a": "From: Lukasz Wisniewski <L.Wisniewski@BalticBio.PL>\nDate: Tue, 1 Dec 2026 "
                 "17:52:10 +0100\nSubject: pilot batch - follow-up\n\nDear Rafa, great meeting "
                 "you in Munich! I'll send the pilot batch data next week.\n\nBest regards,\n"
                 "Łukasz\n--\nmob. 0048 601-234-567",
         "91c2": "From: l.wisniewski@balticbio.pl\nDate: Thu, 3 Dec 2026 08:05:44 +0100\n"
                 "Subject: new number\n\nHi Rafa, from Monday my mobile is +48 512 987 650; the "
                 "601 number will be switched off. Ł."}
CONTACT_1 = ("Dr Łukasz Wiśniewski - Head of Bioprocess, Baltic Biotech S.A. (ul. Trzy Lipy 3, "
             "80-172 Gdańsk); mobile +48 601 234 567, office +48 58 123 45 67, "
             "l.wisniewski@balticbio.pl; met Rafa at BIO-Europe in Munich")
CONTACT_2 = ("Dr Łukasz Wiśniewski - Head of Bioprocess, Baltic Biotech S.A. (ul. Trzy Lipy 3, "
             "80-172 Gdańsk); mobile +48 512 987 650 from Mon 7 Dec 2026 (the 601 number is "
             "switched off), office +48 58 123 45 67, l.wisniewski@balticbio.pl; met Rafa at "
             "BIO-Europe in Munich; prefers calls after 15:00 CET")


@tool
def read_card_scan(scan_id: str) -> str:
    """The OCR text of a scanned business card."""
    return CARDS[scan_id]


@tool
def read_email(message_id: str) -> str:
    """An e-mail from the user's inbox, headers and body."""
    return MAILS[message_id]


def _turns(*turns: AIMessage | Callable[[list[BaseMessage]], AIMessage]) -> Policy:
    """A script whose turns may depend on what the model is shown (an id it must repeat)."""
    left: Iterator = iter(turns)

    def decide(messages: list[BaseMessage]) -> AIMessage:
        turn = next(left)
        return turn if isinstance(turn, AIMessage) else turn(messages)

    return Policy(messages=iter(()), decide=decide)


def _update_contact(messages: list[BaseMessage]) -> AIMessage:
    key = re.search(r"\[([0-9a-f-]{36})\]", str(messages[0].content))
    return call(("upsert_memory", {"content": CONTACT_2, "context": "contact card",
                                   "memory_id": key.group(1) if key else None}))


def _crm(runner: Runner) -> None:
    model = _turns(
        call(("read_card_scan", {"scan_id": "0193"}), ("read_email", {"message_id": "7f3a"})),
        call(("upsert_memory", {"content": CONTACT_1, "context": "contact card"})),
        say("Added Łukasz to your contacts."),
        call(("read_email", {"message_id": "91c2"})), _update_contact,
        say("Updated: his new mobile works from Monday."))
    tools = [read_card_scan, read_email]

    async def call_model(state: MessagesState, config: RunnableConfig, *,
                         store: BaseStore) -> dict:
        user = config["configurable"]["user_id"]
        memories = await store.asearch(("memories", user), limit=10)
        known = "\n".join(f"[{m.key}]: {m.value['content']}" for m in memories)
        system = ("You are a helpful CRM assistant. Keep one memory per contact with "
                  f"upsert_memory.\n\n<memories>\n{known}\n</memories>")
        reply = await model.bind_tools(tools).ainvoke([SystemMessage(system),
                                                       *state["messages"]])
        return {"messages": [reply]}

    async def upsert_memory(content: str, context: str, *, memory_id: str | None = None,
                            user_id: str, store: BaseStore) -> str:
        mem_id = memory_id or str(uuid.uuid4())
        await store.aput(("memories", user_id), key=mem_id,
                         value={"content": content, "context": context})
        return f"Stored memory {mem_id}"

    async def store_memory(state: MessagesState, config: RunnableConfig, *,
                           store: BaseStore) -> dict:
        calls = state["messages"][-1].tool_calls
        saved = [await upsert_memory(**tc["args"], user_id=config["configurable"]["user_id"],
                                     store=store) for tc in calls]
        return {"messages": [{"role": "tool", "content": s, "tool_call_id": tc["id"]}
                             for tc, s in zip(calls, saved, strict=True)]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        if not last.tool_calls:
            return END
        return "store_memory" if last.tool_calls[0]["name"] == "upsert_memory" else "tools"

    builder = StateGraph(MessagesState)
    builder.add_node("call_model", call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_node("store_memory", store_memory)
    builder.add_edge(START, "call_model")
    builder.add_conditional_edges("call_model", route, ["tools", "store_memory", END])
    builder.add_edge("tools", "call_model")
    builder.add_edge("store_memory", "call_model")
    graph = runner.graph(builder.compile(checkpointer=InMemorySaver(), store=InMemoryStore()))
    for thread, said in (("crm-1", "add Dr Łukasz Wiśniewski (Baltic Biotech) to my contacts - I "
                                   "scanned his card (scan 0193) and he mailed me yesterday, msg "
                                   "id 7f3a. we met at BIO-Europe in Munich"),
                         ("crm-2", "Łukasz sent a new mobile number this morning (msg 91c2), "
                                   "please update his contact. he prefers calls after 3pm CET")):
        runner.ainvoke_all([(graph, _user(said),
                             {"configurable": {"user_id": "rafa", "thread_id": thread}})])


CRM = Program(
    "crm", "memory-agent style CRM (async nodes, memories in the system prompt, its own upsert "
    "node): a contact from a card, a mail and the user, updated in a new thread from a mail",
    _crm, group=BLIND2,
    sources={"read_card_scan": SourceTool(source="cardscan:{scan_id}", kind="card_scan"),
             "read_email": SourceTool(source="mail:{message_id}", kind="email")},
    # The first contact takes the title, address and office line from the card, the mobile
    # from the first mail's signature (the e-mail address both state), the meeting from the
    # user. The update is shown the first contact (in the prompt), the second mail (new mobile,
    # from which Monday) and the user (call hours); the card and first mail are not shown.
    truth={CONTACT_1: one("cardscan:0193", "mail:7f3a", "user:rafa"),
           CONTACT_2: one(CONTACT_1, "mail:91c2", "user:rafa")},
    out_when={"cardscan:0193": {CONTACT_1, CONTACT_2}, "mail:7f3a": {CONTACT_1, CONTACT_2},
              "mail:91c2": {CONTACT_2}, "user:rafa": {CONTACT_1, CONTACT_2}})


# -- 6. a reminder agent over three invocations of one thread ----------------------------------------

PASSPORTS = {"C4X9R2L7T": "Reisepass Nr. C4X9R2L7T · Inhaber: Jonas Brückner · gültig bis "
                          "14.03.2027 · ausgestellt von Stadt Köln (Bürgeramt Ehrenfeld)"}
VEHICLES = {"K-RX 4410": "Fahrzeug K-RX 4410 (VW Golf VIII) · nächste Hauptuntersuchung: "
                         "05/2027 · letzte HU: 12.05.2025, Prüfstelle DEKRA Köln-Ost"}
REMIND_PASSPORT = ("Sun 17 Jan 2027, 9.30 am: renew passport C4X9R2L7T (valid until "
                   "14.03.2027; issued by Bürgeramt Ehrenfeld, Köln) - bring two biometric "
                   "photos")
REMIND_CAR = ("Sat 6 Mar 2027, 09:30: book the TÜV (HU) for the VW Golf K-RX 4410 - due "
              "05/2027, last done 12.05.2025 at DEKRA Köln-Ost")


@tool
def passport_status(number: str) -> str:
    """The validity of a German passport, from the citizens' office."""
    return PASSPORTS[number.strip().upper()]


@tool
def vehicle_inspection(plate: str) -> str:
    """When a car's next roadworthiness inspection (HU) is due."""
    return VEHICLES[" ".join(plate.upper().split())]


@tool
def set_reminder(text: str, due: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Set a reminder for the user at a date and time (ISO 8601)."""
    store.put(("reminders", _uid()), uuid.uuid5(uuid.NAMESPACE_URL, text).hex,
              {"text": text, "due": due})
    return f"reminder set for {due}"


class _Chat(TypedDict):
    messages: Annotated[list, add_messages]


def _reminders(runner: Runner) -> None:
    model = scripted(
        call(("passport_status", {"number": "C4X9R2L7T"})),
        say("Your passport C4X9R2L7T is valid until 14 March 2027."),
        call(("vehicle_inspection", {"plate": "K-RX 4410"})),
        say("The next HU for K-RX 4410 is due in May 2027."),
        call(("set_reminder", {"text": REMIND_PASSPORT, "due": "2027-01-17T09:30:00+01:00"}),
             ("set_reminder", {"text": REMIND_CAR, "due": "2027-03-06T09:30:00+01:00"})),
        say("Both reminders are set: 17 January and 6 March, 9:30."))
    tools = [passport_status, vehicle_inspection, set_reminder]
    llm_with_tools = model.bind_tools(tools)

    def chatbot(state: _Chat) -> dict:
        return {"messages": [llm_with_tools.invoke(state["messages"])]}

    builder = StateGraph(_Chat)
    builder.add_node("chatbot", chatbot)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "chatbot")
    builder.add_conditional_edges("chatbot", tools_condition)
    builder.add_edge("tools", "chatbot")
    graph = runner.graph(builder.compile(checkpointer=InMemorySaver(), store=InMemoryStore()))
    jonas = {"configurable": {"user_id": "jonas", "thread_id": "jonas-admin"}}
    for said in ("when does my passport run out? number C4X9R2L7T",
                 "and when is the TÜV due for my car, K-RX 4410?",
                 "set me reminders for both, eight weeks before, at half past nine in the "
                 "morning. for the passport I also need two biometric photos, put that in"):
        runner.invoke(graph, _user(said), jonas)


REMINDERS = Program(
    "reminders", "quickstart chatbot with a checkpointer, three invocations on one thread: the "
    "third sets reminders from the first's and the second's tool results", _reminders,
    group=BLIND2,
    sources={"passport_status": SourceTool(source="passport:{number}", kind="citizens_office"),
             "vehicle_inspection": SourceTool(source="vehicles:{plate}", kind="vehicle_registry")},
    # Each reminder restates its tool result (restored from the thread) and computes its date
    # eight weeks before the due date, at the time and with the photos the user asked for.
    truth={REMIND_PASSPORT: one("passport:c4x9r2l7t", "user:jonas"),
           REMIND_CAR: one("vehicles:k-rx 4410", "user:jonas")},
    out_when={"passport:c4x9r2l7t": {REMIND_PASSPORT}, "vehicles:k-rx 4410": {REMIND_CAR},
              "user:jonas": {REMIND_PASSPORT, REMIND_CAR}})


BLIND2_PROGRAMS: dict[str, Program] = {p.name: p for p in (
    PLAN_EXECUTE, SUPERVISOR, ANALYTICS, EXPENSES, CRM, REMINDERS)}

__all__ = ["BLIND2", "BLIND2_PROGRAMS"]
