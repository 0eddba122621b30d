// The Rescind console: plain DOM, no framework, no build step.
// Everything that came from the graph is put on the page with textContent or setAttribute,
// never parsed as HTML: memory texts are written by agents reading untrusted sources.
// People see labels (labels.js): a payment as "Pay Acme 12,000.00 USD to account …", a source
// by its name; ids only in a memory's details.

import * as L from "./labels.js";

const $ = (sel) => document.querySelector(sel);
const SVG = "http://www.w3.org/2000/svg";
const POLL_MS = 1000;
const GATE_LIMIT = 200;
const state = { token: null, me: null, tab: "overview", rev: null, preview: null, recall: null,
  gates: null, gatesKey: null, sources: new Map(), retractions: new Map(), saidBy: new Map(),
  mems: new Map(), search: null, asof: null };

// -- small helpers ------------------------------------------------------------------------------
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "onclick") node.addEventListener("click", v);
    else node.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svg(tag, attrs = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  return node;
}

const num = L.num;
// A text whose references (INV-1001, PAY-0001) never wrap at their hyphen: each in a span.
const whole = (text) => String(text).split(/([A-Za-z]+-[\w-]+)/).map((part, i) =>
  (i % 2 ? el("span", { class: "nowrap" }, part) : part));
const short = L.short;
const badge = (status) => el("span", { class: `badge ${status === "OUT" ? "out" : "in"}` },
  status || "?");
const base = () => (state.me && state.me.currency) || "USD";
const policy = () => (state.me && state.me.gate) || { threshold: 10000, min_domains: 2, currency: base() };
const allSources = () => [...state.sources.values()];
const amountOf = (m) => L.amount(m.amount, m.currency, base());
const sourceLabel = (id) => L.source(state.sources.get(id) || { id });
// A memory's one-line title: a payment's label, else the first line of its text.
const titleOf = (m) => L.title(m, base());

function say(text) { $("#message").textContent = text; $("#error").textContent = ""; }
function fail(err) { $("#error").textContent = err.message || String(err); }

class ApiError extends Error {
  constructor(status, detail, body = {}) { super(detail); this.status = status; this.body = body; }
}

async function api(path, { method = "GET", body = null } = {}) {
  const headers = { Authorization: `Bearer ${state.token}` };
  if (body !== null) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === null ? null : JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    if (res.status === 401 && state.me) signOut("Your token is no longer valid; sign in again.");
    const detail = typeof data.detail === "string" ? data.detail : `HTTP ${res.status}`;
    throw new ApiError(res.status, detail, data);
  }
  return data;
}

const T = (path) => `/api/v1/tenants/${encodeURIComponent(state.me.tenant)}${path}`;

// What a person asked for last wins over what a refresh, started earlier, brings back late:
// a person's request takes a new ticket (``ask``); a refresh keeps the current one (``keep``)
// and draws nothing if another was taken while it waited.
const tickets = { detail: 0, search: 0, asof: 0 };
const ask = (what) => ++tickets[what];
const keep = (what) => tickets[what];
const stale = (what, t) => tickets[what] !== t;
const ref = (id) => encodeURIComponent(id);

// -- sign in and out ----------------------------------------------------------------------------
async function signIn(token) {
  state.token = token;
  const me = await api("/api/v1/me");
  if (!me.tenant || !["viewer", "security", "finance"].includes(me.role)) {
    state.token = null;
    throw new Error(`The console is for viewer, security and finance tokens; this one is ${me.role}.`);
  }
  state.me = me;
  sessionStorage.setItem("rescind-token", token);
  $("#tenant").textContent = me.tenant;
  $("#who").textContent = me.who;
  $("#role").textContent = me.role;
  document.body.dataset.role = me.role;
  for (const b of document.querySelectorAll("nav button[data-needs]")) {
    b.hidden = b.dataset.needs !== me.role;
  }
  $("#signin-view").hidden = true;
  $("#session").hidden = false;
  $("#app").hidden = false;
  state.rev = null;
  for (const z of document.querySelectorAll(".zone-name")) z.textContent = `${L.zone()}, ${L.zoneAbbr()}`;
  // Each role lands on its work: finance on the recalls to decide, security on what needs it.
  show({ finance: "recalls", security: "todo" }[me.role] || "overview");
}

function signOut(note = "") {
  sessionStorage.removeItem("rescind-token");
  Object.assign(state, { token: null, me: null, rev: null, preview: null, recall: null, gates: null,
    gatesKey: null, search: null, asof: null });
  state.sources.clear();
  state.mems.clear();
  state.retractions.clear();
  delete document.body.dataset.role;
  $("#app").hidden = true;
  $("#session").hidden = true;
  $("#detail").hidden = true;
  $("#signin-view").hidden = false;
  $("#token").value = "";
  $("#signin-error").textContent = note;
}

// -- tabs and live refresh ----------------------------------------------------------------------
const views = { todo: loadTodo, overview: loadOverview, search: loadSearch, asof: loadAsOf,
  retract: loadRetractions, recalls: loadRecalls, payments: loadPayments, gate: loadGates,
  audit: loadAudit };

function show(tab) {
  state.tab = tab;
  for (const b of document.querySelectorAll("nav button")) b.classList.toggle("active", b.dataset.tab === tab);
  for (const s of document.querySelectorAll("section.tab")) s.hidden = s.id !== tab;
  refresh();
}

async function refresh() {
  if (!state.me) return;
  try {
    await loadContext();
    await views[state.tab]();
    await reopenDetail();
  } catch (err) { fail(err); }
}

// What labels need on every tab: the sources (names, trust domains, when read, retracted) and
// the retractions (an OUT memory's cause, in words).
async function loadContext() {
  const [sources, rows] = await Promise.all([api(T("/sources")), api(T("/retractions"))]);
  state.sources = new Map(sources.map((s) => [s.id, s]));
  state.retractions = new Map(rows.map((r) => [r.id, r]));
}

async function reopenDetail() {
  const aside = $("#detail");
  if (aside.hidden) return;
  if (aside.dataset.asof) await openAsOfMemory(aside.dataset.id, JSON.parse(aside.dataset.asof), false);
  else if (aside.dataset.source) openSource(aside.dataset.source);
  else if (aside.dataset.id) await openDetail(aside.dataset.id, false);
}

async function poll() {
  if (!state.me) return;
  try {
    const { revision } = await api(T("/revision"));
    $("#live").classList.remove("stale");
    const moved = state.rev !== null && revision !== state.rev;
    state.rev = revision;
    $("#rev").textContent = revision;
    if (moved) await refresh();
    // The gate keeps its decisions without moving the revision: the Gate tab asks for them.
    else if (state.tab === "gate" && await loadGates(false)) await reopenDetail();
  } catch (err) {
    $("#live").classList.add("stale");
  }
}

// -- overview: sources → observations → beliefs → plans → actions --------------------------------
const KIND_WORDS = { observation: "observations", belief: "notes", plan: "plans",
  action: "payments and actions", answer: "answers" };

async function loadOverview() {
  const o = await api(T("/overview"));
  const parts = Object.entries(o.counts).map(([k, c]) =>
    `${KIND_WORDS[k] || k}: ${c.IN} IN, ${c.OUT} OUT`);
  $("#counts-line").textContent = parts.join(" · ") + (o.truncated ? " (first 200 of each kind)" : "");
  const lists = {};
  for (const col of document.querySelectorAll("#overview .column")) {
    lists[col.dataset.kind] = col.querySelector("ul");
    lists[col.dataset.kind].replaceChildren();
  }
  for (const s of o.sources) state.sources.set(s.id, { ...state.sources.get(s.id), ...s });
  state.saidBy = new Map();
  for (const link of o.links) {
    if (!state.sources.has(link.from)) continue;
    state.saidBy.set(link.to, [...(state.saidBy.get(link.to) || []), link.from]);
  }
  for (const s of state.sources.values()) lists.source.append(sourceCard(s));
  for (const kind of ["observation", "belief", "plan", "action", "answer"]) {
    for (const m of o.columns[kind] || []) {
      state.mems.set(m.id, m);
      lists[kind === "answer" ? "action" : kind].append(card(m));
    }
  }
  state.links = o.links;
  if (state.rev === null) { state.rev = o.revision; $("#rev").textContent = o.revision; }
}

function reads(s) {
  if (!s.first_read) return "never read";
  const range = s.first_read === s.last_read ? `read ${L.time(s.first_read)}`
    : `read ${L.time(s.first_read)} – ${L.time(s.last_read)}`;
  return `${range} · ${s.observations} observation(s)`;
}

const windowText = (r) => (r.from || r.to ? `${r.from ? L.time(r.from) : "the beginning"} → ` +
  `${r.to ? L.time(r.to) : "now and later"}` : "all time");

function sourceCard(s) {
  const li = el("li", { class: `card source${s.retracted ? " is-retracted" : ""}`, "data-id": s.id,
    "data-retracted": String(Boolean(s.retracted)), tabindex: 0, role: "button",
    "aria-label": `Source ${L.source(s)}` },
  el("div", { class: "head" }, el("strong", { class: "name" }, L.source(s)),
    s.retracted ? el("span", { class: "badge out retracted" }, "retracted") : null),
  el("div", { class: "meta domain" }, `trust domain ${s.domain}`),
  el("div", { class: "meta reads" }, reads(s)),
  ...(s.retractions || []).map((r) => el("div", { class: "meta retracted-window" },
    `retracted ${windowText(r)}`)));
  li.addEventListener("click", () => openSource(s.id));
  li.addEventListener("keydown", (e) => { if (e.key === "Enter") openSource(s.id); });
  return li;
}

// Why a memory is OUT, in words: the retraction's reason (its id is in the details).
function outBecause(m) {
  const r = state.retractions.get(m.cause);
  const what = r ? (r.reason || `${r.kind} of ${r.source ? sourceLabel(r.source) : "a memory"}`)
    : m.cause || "a retraction";
  const hops = m.hops === null || m.hops === undefined ? ""
    : m.hops === 0 ? " (what the source said)" : `, ${m.hops} step(s) from the source`;
  return `OUT because: ${short(what, 120)}${hops}`;
}

function card(m) {
  const tags = [];
  if (m.kind === "action" && m.amount !== null && m.amount !== undefined) {
    if (m.status === "OUT") tags.push(el("span", { class: "tag" }, m.executed ? "to recall" : "held"));
    else tags.push(el("span", { class: "tag quiet" }, m.executed ? "executed" : "pending"));
  }
  const isAction = m.kind === "action";
  const a = isAction ? L.action(m, base()) : null;
  const from = (state.saidBy.get(m.id) || []).map(sourceLabel).join(", ");
  const li = el("li", { class: `card ${m.status === "OUT" ? "is-out" : ""}`, "data-id": m.id,
    "data-name": m.name, "data-status": m.status, tabindex: 0, role: "button",
    "aria-label": `${L.kind(m.kind)}: ${short(titleOf(m), 120)}`, title: isAction ? null : m.text },
  el("div", { class: "head" }, badge(m.status), el("span", { class: "kind" }, L.kind(m.kind)), ...tags),
  isAction ? el("div", { class: "name" }, a.label) : null,
  el("div", { class: "text" }, isAction ? a.facts.join(" · ") : short(m.text, 140)),
  el("div", { class: "meta" }, [isAction ? null : L.origin(m, from), L.time(m.at)]
    .filter(Boolean).join(" · ")),
  m.status === "OUT" ? el("div", { class: "meta why-out" }, outBecause(m)) : null);
  li.addEventListener("click", () => openDetail(m.id));
  li.addEventListener("keydown", (e) => { if (e.key === "Enter") openDetail(m.id); });
  return li;
}

// -- the details drawer: one memory, its reasons, its timeline; one source ----------------------
function resetDetail(id) {
  const aside = $("#detail");
  aside.dataset.id = id;
  delete aside.dataset.asof;
  delete aside.dataset.source;
  aside.hidden = false;
  for (const part of ["#detail-memory", "#detail-timeline", "#detail-gate", "#detail-decide"]) {
    $(part).hidden = true;
  }
  return aside;
}

function idList(pairs) {
  $("#ids").replaceChildren(...pairs.filter(([, v]) => v !== null && v !== undefined && v !== "")
    .flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))]));
}

// ``missing`` is called instead of failing when there is no such memory (a gate decision about
// a payment the graph does not hold).
async function openDetail(id, reset = true, missing = null) {
  const t = reset ? ask("detail") : keep("detail");
  try {
    const [d, h] = await Promise.all([api(T(`/memories/${ref(id)}`)), api(T(`/memories/${ref(id)}/history`))]);
    if (stale("detail", t)) return;
    const aside = resetDetail(id);
    const m = d.memory;
    state.mems.set(m.id, m);
    const from = (state.saidBy.get(m.id) || []).map(sourceLabel).join(", ");
    $("#detail-title").replaceChildren(badge(m.status), " ", `${L.kind(m.kind)}: ${short(titleOf(m), 140)}`);
    const facts = [];
    if (m.kind === "action") {
      const a = L.action(m, base());
      facts.push(a.label);
      facts.push([a.vendor && `vendor ${a.vendor}`, a.invoice && `invoice ${a.invoice}`,
        a.sum && `amount ${a.sum}`, a.account && `account ${a.account}`].filter(Boolean).join(" · "));
      facts.push([a.tool && `tool ${a.tool}`, m.agent && `agent ${L.agent(m.agent)}`,
        m.executed ? "executed" : "not executed"].filter(Boolean).join(" · "));
    } else {
      facts.push([L.origin(m, from), L.time(m.at)].filter(Boolean).join(" · "));
    }
    if (m.status === "OUT") facts.push(outBecause(m));
    if (m.kind === "action" && m.status === "OUT") {
      facts.push(m.executed ? "Next: finance decides on its recall (Recalls tab); nothing reaches " +
        "the bank until a recall is approved and exported." : nextStep({ held: true, cause: m.cause }));
    }
    const trace = traceLink(m.trace);
    if (trace) facts.push(trace);
    $("#detail-facts").replaceChildren(...facts.flatMap((f, i) => (i ? [el("br"), f] : [f])));
    // An action's recorded tool call (``pay_invoice({…})``) is in its ids and details only.
    const call = m.kind === "action" && L.toolCall(m.text);
    $("#detail-text").textContent = call ? "" : m.text || "";
    $("#detail-text").hidden = Boolean(call);
    $("#detail-why").replaceChildren(...whyLines(d.tree));
    $("#tree").replaceChildren(treeNode(d.tree, indexTree(d.tree)));
    $("#history").replaceChildren(...h.history.map(historyItem));
    $("#detail-memory").hidden = false;
    $("#timeline-title").textContent = "Timeline of the payment";
    $("#detail-timeline").hidden = !h.timeline;
    $("#timeline").replaceChildren(...(h.timeline || []).map(stepItem));
    // An action's history carries every time the gate was asked about it, oldest first.
    $("#detail-gate").hidden = !h.gate;
    $("#gate-history").replaceChildren(...(h.gate || []).map(gateItem));
    if (h.gate && !h.gate.length) $("#gate-history").append(el("li", { class: "note" }, "The gate was never asked about it."));
    $("#detail-decide").hidden = state.me.role !== "security" || m.status !== "IN";
    idList([["id", m.id], ["name", m.name], ["kind", m.kind], ["agent", m.agent],
      ["payee", m.payee], ["account", m.account], ["currency", m.currency],
      ["cause", m.cause], ["trace", m.trace], ["recorded call", call ? m.text : null]]);
    if (reset) { aside.scrollTop = 0; $("#ids-box").open = false; }
  } catch (err) {
    if (stale("detail", t)) return;
    if (err.status === 404 && missing) missing(); else fail(err);
  }
}

function historyItem(e) {
  const OPS = { write: "written", retract: "retraction", reinstate: "reinstated",
    withdraw: "withdrawn", correct: "corrected", superseded: "superseded", deleted: "deleted" };
  const r = state.retractions.get(e.cause || e.by);
  return el("li", {}, badge(e.status), ` ${OPS[e.op] || e.op}`, e.at ? ` · ${L.time(e.at)}` : "",
    r && r.reason ? ` · ${short(r.reason, 100)}` : (e.cause ? ` · ${e.cause}` : ""),
    e.hops !== null && e.hops !== undefined ? ` · ${e.hops} step(s) away` : "",
    el("span", { class: "meta" }, ` (revision ${e.rev})`));
}

const STEP_WORDS = { proposed: "Proposed", gate: "Gate", executed: "Executed", held: "Held",
  "recall drafted": "Recall drafted", "recall approved": "Recall approved", "back IN": "Back IN",
  "recall rejected": "Recall rejected", "recall exported": "Recall exported" };

function stepItem(s) {
  const verdict = s.step === "gate" ? el("span", { class: `badge ${s.allowed ? "in" : "out"}` },
    s.allowed ? "allowed" : "refused") : null;
  const text = s.step === "proposed" && s.by ? `proposed by ${L.agent(s.by)}` : s.text;
  const because = s.reason ? ` — ${s.source ? `${sourceLabel(s.source)}: ` : ""}${s.reason}` : "";
  return el("li", { class: "step", "data-step": s.step },
    el("span", { class: "when" }, L.time(s.at)), " ", el("strong", {}, STEP_WORDS[s.step] || s.step),
    verdict ? " " : "", verdict, " ", el("span", { class: "what" }, text), because);
}

function openSource(id) {
  const s = state.sources.get(id);
  if (!s) return;
  ask("detail");
  const aside = resetDetail(id);
  aside.dataset.source = id;
  $("#detail-title").replaceChildren(
    s.retracted ? el("span", { class: "badge out" }, "retracted") : "", s.retracted ? " " : "",
    `Source: ${L.source(s)}`);
  const lines = [`trust domain ${s.domain}`, reads(s),
    ...(s.retractions || []).map((r) => `retracted ${windowText(r)}: ${r.reason || ""}`)];
  $("#detail-facts").replaceChildren(...lines.flatMap((f, i) => (i ? [el("br"), f] : [f])));
  idList([["id", s.id], ["kind", s.kind], ["name", s.name], ["trust domain", s.domain],
    ["first read", s.first_read], ["last read", s.last_read],
    ...(s.retractions || []).map((r) => ["retraction", r.id])]);
}

// The run that wrote a memory, in the trace UI the server names (RESCIND_TRACE_URL), if any.
function traceLink(traceId) {
  const url = state.me && state.me.trace_url;
  if (!url || !traceId || !/^[0-9a-f]{32}$/.test(traceId)) return null;
  return el("a", { class: "trace", href: url.replace("{trace_id}", traceId), target: "_blank",
    rel: "noopener noreferrer" }, "the trace of the run that wrote it");
}

// -- why it stands: the justification tree, marked ---------------------------------------------
// Each memory's reasons are expanded once (a DAG); ``see_above`` nodes are looked up here.
function indexTree(root) {
  const byId = new Map();
  const walk = (n) => {
    if (!n.see_above && (n.justifications || n.said_by) && !byId.has(n.id)) byId.set(n.id, n);
    for (const ps of n.justifications || []) for (const p of ps) walk(p);
  };
  walk(root);
  return byId;
}

const full = (n, byId) => (n.see_above ? byId.get(n.id) || n : n);
const holdsNow = (premises) => premises.length > 0 && premises.every((p) => p.status === "IN");
// A grounding still counts: today, its ``valid`` flag; as of a point (no flag), the
// observation's status then.
const stands = (n, s) => (s.valid === undefined ? n.status === "IN" : s.valid);

// The sources that hold a memory IN, through the reasons that hold it (ids, deduplicated).
function holdingSources(n, byId, seen = new Set()) {
  n = full(n, byId);
  if (n.status !== "IN" || seen.has(n.id)) return [];
  seen.add(n.id);
  const out = (n.said_by || []).filter((s) => stands(n, s)).map((s) => s.source);
  for (const premises of n.justifications || []) {
    if (!holdsNow(premises)) continue;
    for (const p of premises) out.push(...holdingSources(p, byId, seen));
  }
  return [...new Set(out)];
}

function sourcesText(ids) {
  return ids.map((id) => {
    const s = state.sources.get(id);
    return s ? `${L.source(s)} (trust domain ${s.domain})` : id;
  }).join(", ");
}

// The summary over the tree: "Kept IN by: Acme signed contract …, through: …" per reason that
// holds the memory, and what fell.
function whyLines(root) {
  const byId = indexTree(root);
  const n = full(root, byId);
  const lines = [];
  if (n.status === "IN") {
    for (const s of (n.said_by || []).filter((x) => stands(n, x))) {
      lines.push(el("li", { class: "holds" }, `Kept IN by: ${sourcesText([s.source])} still says it`));
    }
    for (const premises of (n.justifications || []).filter(holdsNow)) {
      const srcs = [...new Set(premises.flatMap((p) => holdingSources(p, byId)))];
      lines.push(el("li", { class: "holds" }, `Kept IN by: ${sourcesText(srcs) || "its premises"}` +
        `, through: ${premises.map((p) => short(titleOf(full(p, byId)), 120)).join("; ")}`));
    }
  }
  for (const s of (n.said_by || []).filter((x) => !stands(n, x))) {
    lines.push(el("li", { class: "fell" }, `Fell: ${sourceLabel(s.source)} is retracted for what it said ${s.at || ""}`.trim()));
  }
  for (const premises of (n.justifications || []).filter((ps) => !holdsNow(ps))) {
    const gone = premises.filter((p) => p.status !== "IN").map((p) => short(titleOf(full(p, byId)), 80));
    lines.push(el("li", { class: "fell" }, `Fell: the reason resting on ${gone.join("; ")} (OUT)`));
  }
  if (n.status === "OUT" && !lines.some((l) => l.classList.contains("fell"))) {
    lines.push(el("li", { class: "fell" }, n.cause ? outBecause(n) : "OUT"));
  }
  if (!lines.length) lines.push(el("li", { class: "note" }, "No recorded reason: an agent's own say-so."));
  return lines;
}

function treeNode(n, byId) {
  const label = el("div", { class: "node", "data-id": n.id }, badge(n.status), " ",
    el("span", { class: "kind" }, L.kind(n.kind)), " ", el("span", { class: "text" }, short(titleOf(n), 160)));
  if (n.existed === false) label.append(el("span", { class: "meta" }, " (not written yet)"));
  const li = el("div", { class: "branch" }, label);
  for (const s of n.said_by || []) {
    const ok = stands(n, s);
    const what = `${sourceLabel(s.source)} (trust domain ${s.domain}) at ${s.at}`;
    li.append(el("div", { class: `said ${ok ? "holds" : "invalid"}` }, s.valid === undefined
      ? `said by ${what}` : ok ? `kept IN by: said by ${what}` : `fell: said by ${what} — retracted`));
  }
  if (n.ungrounded) li.append(el("div", { class: "fell" },
    `ungrounded identifier: no observation states ${n.ungrounded.join(", ")}`));
  if (n.see_above) li.append(el("div", { class: "meta" }, "(its reasons are shown above)"));
  (n.justifications || []).forEach((premises, i) => {
    const rule = (n.justification_rules || [])[i];
    const ok = holdsNow(premises);
    const mark = ok
      ? `kept IN by: ${sourcesText([...new Set(premises.flatMap((p) => holdingSources(p, byId)))]) || "these premises"}`
      : "fell: a premise is OUT";
    const j = el("div", { class: `justification ${ok ? "holds" : "fell"}`, "data-holds": String(ok) },
      el("div", { class: "meta" }, `reason ${i + 1}${rule ? ` (${rule})` : ""}: `,
        el("span", { class: ok ? "mark holds" : "mark fell" }, mark), " — rests on"));
    for (const p of premises) j.append(treeNode(p, byId));
    li.append(j);
  });
  return li;
}

// -- search -------------------------------------------------------------------------------------
async function loadSearch(more = false, person = false) {
  if (!state.search) return;
  const t = person ? ask("search") : keep("search");
  const { q, kind, status } = state.search;
  const skip = more ? state.search.next : 0;
  const params = new URLSearchParams({ limit: "50", skip: String(skip) });
  if (q) params.set("q", q);
  if (kind) params.set("kind", kind);
  if (status) params.set("status", status);
  const page = await api(T(`/memories?${params}`));
  if (stale("search", t)) return;
  const list = $("#search-results");
  if (!more) list.replaceChildren();
  for (const m of page.items) state.mems.set(m.id, m);
  list.append(...page.items.map(card));
  state.search.next = page.next_skip;
  state.search.shown = (more ? state.search.shown : 0) + page.items.length;
  $("#search-more").hidden = page.next_skip === null;
  $("#search-count").textContent = state.search.shown
    ? `${state.search.shown} memor${state.search.shown === 1 ? "y" : "ies"} found${page.next_skip === null ? "" : " so far"}`
    : "Nothing found.";
}

async function search(event) {
  event.preventDefault();
  state.search = { q: $("#q").value.trim(), kind: $("#q-kind").value, status: $("#q-status").value };
  try { await loadSearch(false, true); } catch (err) { fail(err); }
}

// -- as of: what was believed at a time or revision, and why ------------------------------------
const OP_WORDS = { write: "written", retract: "taken OUT by a retraction", reinstate:
  "back IN when a retraction was undone", withdraw: "withdrawn", correct: "corrected",
  superseded: "replaced by a newer value", deleted: "deleted" };

function whyThen(w) {
  const r = state.retractions.get(w.cause || w.by);
  const because = r ? `: ${short(r.reason || r.id, 100)}` : w.cause ? `: ${w.cause}` : "";
  return `${OP_WORDS[w.op] || w.op}${because} · ${L.time(w.at)} (revision ${w.rev})`;
}

function pointText(p) {
  return p.rev !== null && p.rev !== undefined ? `revision ${p.rev}` : L.time(p.at);
}

async function loadAsOf(more = false, person = false) {
  const moments = [...state.retractions.values()].filter((r) => r.at).flatMap((r) => {
    const before = new Date(Date.parse(r.at) - 1000).toISOString().replace(/\.\d+Z$/, "Z");
    const what = r.source ? `${sourceLabel(r.source)} retracted` : `${r.kind} ${r.id}`;
    return [el("button", { type: "button", class: "moment", "data-at": before,
      onclick: () => asOfAt(before) }, `Just before ${what} (${L.time(r.at)})`),
    el("button", { type: "button", class: "moment", "data-at": r.at,
      onclick: () => asOfAt(r.at) }, `Right after ${what} (${L.time(r.at)})`)];
  });
  $("#moments").replaceChildren(...moments);
  $("#moments-line").hidden = !moments.length;
  if (!state.asof) return;
  const t = person ? ask("asof") : keep("asof");
  const { at, rev, kind, status } = state.asof;
  const skip = more ? state.asof.next : 0;
  const params = new URLSearchParams({ limit: "100", skip: String(skip) });
  if (at) params.set("at", at); else params.set("rev", String(rev));
  if (kind) params.set("kind", kind);
  if (status) params.set("status", status);
  const page = await api(T(`/as-of?${params}`));
  if (stale("asof", t)) return;
  const point = page.as_of;
  $("#asof-title").textContent = `Believed at ${pointText(point)}`;
  const body = $("#asof-list tbody");
  if (!more) body.replaceChildren();
  body.append(...page.items.map((m) => {
    const tr = el("tr", { class: "clickable", "data-id": m.id, "data-name": m.name,
      "data-status": m.why.status, tabindex: 0 },
    el("td", { class: "what" }, short(titleOf(m), 120)), el("td", {}, L.kind(m.kind)),
    el("td", { class: "then" }, badge(m.why.status)), el("td", { class: "why" }, whyThen(m.why)));
    const open = () => openAsOfMemory(m.id, point);
    tr.addEventListener("click", open);
    tr.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
    return tr;
  }));
  state.asof.next = page.next_skip;
  $("#asof-more").hidden = page.next_skip === null;
  if (!body.children.length) body.append(el("tr", {}, el("td", { colspan: 4 }, "Nothing was written by then.")));
}

function asOfAt(at) {
  $("#asof-at").value = at;
  $("#asof-rev").value = "";
  return runAsOf();
}

async function runAsOf(event) {
  if (event) event.preventDefault();
  const at = typed([["at", "#asof-at"]], "#asof-zone").at || "", rev = $("#asof-rev").value.trim();
  if (Boolean(at) === Boolean(rev)) {
    fail(new Error("Give a time or a revision (one of the two)."));
    return;
  }
  state.asof = { at: at || null, rev: rev ? Number(rev) : null, kind: $("#asof-kind").value,
    status: $("#asof-status").value };
  try { await loadAsOf(false, true); say(`Showing what was believed at ${at ? L.time(at) : `revision ${rev}`}.`); }
  catch (err) { fail(err); }
}

async function openAsOfMemory(id, point, reset = true) {
  const t = reset ? ask("detail") : keep("detail");
  try {
    const params = new URLSearchParams(point.at ? { at: point.at } : { rev: String(point.rev) });
    const d = await api(T(`/memories/${ref(id)}/as-of?${params}`));
    if (stale("detail", t)) return;
    const aside = resetDetail(id);
    aside.dataset.asof = JSON.stringify(point);
    const status = d.existed ? d.why.status : null;
    $("#detail-title").replaceChildren(status ? badge(status) : "", status ? " " : "",
      `As of ${pointText(point)}: ${L.kind(d.tree.kind)}: ${short(titleOf(d.tree), 120)}`);
    $("#detail-facts").replaceChildren(d.existed ? `Then: ${whyThen(d.why)}` : "It was not written yet then.");
    const call = d.tree.kind === "action" && L.toolCall(d.tree.text);
    $("#detail-text").textContent = call ? "" : d.tree.text || "";
    $("#detail-text").hidden = Boolean(call);
    $("#detail-why").replaceChildren(...(d.existed ? whyLines(d.tree) : []));
    $("#tree").replaceChildren(treeNode(d.tree, indexTree(d.tree)));
    $("#history").replaceChildren();
    $("#detail-memory").hidden = false;
    idList([["id", d.id], ["name", d.tree.name], ["as of", point.at || `revision ${point.rev}`]]);
    if (reset) aside.scrollTop = 0;
  } catch (err) { if (!stale("detail", t)) fail(err); }
}

// -- deciding: a confirmation that restates what is about to happen -----------------------------
const KIND_LABELS = { observations: "Observations", beliefs: "Notes (beliefs)", plans: "Plans",
  answers: "Answers", executed_actions: "Executed payments (to recall)",
  pending_actions: "Pending payments (to hold)" };
const total = (counts) => Object.values(counts).reduce((a, b) => a + b, 0);

// Amounts summed per currency: "6,000.00 USD + 500.00 EUR" (or "none").
function sumOf(items) {
  const by = new Map();
  for (const a of items) {
    if (a.amount === null || a.amount === undefined) continue;
    const c = a.currency || base();
    by.set(c, (by.get(c) || 0) + Number(a.amount));
  }
  return [...by].map(([c, x]) => `${num(x)} ${c}`).join(" + ") || "none";
}

const paymentsIn = (d) => (d.kept || []).filter((k) => k.kind === "action" && k.amount !== null && k.amount !== undefined);

// The lines a confirmation restates from a preview: counts, then payments and amounts.
function restated(d) {
  const counts = Object.entries(d.counts).map(([k, n]) => `${n} ${(KIND_LABELS[k] || k).toLowerCase()}`);
  const kept = paymentsIn(d);
  return [
    ["What goes OUT", `${total(d.counts)} memories: ${counts.join(", ")}`],
    ["Payments to hold", `${d.to_hold.length}, totalling ${sumOf(d.to_hold)}`],
    ["Payments to recall", `${d.to_recall.length}, totalling ${sumOf(d.to_recall)}`],
    ["Reached but kept IN", `${(d.kept || []).length} memories, of which ${kept.length} payment(s) ` +
      `totalling ${sumOf(kept)}`],
  ];
}

let answer = null;

// Opens the modal confirmation; resolves with {force} on confirm, null on cancel.
function confirmDecision(title, rows, { button = "Confirm and commit", duplicates = [],
  style = "danger", lead = "" } = {}) {
  $("#confirm-title").textContent = title;
  $("#confirm-lead").textContent = lead;
  $("#confirm-lead").hidden = !lead;
  $("#confirm-ok").className = style;
  $("#confirm-body").replaceChildren(...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  $("#confirm-dups").hidden = !duplicates.length;
  $("#confirm-dups-text").textContent = duplicates.map((r) =>
    `${sourceLabel(r.source || "")} is already retracted ${windowText(r)} by ${r.id}`).join("; ");
  $("#confirm-force").checked = false;
  $("#confirm-ok").textContent = button;
  $("#confirm").showModal();
  return new Promise((resolve) => { answer = resolve; });
}

function closeConfirm(ok) {
  $("#confirm").close();
  const resolve = answer;
  answer = null;
  if (resolve) resolve(ok ? { force: $("#confirm-force").checked } : null);
}

// -- retractions: preview, blast radius, confirm, commit, reinstate -------------------------------
async function loadRetractions() {
  const sources = [...state.sources.values()];
  const rows = [...state.retractions.values()];
  const select = $("#src");
  const chosen = select.value;
  select.replaceChildren(...sources.map((s) => el("option", { value: s.id },
    `${L.source(s)} — trust domain ${s.domain}${s.retracted ? " (retracted)" : ""}`)));
  if (chosen && state.sources.has(chosen)) select.value = chosen;
  showReads();
  // A withdrawal or correction names its memory by id: look up the ones not seen yet.
  const unseen = [...new Set(rows.flatMap((r) => [r.memory, r.new_memory]))]
    .filter((id) => id && !state.mems.has(id)).slice(0, 50);
  await Promise.all(unseen.map((id) => api(T(`/memories/${ref(id)}`))
    .then((d) => state.mems.set(id, d.memory)).catch(() => null)));
  const memo = (id) => (state.mems.has(id)
    ? `${L.kind(state.mems.get(id).kind)}: ${short(titleOf(state.mems.get(id)), 80)}` : "a memory");
  $("#retractions tbody").replaceChildren(...rows.slice().reverse().map((r) => {
    const button = r.state === "committed"
      ? el("button", { type: "button", class: "reinstate", onclick: () => reinstate(r.id),
        "aria-label": `Reinstate ${r.id}` }, "Reinstate") : "";
    const KIND = { retract: "compromise", withdraw: "withdrawal", correct: "correction" };
    return el("tr", { "data-id": r.id, "data-state": r.state },
      el("td", {}, r.id), el("td", {}, KIND[r.kind] || r.kind),
      el("td", { class: "of" }, r.source ? sourceLabel(r.source) : r.memory
        ? memo(r.memory) + (r.new_memory ? ` → ${short(titleOf(state.mems.get(r.new_memory) || {}), 80) || "a new memory"}` : "")
        : ""),
      el("td", {}, r.kind === "retract" ? windowText(r) : ""),
      el("td", { class: "reason" }, r.reason || ""),
      el("td", { class: "state" }, r.state), el("td", {}, r.by || ""), el("td", {}, button));
  }));
}

// Under the chosen source: when it was read, to choose the window from.
function showReads() {
  const s = state.sources.get($("#src").value);
  $("#src-reads").textContent = s ? `${L.source(s)}: ${reads(s)}` +
    (s.retracted ? `; already retracted ${(s.retractions || []).map(windowText).join(", ")}` : "") : "";
  $("#use-reads").hidden = !(s && s.first_read);
}

function useReads() {
  const s = state.sources.get($("#src").value);
  if (!s || !s.first_read) return;
  $("#all-time").checked = false;
  allTime();
  // The attack window an analyst expects: from the start of the minute the source was first
  // read, to now (rounded up to the minute): everything it said since, as the help text says.
  const first = new Date(Math.floor(Date.parse(s.first_read) / 60000) * 60000);
  const now = new Date(Math.ceil(Date.now() / 60000) * 60000);
  $("#from").value = first.toISOString().replace(/:00\.000Z$/, "Z");
  $("#to").value = now.toISOString().replace(/:00\.000Z$/, "Z");
  say(`Window: from the source's first read (${L.time(first.toISOString())}) to now ` +
    `(${L.time(now.toISOString())}). Narrow it if you know when the attacker got in.`);
}

// The date-time pickers are in the viewer's zone; what is picked is written into From or To
// with its offset, so it is not read as UTC.
function picked(pick, field) {
  const v = $(pick).value;
  if (!v) return;
  $(field).value = L.withOffset(v);
  $("#all-time").checked = false;
  allTime();
}

function allTime() {
  const all = $("#all-time").checked;
  for (const f of ["#from", "#to", "#from-pick", "#to-pick"]) { $(f).disabled = all; if (all) $(f).value = ""; }
}

// Times typed without a zone are read as UTC, and the page says so (``#zone-note``).
function typed(ids, note) {
  const out = {};
  const assumed = [];
  for (const [key, id] of ids) {
    const text = $(id).value.trim();
    if (!text) continue;
    const t = L.typedTime(text);
    out[key] = t.iso;
    if (t.assumed) assumed.push(`${text} as ${t.iso}`);
  }
  $(note).textContent = assumed.length ? `No time zone given: read as UTC (${assumed.join(", ")}).` : "";
  return out;
}

function compromiseBody() {
  const body = { source: $("#src").value, reason: $("#reason").value.trim() };
  return { ...body, ...typed([["from", "#from"], ["to", "#to"]], "#window-zone") };
}

// An open window (a bound missing) retracts everything the source said on that side: only
// when "all time" is ticked.
function openWindowRefused(body) {
  if ($("#all-time").checked || (body.from && body.to)) return false;
  fail(new Error("Give the window's From and To (the times the source could not be trusted), or " +
    "tick \u201cAll time\u201d to retract everything it ever said."));
  return true;
}

async function preview(event) {
  event.preventDefault();
  const body = compromiseBody();
  if (openWindowRefused(body)) return;
  try {
    const p = await api(T("/retractions/preview"), { method: "POST", body });
    state.preview = { body, rev: p.rev, result: p };
    renderPreview(p, `Preview at revision ${p.rev}: nothing has changed yet`);
    $("#commit-btn").hidden = false;
    $("#commit-btn").disabled = false;
    $("#commit-btn").textContent = `Commit at revision ${p.rev}…`;
    say(`Previewed ${sourceLabel(body.source)}: ${total(p.counts)} memories would go OUT.`);
  } catch (err) { fail(err); }
}

function keptBy(k) {
  return (k.kept_by || []).map((why) => {
    if (why.source) return `kept IN by: ${why.name && why.name !== why.source ? why.name : sourceLabel(why.source)} still says it`;
    const srcs = (why.sources || []).map((s) => sourceLabel(s.source)).join(", ");
    const through = (why.premises || []).map((p) => short(titleOf(p), 60)).join("; ");
    return `kept IN by: ${srcs || "its premises"}${through ? `, through: ${through}` : ""}`;
  });
}

function renderPreview(p, title) {
  $("#preview").hidden = false;
  $("#preview-title").textContent = title;
  $("#counts tbody").replaceChildren(...Object.entries(p.counts).map(([k, n]) =>
    el("tr", { "data-kind": k }, el("td", {}, KIND_LABELS[k] || k), el("td", { class: "n" }, n))));
  const item = (a) => el("li", {}, L.action(a, base()).label);
  $("#to-hold").replaceChildren(...p.to_hold.map(item));
  $("#to-recall").replaceChildren(...p.to_recall.map(item));
  $("#kept").replaceChildren(...(p.kept || []).map((k) => el("li", { "data-id": k.id },
    el("div", {}, `${L.kind(k.kind)}: ${short(titleOf(k), 90)}`),
    ...keptBy(k).map((line) => el("div", { class: "meta kept-by" }, line)))));
  for (const [list, what] of [["#to-hold", "Nothing to hold."], ["#to-recall", "Nothing to recall."],
    ["#kept", "Nothing reached stays IN."]]) {
    if (!$(list).children.length) $(list).append(el("li", { class: "note" }, what));
  }
  drawBlast(p.graph || { nodes: [], edges: [] });
}

function drawBlast(g) {
  // Columns by distance from the retracted source (longest path), one row per memory.
  const box = $("#blast");
  box.replaceChildren();
  const layer = new Map(g.nodes.map((n) => [n.id, n.kind === "source" ? 0 : 1]));
  for (let i = 0; i < g.nodes.length; i++) {
    for (const e of g.edges) {
      if (layer.has(e.from) && layer.has(e.to)) layer.set(e.to, Math.max(layer.get(e.to), layer.get(e.from) + 1));
    }
  }
  const rows = new Map();
  const pos = new Map();
  const W = 190, H = 46;
  for (const n of g.nodes) {
    const c = layer.get(n.id);
    const r = rows.get(c) || 0;
    rows.set(c, r + 1);
    pos.set(n.id, { x: 10 + c * W, y: 10 + r * H });
  }
  const width = 10 + (Math.max(0, ...layer.values()) + 1) * W;
  const height = 20 + Math.max(1, ...rows.values()) * H;
  box.setAttribute("viewBox", `0 0 ${width} ${height}`);
  box.setAttribute("width", width);
  box.setAttribute("height", height);
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
    markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }));
  defs.append(marker);
  box.append(defs);
  for (const e of g.edges) {
    const a = pos.get(e.from), b = pos.get(e.to);
    if (!a || !b) continue;
    box.append(svg("line", { x1: a.x + 160, y1: a.y + 16, x2: b.x, y2: b.y + 16, class: "edge",
      "marker-end": "url(#arrow)" }));
  }
  for (const n of g.nodes) {
    const { x, y } = pos.get(n.id);
    const name = n.kind === "source" ? sourceLabel(n.id) : titleOf(n);
    const group = svg("g", { class: `node ${n.fate}`, "data-id": n.id, "data-fate": n.fate });
    group.append(svg("title", {}, `${L.kind(n.kind)}: ${n.kind === "source" ? name : n.text || name}`));
    group.append(svg("rect", { x, y, width: 160, height: 32, rx: 6 }));
    group.append(svg("text", { x: x + 8, y: y + 13, class: "kind" }, `${L.kind(n.kind)}${n.fate === "kept" ? " (kept IN)" : ""}`));
    group.append(svg("text", { x: x + 8, y: y + 26 }, short(name, 26)));
    box.append(group);
  }
}

async function commit() {
  if (!state.preview) return;
  const { body, rev, result } = state.preview;
  if (openWindowRefused(body)) return;
  const s = state.sources.get(body.source) || { id: body.source, domain: "?" };
  const rows = [
    ["Source", `${L.source(s)} (${s.id}), trust domain ${s.domain}`],
    ["Window", body.from && body.to ? `from ${L.time(body.from)} to ${L.time(body.to)}`
      : body.from || body.to ? windowText(body)
        : "all time: every observation it ever gave, whenever it was read"],
    ["Reason", body.reason],
    ...restated(result),
    ["At revision", `${rev} (refused if the graph has changed since the preview)`],
  ];
  const ok = await confirmDecision(`Retract ${L.source(s)}?`, rows,
    { duplicates: result.duplicates || [] });
  if (!ok) { say("Not committed: nothing has changed."); return; }
  const button = $("#commit-btn");
  button.disabled = true;
  try {
    const d = await api(T("/retractions"), { method: "POST", body: { ...body, rev, ...(ok.force ? { force: true } : {}) } });
    state.preview = null;
    button.hidden = true;
    renderPreview(d, `Committed ${d.retraction}: ${total(d.counts)} went OUT`);
    say(`Committed ${d.retraction}: ${total(d.counts)} memories went OUT; ` +
      `${d.to_hold.length} payment(s) held, ${d.to_recall.length} drafted for recall.`);
    await loadContext();
    await loadRetractions();
  } catch (err) {
    button.disabled = false;
    if (err.status === 409 && !err.body.existing) {  // stale; a duplicate names `existing`
      button.hidden = true;
      fail(new Error(`${err.message} — the graph changed since the preview: preview again.`));
    } else fail(err);
  }
}

// Undoing a retraction moves money: held payments are released and recalls withdrawn. The
// preview says which (with amounts), a confirmation restates it, the commit is made at the
// preview's revision, and the API's warnings (what to pull, what to tell the bank) stay on
// the page after it.
const moneyOf = (i) => L.amount(i.amount, i.currency, base()) || "an unknown amount";

function reinstateRows(p) {
  const released = (p.to_release || []).map((i) => `${L.action(i, base()).label}`);
  const recalls = (p.recalls_to_withdraw || []).map((w) =>
    `${w.name}: ${moneyOf(w)} (${w.state}) — ${w.becomes}`);
  return [
    ["Comes back IN", `${total(p.counts)} memor${total(p.counts) === 1 ? "y" : "ies"}`],
    ["Held payments released", released.length ? `${released.length}, totalling ` +
      `${sumOf(p.to_release)}: ${released.join("; ")}` : "none"],
    ["Recalls withdrawn", recalls.length ? recalls.join("; ") : "none"],
    ["Recalls to pull from the outbox", (p.recalls_to_pull || []).length
      ? p.recalls_to_pull.map((x) => `${x.name} (${moneyOf(x)})`).join("; ") : "none"],
  ];
}

function showWarnings(list) {
  $("#warnings").replaceChildren(...(list || []).map((w) => el("li", {}, w)));
  $("#warnings-box").hidden = !(list || []).length;
}

async function reinstate(id) {
  try {
    const r = state.retractions.get(id) || { id };
    const p = await api(T(`/retractions/${ref(id)}/reinstate/preview`), { method: "POST", body: {} });
    const what = r.source ? `the retraction of ${sourceLabel(r.source)}` : `${r.kind || "retraction"} ${id}`;
    const rows = [["Undo", `${what} (${id}), made because: ${r.reason || "no reason given"}`],
      ...reinstateRows(p), ...((p.warnings || []).length ? [["What follows", p.warnings.join(" ")]] : []),
      ["At revision", `${p.rev} (refused if the graph has changed since the preview)`]];
    const ok = await confirmDecision(`Reinstate ${id}?`, rows, { button: "Confirm and reinstate",
      lead: "Reinstating moves money: the held payments listed are released (the gate judges them " +
        "again when the agent asks to pay) and the recalls listed are withdrawn." });
    if (!ok) { say("Not reinstated: nothing has changed."); return; }
    const d = await api(T(`/retractions/${ref(id)}/reinstate`), { method: "POST", body: { rev: p.rev } });
    say(`Reinstated ${id}: ${total(d.counts)} memories came back IN; ` +
      `${(d.to_release || []).length} held payment(s) released, ` +
      `${(d.recalls_to_withdraw || []).length} recall(s) withdrawn.`);
    showWarnings(d.warnings);
    await loadContext();
    await loadRetractions();
  } catch (err) {
    if (err.status === 409) fail(new Error(`${err.message} — preview again.`)); else fail(err);
  }
}

// -- withdraw or correct one memory (security), from its details ---------------------------------
async function decideOnMemory(kind, event) {
  event.preventDefault();
  const id = $("#detail").dataset.id;
  if (!id) return;
  const withdraw = kind === "withdraw";
  const body = withdraw ? { memory: id, reason: $("#withdraw-reason").value.trim() }
    : { memory: id, reason: $("#correct-reason").value.trim(), text: $("#correct-text").value.trim() };
  const path = withdraw ? "/withdrawals" : "/corrections";
  try {
    const [p, d] = await Promise.all([api(T(`${path}/preview`), { method: "POST", body }),
      api(T(`/memories/${ref(id)}`))]);
    const what = short(titleOf(d.memory), 120);
    const rows = [["Memory", `${L.kind(d.memory.kind)}: ${what}`],
      ...(withdraw ? [] : [["New text", body.text]]), ["Reason", body.reason], ...restated(p),
      ["At revision", `${p.rev} (refused if the graph has changed since the preview)`]];
    const ok = await confirmDecision(withdraw ? "Withdraw this memory?" : "Correct this memory?", rows,
      { button: withdraw ? "Confirm and withdraw" : "Confirm and correct" });
    if (!ok) { say("Not committed: nothing has changed."); return; }
    const c = await api(T(path), { method: "POST", body: { ...body, rev: p.rev } });
    say(`${withdraw ? "Withdrew" : "Corrected"} \u201c${short(what, 100)}\u201d (${c.retraction}): ` +
      `${total(c.counts)} memories went OUT.`);
    for (const f of ["#withdraw-reason", "#correct-reason", "#correct-text"]) $(f).value = "";
    await refresh();
  } catch (err) { fail(err); }
}

// -- recalls ------------------------------------------------------------------------------------
// Finance reads the whole draft (its state first), then approves or rejects it with a reason,
// adds notes, and exports an approved recall for the bank; every other role only reads.
// A recall's payment in words: "Pay Northwind Supplies 6,000.00 USD for INV-1001".
const recallPayment = (r) => L.payment({ ...r, name: r.reference || r.name }, base());

const decidedBy = (r) => {
  const d = r.state === "exported" && r.exports.length ? r.exports[r.exports.length - 1]
    : { approved: r.approved, rejected: r.rejected, withdrawn: r.withdrawn }[r.state];
  return d ? `${d.by || "?"}, ${L.time(d.at)}` : "";
};

// What waits for finance: drafted recalls to approve or reject, withdrawal notices to approve,
// approved ones to export. On the Recalls tab and on its button.
function recallCounts(rows) {
  const n = (f) => rows.filter(f).length;
  const decide = n((r) => r.state === "drafted");
  const notices = n((r) => r.notice && r.notice.state === "drafted");
  const toExport = n((r) => r.state === "approved") + n((r) => r.notice && r.notice.state === "approved");
  const parts = [`${decide} recall${decide === 1 ? "" : "s"} to decide (approve or reject)`,
    `${notices} withdrawal notice${notices === 1 ? "" : "s"} to approve`,
    `${toExport} approved, to export for the bank`];
  $("#recall-counts").textContent = `Waiting for finance: ${parts.join(" · ")}.`;
  const waiting = decide + notices;
  $("#recalls-badge").textContent = String(waiting);
  $("#recalls-badge").hidden = !waiting;
}

async function loadRecalls() {
  const rows = await api(T("/recalls"));
  recallCounts(rows);
  $("#recall-list tbody").replaceChildren(...rows.map((r) => {
    const tr = el("tr", { "data-name": r.name, "data-state": r.state, class: "clickable" },
      el("td", { class: "name" }, ...whole(recallPayment(r))),
      el("td", { class: "payee" }, r.payee_name || L.vendor(r.payee || "")),
      el("td", { class: "n" }, L.amount(r.amount, r.currency, base())), el("td", {}, L.time(r.paid_on)),
      el("td", {}, r.bank_reference || ""), el("td", { class: "state" }, r.state),
      el("td", { class: "by" }, decidedBy(r)));
    tr.addEventListener("click", () => showRecall(r));
    return tr;
  }));
  if (!rows.length) $("#recall-list tbody").append(el("tr", {}, el("td", { colspan: 7 }, "No recalls.")));
  const open = state.recall && rows.find((r) => r.action === state.recall.action);
  if (open) showRecall(open); else $("#recall").hidden = true;
}

const RECALL_NOTE = {
  drafted: "Drafted: nothing is sent until finance approves it and exports the file for the bank.",
  rejected: "Rejected: this recall will not be sent.",
  approved: "Approved: the recall is in the outbox. Nothing has reached the bank: export the file " +
    "and send it through the bank's portal.",
  exported: "Approved and exported: the recall is in the outbox.",
  withdrawn: "Withdrawn: the payment is IN again; this recall is not to be sent.",
};

function showRecall(r) {
  if (!state.recall || state.recall.action !== r.action) {
    $("#reject-reason").value = "";
    $("#note-text").value = "";
  }
  state.recall = r;
  $("#recall").hidden = false;
  $("#recall").dataset.state = r.state;
  $("#recall-title").textContent = `Recall: ${recallPayment(r)} (${r.state})`;
  $("#draft").textContent = r.draft;
  const finance = state.me.role === "finance";
  $("#recall-actions").hidden = !finance;
  $("#approve-btn").hidden = r.state !== "drafted";
  $("#reject-box").hidden = r.state !== "drafted";
  $("#export-box").hidden = !["approved", "exported"].includes(r.state);
  const n = r.notice;
  $("#notice-box").hidden = !n;
  $("#notice-approve-btn").hidden = !n || n.state !== "drafted";
  $("#notice-export-box").hidden = !n || n.state === "drafted";
  $("#notice").hidden = !n;
  $("#notice").textContent = n ? n.text : "";
  for (const b of ["#approve-btn", "#reject-btn", "#note-btn", "#export-btn", "#notice-approve-btn",
    "#notice-export-btn"]) $(b).disabled = false;
  const why = r.withdrawn ? ` ${r.withdrawn.why} (${L.time(r.withdrawn.at)}).` : "";
  const notice = n ? ` It had been exported: the withdrawal notice below (${n.state}) asks the ` +
    "bank to disregard it." : "";
  $("#approve-note").textContent = finance || r.state !== "drafted"
    ? (RECALL_NOTE[r.state] || "") + why + notice : "Only finance can approve a recall.";
}

// What the open recall is, for a confirmation: amount and currency, payee, account, bank data.
function recallRows(r) {
  return [["Payment", `${recallPayment(r)}${given(r.amount) ? "" : " (amount unknown)"}`],
    ["Account", r.account || "as paid"],
  ["Paid on", r.paid_on ? L.time(r.paid_on) : "not in the bank's receipt"],
  ["Bank reference", r.bank_reference || "none"], ["Reason", r.reason || "—"]];
}

// One decision on the open recall: the button waits, the list reloads, the message says what
// happened (or the error, from the API's detail).
async function decideRecall(button, path, body, done) {
  if (!state.recall) return;
  $(button).disabled = true;
  try {
    const r = await api(T(`/recalls/${ref(state.recall.action)}/${path}`), { method: "POST", body });
    say(done(r));
    await loadRecalls();
  } catch (err) { $(button).disabled = false; fail(err); }
}

async function approve() {
  const r = state.recall;
  if (!r) return;
  const money = L.amount(r.amount, r.currency, base()) || "an unknown amount";
  const ok = await confirmDecision(`Approve the recall of ${money}?`, recallRows(r), {
    button: `Approve recall of ${money}`, style: "primary",
    lead: `This cannot be undone. Approving writes the request to claw back ${money} from ` +
      `${r.payee_name || r.payee || "the payee"} to the outbox; nothing reaches the bank until ` +
      "you export the file and send it." });
  if (!ok) { say("Not approved: nothing has changed."); return; }
  return decideRecall("#approve-btn", "approve", null,
    () => `Approved the recall of ${money} (${recallPayment(r)}): it is in the outbox. Export it to send it to the bank.`);
}

async function reject() {
  const r = state.recall;
  const reason = $("#reject-reason").value.trim();
  if (!reason) { fail(new Error("Say why the recall is rejected.")); return; }
  if (!r) return;
  const money = L.amount(r.amount, r.currency, base()) || "an unknown amount";
  const ok = await confirmDecision(`Reject the recall of ${money}?`, [...recallRows(r),
    ["Why rejected", reason]], { button: `Reject recall of ${money}`, style: "danger",
    lead: `This cannot be undone: the request to claw back ${money} will never be sent.` });
  if (!ok) { say("Not rejected: nothing has changed."); return; }
  return decideRecall("#reject-btn", "reject", { reason },
    () => `Rejected the recall of ${money} (${recallPayment(r)}): it will not be sent.`);
}

async function approveNotice() {
  const r = state.recall;
  if (!r || !r.notice) return;
  const money = L.amount(r.amount, r.currency, base()) || "an unknown amount";
  const ok = await confirmDecision(`Approve the withdrawal notice for ${money}?`, [...recallRows(r),
    ["Requests to disregard", r.notice.disregard.map((e) => `${e.format} of ${L.time(e.at)}`).join("; ")]],
  { button: "Approve withdrawal notice", style: "primary",
    lead: `The bank holds our request to claw back ${money}. Approving the notice puts the letter ` +
      "asking the bank to disregard it in the outbox; export it and send it to the bank." });
  if (!ok) { say("Not approved: nothing has changed."); return; }
  return decideRecall("#notice-approve-btn", "notice/approve", null,
    () => `Approved the withdrawal notice for ${money} (${recallPayment(r)}): export it and send it to the bank.`);
}

async function annotate() {
  const text = $("#note-text").value.trim();
  if (!text) { fail(new Error("The note is empty.")); return; }
  await decideRecall("#note-btn", "notes", { text },
    (r) => `Noted on the recall of ${recallPayment(r)} (${r.notes.length === 1 ? "1 note" : `${r.notes.length} notes`}).`);
  if (!$("#error").textContent) $("#note-text").value = "";
}

// The export answers the file itself: it is saved through a link to a blob, named as the API
// names it (Content-Disposition).
async function exportRecall(notice = false) {
  if (!state.recall) return;
  const format = $(notice ? "#notice-format" : "#export-format").value;
  const button = notice ? "#notice-export-btn" : "#export-btn";
  $(button).disabled = true;
  try {
    const res = await fetch(T(`/recalls/${ref(state.recall.action)}/${notice ? "notice/export" : "export"}`), {
      method: "POST", body: JSON.stringify({ format }),
      headers: { Authorization: `Bearer ${state.token}`, "Content-Type": "application/json" },
    });
    if (!res.ok) {
      const data = await res.json().catch(() => ({}));
      throw new ApiError(res.status, data.detail || `HTTP ${res.status}`);
    }
    const name = /filename="([^"]+)"/.exec(res.headers.get("Content-Disposition") || "");
    const url = URL.createObjectURL(await res.blob());
    const link = el("a", { href: url, download: name ? name[1] : `recall.${format}` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    say(`Exported the ${notice ? "withdrawal notice" : "recall"} of ${recallPayment(state.recall)} as ${format}.`);
    await loadRecalls();
  } catch (err) { fail(err); } finally { $(button).disabled = false; }
}

// -- the payment gate's decisions ---------------------------------------------------------------
// Each record holds the call's own values (amount, payee, account: attacker-reachable text), the
// decision, its reason, the fragility, one smallest set of the trust domains that would have to
// fall to fake the payment (of those it counted as evidence) and what was already allowed to the
// same account or payee.
const when = (t) => L.time(t);
const counted = (d) => L.attackerNeeds(d.domains, allSources(), d.payee);
const wouldFall = (d) => L.attackerNeeds(d.would_fall, allSources(), d.payee);
const payee = (d) => d.payee_name || L.vendor(d.payee || "") || "—";
// A gate decision's payment in words: the action's own label when the graph holds it (its
// invoice from the recorded call), else what the gate recorded (payee, amount, invoice).
function gatePayment(d) {
  const m = state.mems.get(d.action);
  const call = m && L.toolCall(m.text);
  const invoice = (call && call.args && call.args.invoice) || "";
  return L.payment({ ...d, name: invoice ? `payment:${invoice}` : d.name }, base());
}
const gateBadge = (d) => el("span", { class: `badge ${d.allowed ? "in" : "out"}` },
  d.allowed ? "allowed" : "refused");
const given = (x) => x !== null && x !== undefined;

// The amount in the call's currency when the record names one, and in the base currency the
// threshold is in when that differs.
function gateAmount(d) {
  if (!given(d.amount)) return "—";
  const inBase = given(d.base_amount) && (d.currency || base()) !== base()
    ? ` (${L.amount(d.base_amount, base(), base())})` : "";
  return L.amount(d.amount, d.currency, base()) + inBase;
}

async function loadActions() {
  const page = await api(T("/memories?kind=action&limit=200"));
  for (const m of page.items) state.mems.set(m.id, m);
  return page.items;
}

async function loadGates(always = true) {
  const rows = await api(T(`/gates?limit=${GATE_LIMIT}`));
  if (rows.some((d) => !state.mems.has(d.action)) && always) await loadActions();
  const key = JSON.stringify(rows);
  const changed = key !== state.gatesKey;
  Object.assign(state, { gates: rows, gatesKey: key });
  if (changed || always) renderGates();
  return changed;
}

function renderGates() {
  const rows = state.gates || [];
  const refused = rows.filter((d) => !d.allowed);
  const shown = $("#refused-only").checked ? refused : rows;
  $("#gate-count").textContent = `${rows.length} decision(s), ${refused.length} refused` +
    (rows.length === GATE_LIMIT ? ` (the newest ${GATE_LIMIT})` : "");
  $("#gate-list tbody").replaceChildren(...shown.map(gateRow));
  if (!shown.length) {
    $("#gate-list tbody").append(el("tr", {}, el("td", { colspan: 10 },
      rows.length ? "No refused decisions." : "No gate decisions.")));
  }
}

function gateRow(d) {
  const open = () => openPayment(d);
  const tr = el("tr", { class: `clickable${d.allowed ? "" : " is-refused"}`, "data-action": d.action,
    "data-name": d.name, "data-allowed": String(d.allowed), tabindex: 0,
    title: d.trace ? `trace ${d.trace}` : null, onclick: open },
  el("td", { class: "when" }, when(d.at)), el("td", { class: "name" }, ...whole(gatePayment(d))),
  el("td", { class: "n amount" }, gateAmount(d)), el("td", { class: "payee" }, payee(d)),
  el("td", { class: "account" }, d.account || "—"), el("td", { class: "decision" }, gateBadge(d)),
  el("td", { class: "n fragility" }, given(d.fragility) ? d.fragility : "—"),
  el("td", { class: "domains", title: `counted as evidence: ${counted(d)}` }, wouldFall(d)),
  el("td", { class: "n aggregate" }, given(d.aggregate) ? L.amount(d.aggregate, base()) : "—"),
  el("td", { class: "reason", title: `recorded: ${d.reason || ""}` }, L.gateWhy(d, policy())));
  tr.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
  return tr;
}

function gateItem(d) {
  return el("li", { class: "gate-decision", "data-allowed": String(d.allowed) },
    el("div", {}, gateBadge(d), ` ${when(d.at)} · ${gateAmount(d)}`, d.payee ? ` to ${payee(d)}` : "",
      d.account ? ` · account ${d.account}` : ""),
    el("div", { class: "meta" }, `sources an attacker would need: ${wouldFall(d)} · counted as ` +
      `evidence: ${counted(d)} · already allowed ${given(d.aggregate) ? L.amount(d.aggregate, base()) : "—"}`),
    el("div", { class: "reason" }, L.gateWhy(d, policy())));
}

// The payment's card; when the graph does not hold it (the gate was asked about a call before
// it was proposed or paid), its gate decisions alone.
function openPayment(d) {
  return openDetail(d.action, true, () => {
    const aside = resetDetail("");
    delete aside.dataset.id;
    idList([["id", d.action], ["name", d.name]]);
    $("#detail-title").replaceChildren(`Payment: ${gatePayment(d)}`);
    $("#detail-facts").replaceChildren("Not in the graph: the gate was asked about this call before " +
      "it was proposed or paid, so it has no justification tree or status history.");
    $("#detail-memory").hidden = true;
    $("#detail-gate").hidden = false;
    const mine = (state.gates || []).filter((g) => g.action === d.action).reverse();
    $("#gate-history").replaceChildren(...mine.map(gateItem));
    aside.scrollTop = 0;
  });
}


// -- payments: made (their fragility now) and pending; the audit log ----------------------------
const ruleText = () => { const p = policy();
  return `${p.min_domains} independent sources needed above ${L.round(p.threshold)} ${p.currency}`; };

// Each executed payment with its fragility now (``/memories/{id}/fragility``): how many
// independent sources stand behind it today and which an attacker would have to take over.
async function executedNow() {
  const made = (await loadActions()).filter((m) => m.executed).slice(0, 50);
  const frags = await Promise.all(made.map((m) => api(T(`/memories/${ref(m.id)}/fragility`))));
  return made.map((m, i) => ({ m, f: frags[i] }));
}

function confirmedNow({ m, f }) {
  if (m.status === "OUT") return "none now: it rests on what was retracted (see Recalls)";
  const p = policy();
  const short = f.fragility < p.min_domains && given(m.amount) && Number(m.amount) > p.threshold;
  return `${L.confirmed(f.fragility)} now${short ? `: fewer than the ${p.min_domains} the gate ` +
    `asks above ${L.round(p.threshold)} ${p.currency}` : ""}`;
}

async function loadPayments() {
  $("#rule-text").textContent = ruleText();
  const made = await executedNow();
  $("#executed-list tbody").replaceChildren(...made.map(({ m, f }) => el("tr", {
    "data-name": m.name, "data-status": m.status, class: "clickable", onclick: () => openDetail(m.id) },
  el("td", { class: "name" }, L.action(m, base()).label),
  el("td", { class: "status" }, badge(m.status), m.status === "OUT" ? " to recall" : " paid"),
  el("td", { class: "confirmed" }, confirmedNow({ m, f })),
  el("td", { class: "needs" }, m.status === "OUT" ? "—"
    : L.attackerNeeds(f.would_fake_it, allSources(), m.payee)))));
  if (!made.length) $("#executed-list tbody").append(el("tr", {}, el("td", { colspan: 4 }, "No payment made yet.")));
  const rows = await api(T("/payments"));
  $("#payment-list tbody").replaceChildren(...rows.map((p) => el("tr", { "data-name": p.name, class: "clickable",
    onclick: () => openDetail(p.id) },
  el("td", {}, L.action(p, base()).label), el("td", {}, L.vendor(p.payee || "")),
  el("td", { class: "n" }, amountOf(p)),
  el("td", {}, badge(p.status), p.held ? " held" : p.refused ? " refused" : ""),
  el("td", { class: "n" }, p.status === "OUT" ? "—" : p.fragility),
  el("td", {}, p.status === "OUT" ? "rests on what was retracted"
    : L.attackerNeeds(p.would_fake_it, allSources(), p.payee)),
  el("td", { class: "next-step" }, nextStep(p)))));
}

// What happens next to a payment not yet made, in words.
function nextStep(p) {
  const refused = p.refused && p.gate ? `Refused by the gate (${short(p.gate.reason || "", 100)}). ` : "";
  if (p.status !== "OUT" && !p.held) {
    return refused + "When the agent asks to pay, the gate judges it on the trust domains it " +
      "rests on.";
  }
  const r = state.retractions.get(p.cause);
  const why = r ? ` (${r.source ? sourceLabel(r.source) : r.kind} retracted: ${short(r.reason || r.id, 80)})` : "";
  return `${refused}Held${why}: the gate refuses it while it stays OUT. Next: review the retraction. If ` +
    "it was wrong, security reinstates it (preview, then confirm) and the payment is released " +
    "for the gate to judge again; if it was right, cancel the invoice's payment where it was " +
    "scheduled. Rescind never pays it by itself.";
}

// The audit log a page at a time (the API's ``before`` cursor in X-Next-Before, the total in
// X-Total-Count): who, the entry as a sentence, the result, and its detail as fields.
const AUDIT_PAGE = 50;
const RESULT_WORDS = { ok: "done", refused: "refused", error: "failed", allowed: "allowed",
  blocked: "refused" };

async function auditPage(before = null) {
  const params = new URLSearchParams({ limit: String(AUDIT_PAGE) });
  if (before) params.set("before", before);
  const res = await fetch(T(`/audit?${params}`), { headers: { Authorization: `Bearer ${state.token}` } });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, typeof data.detail === "string" ? data.detail : `HTTP ${res.status}`);
  return { rows: data, total: Number(res.headers.get("X-Total-Count") || data.length),
    next: res.headers.get("X-Next-Before") };
}

// An entry's detail (a JSON object) as "field: value" pairs: an amount with its currency,
// counts as "observations 1, notes 2", lists joined.
// One thing an entry names (a payment held or recalled): its name, amount and payee.
const thing = (x) => [x.id || x.name, given(x.amount) ? L.amount(x.amount, x.currency, base()) : "",
  x.payee ? `to ${L.vendor(x.payee)}` : ""].filter(Boolean).join(" ") || JSON.stringify(x);

function detailPairs(d) {
  if (!d || typeof d !== "object") return d ? [["detail", String(d)]] : [];
  const out = [];
  for (const [k, v] of Object.entries(d)) {
    if (v === null || v === undefined || v === "" || k === "currency") continue;
    let text;
    if (k.endsWith("amount") || k === "amount" || k === "total") text = L.amount(v, d.currency, base());
    else if (Array.isArray(v)) text = v.map((x) => (x && typeof x === "object" ? thing(x) : x)).join("; ");
    else if (typeof v === "object" && (v.id || given(v.amount))) text = thing(v);
    else if (typeof v === "object") text = Object.entries(v).map(([a, b]) => `${a.replace(/_/g, " ")} ${typeof b === "object" ? JSON.stringify(b) : b}`).join(", ");
    else text = /(^|_)at$/.test(k) ? L.time(v) : String(v);
    out.push([k.replace(/_/g, " "), text]);
  }
  return out;
}

function auditRow(a) {
  const pairs = detailPairs(a.detail);
  return el("tr", { "data-action": a.action, "data-result": a.result },
    el("td", { class: "when" }, L.time(a.at)),
    el("td", { class: "who" }, `${a.who} (${[a.role, a.via && `via ${a.via}`].filter(Boolean).join(", ")})`),
    el("td", { class: "what" }, a.summary || `${a.action} ${a.target || ""}`),
    el("td", { class: `result ${a.result}` }, `${RESULT_WORDS[a.result] || a.result}` +
      (a.count > 1 ? ` ×${a.count}` : "")),
    el("td", { class: "detail" }, pairs.length ? el("dl", { class: "pairs" },
      ...pairs.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])) : ""));
}

async function loadAudit(more = false) {
  const page = await auditPage(more ? state.auditNext : null);
  const body = $("#audit-list tbody");
  if (!more) { body.replaceChildren(); state.auditShown = 0; }
  body.append(...page.rows.map(auditRow));
  state.auditShown += page.rows.length;
  state.auditNext = page.next;
  $("#audit-more").hidden = !page.next;
  $("#audit-count").textContent = `${state.auditShown} of ${page.total} ` +
    `entr${page.total === 1 ? "y" : "ies"} shown` + (page.next ? "; older ones with the button below." : ".");
}

// -- what needs security: read from the graph now, nothing invented -----------------------------
async function loadTodo() {
  const [pending, gates, order, recalls, made] = await Promise.all([api(T("/payments")),
    api(T(`/gates?limit=${GATE_LIMIT}`)), api(T("/audit-order")), api(T("/recalls")), executedNow()]);
  const items = [];
  const go = (label, tab, then = null) => el("button", { type: "button", class: "go",
    onclick: () => { show(tab); if (then) then(); } }, label);
  const item = (n, text, lines, button) => items.push(el("li", { class: "todo-item", "data-count": n },
    el("strong", {}, text), lines.length ? el("ul", {}, ...lines.map((l) => el("li", {}, l))) : "", button));
  const held = pending.filter((p) => p.held);
  if (held.length) {
    item(held.length, `${held.length === 1 ? "1 payment is" : `${held.length} payments are`} held, ` +
      `totalling ${sumOf(held)}: release it by reinstating if the retraction was wrong, else have ` +
      "the invoice cancelled", held.map((p) => L.action(p, base()).label), go("Review held payments", "payments"));
  }
  const refused = gates.filter((d) => !d.allowed && !d.expired);
  if (refused.length) {
    item(refused.length, `${refused.length === 1 ? "1 payment was" : `${refused.length} payments were`} ` +
      "refused by the gate: check that no one paid them another way",
    refused.slice(0, 5).map((d) => `${L.payment(d, base())}: ${L.gateWhy(d, policy())}`),
    go("Open the gate's refusals", "gate", () => { $("#refused-only").checked = true; renderGates(); }));
  }
  const p = policy();
  const thin = made.filter(({ m, f }) => m.status === "IN" && f.fragility < p.min_domains);
  if (thin.length) {
    item(thin.length, `${thin.length === 1 ? "1 payment was" : `${thin.length} payments were`} made ` +
      `on fewer than ${p.min_domains} independent sources: if a source below is compromised, declare it`,
    thin.map(({ m, f }) => `${L.action(m, base()).label}: ${L.confirmed(f.fragility)} ` +
      `(${L.attackerNeeds(f.would_fake_it, allSources(), m.payee)})`), go("Open payments made", "payments"));
  }
  const alone = order.filter((o) => Number(o.value_at_risk) > 0 && !(state.sources.get(o.source) || {}).retracted);
  if (alone.length) {
    item(alone.length, `${alone.length === 1 ? "1 source alone vouches" : `${alone.length} sources alone vouch`} ` +
      "for money: the first to review",
    alone.map((o) => `${sourceLabel(o.source)}: ${L.amount(o.value_at_risk, base())} in ` +
      `${o.payments === 1 ? "1 payment" : `${o.payments} payments`}`),
    go("Declare one compromised…", "retract", () => { $("#src").value = alone[0].source; showReads(); }));
  }
  if (state.preview) {
    const b = state.preview.body;
    item(1, `A preview of ${sourceLabel(b.source)} (${windowText(b)}) made in this tab is not committed`,
      [], go("Back to the preview", "retract"));
  }
  const finance = recalls.filter((r) => r.state === "drafted" || (r.notice && r.notice.state === "drafted"));
  const count = items.length;
  if (finance.length) {
    items.push(el("li", { class: "todo-item note" }, `Waiting for finance, not for you: ${finance.length} ` +
      `recall${finance.length === 1 ? "" : "s"} to decide (${finance.map(recallPayment).join("; ")}).`));
  }
  if (!count) items.unshift(el("li", { class: "todo-item" }, "Nothing waits for a decision from security."));
  $("#todo-list").replaceChildren(...items);
  $("#todo-badge").textContent = String(count);
  $("#todo-badge").hidden = !count;
}

// -- wiring -------------------------------------------------------------------------------------
$("#signin").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("#signin-error").textContent = "";
  try { await signIn($("#token").value.trim()); } catch (err) {
    state.token = null;
    $("#signin-error").textContent = err.status === 401 ? "Unknown or revoked token." : err.message;
  }
});
$("#signout").addEventListener("click", () => signOut());
for (const b of document.querySelectorAll("nav button")) b.addEventListener("click", () => show(b.dataset.tab));
$("#compromise").addEventListener("submit", preview);
$("#src").addEventListener("change", showReads);
$("#use-reads").addEventListener("click", useReads);
$("#from-pick").addEventListener("change", () => picked("#from-pick", "#from"));
$("#to-pick").addEventListener("change", () => picked("#to-pick", "#to"));
$("#audit-more").addEventListener("click", () => loadAudit(true).catch(fail));
$("#all-time").addEventListener("change", allTime);
$("#commit-btn").addEventListener("click", commit);
$("#confirm-ok").addEventListener("click", () => closeConfirm(true));
$("#confirm-cancel").addEventListener("click", () => closeConfirm(false));
$("#confirm").addEventListener("cancel", (event) => { event.preventDefault(); closeConfirm(false); });
$("#search-form").addEventListener("submit", search);
$("#search-more").addEventListener("click", () => loadSearch(true, true).catch(fail));
$("#asof-form").addEventListener("submit", runAsOf);
$("#asof-more").addEventListener("click", () => loadAsOf(true, true).catch(fail));
$("#withdraw-form").addEventListener("submit", (e) => decideOnMemory("withdraw", e));
$("#correct-form").addEventListener("submit", (e) => decideOnMemory("correct", e));
$("#approve-btn").addEventListener("click", approve);
$("#reject-btn").addEventListener("click", reject);
$("#note-btn").addEventListener("click", annotate);
$("#export-btn").addEventListener("click", () => exportRecall(false));
$("#notice-approve-btn").addEventListener("click", approveNotice);
$("#notice-export-btn").addEventListener("click", () => exportRecall(true));
$("#refused-only").addEventListener("change", renderGates);
$("#close-detail").addEventListener("click", () => {
  ask("detail");
  const aside = $("#detail");
  aside.hidden = true;
  for (const k of ["id", "asof", "source"]) delete aside.dataset[k];
});
setInterval(poll, POLL_MS);

const saved = sessionStorage.getItem("rescind-token");
if (saved) signIn(saved).catch(() => signOut());
