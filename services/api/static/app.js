// The Rescind console: plain DOM, no framework, no build step.
// Everything that came from the graph is put on the page with textContent or setAttribute,
// never parsed as HTML: memory texts are written by agents reading untrusted sources.

const $ = (sel) => document.querySelector(sel);
const SVG = "http://www.w3.org/2000/svg";
const POLL_MS = 1000;
const GATE_LIMIT = 200;
const state = { token: null, me: null, tab: "overview", rev: null, preview: null, recall: null,
  gates: null, gatesKey: null };

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

const num = (x) => Number(x).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const money = (x) => (x === null || x === undefined ? "" : "$" + num(x));
const short = (t, n = 90) => (t && t.length > n ? t.slice(0, n - 1) + "…" : t || "");
const badge = (status) => el("span", { class: `badge ${status === "OUT" ? "out" : "in"}` },
  status || "?");

function say(text) { $("#message").textContent = text; $("#error").textContent = ""; }
function fail(err) { $("#error").textContent = err.message || String(err); }

class ApiError extends Error {
  constructor(status, detail) { super(detail); this.status = status; }
}

async function api(path, { method = "GET", body = null } = {}) {
  const headers = { Authorization: `Bearer ${state.token}` };
  if (body !== null) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === null ? null : JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    if (res.status === 401 && state.me) signOut("Your token is no longer valid; sign in again.");
    throw new ApiError(res.status, data.detail || `HTTP ${res.status}`);
  }
  return data;
}

const T = (path) => `/api/v1/tenants/${encodeURIComponent(state.me.tenant)}${path}`;
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
  show("overview");
}

function signOut(note = "") {
  sessionStorage.removeItem("rescind-token");
  Object.assign(state, { token: null, me: null, rev: null, preview: null, recall: null, gates: null,
    gatesKey: null });
  delete document.body.dataset.role;
  $("#app").hidden = true;
  $("#session").hidden = true;
  $("#detail").hidden = true;
  $("#signin-view").hidden = false;
  $("#token").value = "";
  $("#signin-error").textContent = note;
}

// -- tabs and live refresh ----------------------------------------------------------------------
const views = { overview: loadOverview, retract: loadRetractions, recalls: loadRecalls,
  payments: loadPayments, gate: loadGates, audit: loadAudit };

function show(tab) {
  state.tab = tab;
  for (const b of document.querySelectorAll("nav button")) b.classList.toggle("active", b.dataset.tab === tab);
  for (const s of document.querySelectorAll("section.tab")) s.hidden = s.id !== tab;
  refresh();
}

async function refresh() {
  if (!state.me) return;
  try {
    await views[state.tab]();
    await reopenDetail();
  } catch (err) { fail(err); }
}

async function reopenDetail() {
  if (!$("#detail").hidden && $("#detail").dataset.id) await openDetail($("#detail").dataset.id, false);
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
async function loadOverview() {
  const o = await api(T("/overview"));
  const parts = Object.entries(o.counts).map(([k, c]) => `${k}: ${c.IN} IN, ${c.OUT} OUT`);
  $("#counts-line").textContent = parts.join(" · ") + (o.truncated ? " (first 200 of each kind)" : "");
  const lists = {};
  for (const col of document.querySelectorAll("#overview .column")) {
    lists[col.dataset.kind] = col.querySelector("ul");
    lists[col.dataset.kind].replaceChildren();
  }
  for (const s of o.sources) {
    lists.source.append(el("li", { class: "card source", "data-id": s.id },
      el("strong", {}, s.name || s.id), el("div", { class: "meta" }, `${s.id} · domain ${s.domain}`)));
  }
  for (const kind of ["observation", "belief", "plan", "action", "answer"]) {
    for (const m of o.columns[kind] || []) lists[kind === "answer" ? "action" : kind].append(card(m));
  }
  state.links = o.links;
  if (state.rev === null) { state.rev = o.revision; $("#rev").textContent = o.revision; }
}

function card(m) {
  const tags = [];
  if (m.kind === "action") {
    tags.push(el("span", { class: "amount" }, money(m.amount)));
    if (m.status === "OUT") tags.push(el("span", { class: "tag" }, m.executed ? "to recall" : "held"));
    else tags.push(el("span", { class: "tag quiet" }, m.executed ? "executed" : "pending"));
  }
  const li = el("li", { class: `card ${m.status === "OUT" ? "is-out" : ""}`, "data-id": m.id,
    "data-name": m.name, "data-status": m.status, tabindex: 0, title: m.text },
  el("div", { class: "head" }, badge(m.status), el("span", { class: "name" }, m.name || m.id), ...tags),
  el("div", { class: "text" }, short(m.text, 140)),
  m.status === "OUT" ? el("div", { class: "meta" }, `out by ${m.cause}, ${m.hops} hop(s) away`) : null);
  li.addEventListener("click", () => openDetail(m.id));
  li.addEventListener("keydown", (e) => { if (e.key === "Enter") openDetail(m.id); });
  return li;
}

// -- the justification tree of one memory -------------------------------------------------------
// ``missing`` is called instead of failing when there is no such memory (a gate decision about
// a payment the graph does not hold).
async function openDetail(id, reset = true, missing = null) {
  try {
    const [d, h] = await Promise.all([api(T(`/memories/${ref(id)}`)), api(T(`/memories/${ref(id)}/history`))]);
    const aside = $("#detail");
    aside.dataset.id = id;
    aside.hidden = false;
    const m = d.memory;
    $("#detail-title").replaceChildren(badge(m.status), " ", `${m.kind}: ${m.name || m.id}`);
    const facts = [m.text];
    if (m.kind === "action") {
      facts.push(`${money(m.amount)} to ${m.payee || "?"}${m.account ? `, account ${m.account}` : ""}` +
        `${m.executed ? " (executed)" : ""}`);
    }
    if (m.status === "OUT") facts.push(`OUT because of ${m.cause}, ${m.hops} hop(s) away`);
    const trace = traceLink(m.trace);
    if (trace) facts.push(trace);
    $("#detail-facts").replaceChildren(...facts.flatMap((f, i) => (i ? [el("br"), f] : [f])));
    $("#tree").replaceChildren(treeNode(d.tree));
    $("#history").replaceChildren(...h.history.map((e) => el("li", {},
      badge(e.status), ` ${e.op} at revision ${e.rev}`, e.cause ? ` · cause ${e.cause}` : "",
      e.hops !== null && e.hops !== undefined ? ` · ${e.hops} hop(s)` : "", e.at ? ` · ${e.at}` : "")));
    $("#detail-memory").hidden = false;
    // An action's history carries every time the gate was asked about it, oldest first.
    $("#detail-gate").hidden = !h.gate;
    $("#gate-history").replaceChildren(...(h.gate || []).map(gateItem));
    if (h.gate && !h.gate.length) $("#gate-history").append(el("li", { class: "note" }, "The gate was never asked about it."));
    if (reset) aside.scrollTop = 0;
  } catch (err) {
    if (err.status === 404 && missing) missing(); else fail(err);
  }
}

// The run that wrote a memory, in the trace UI the server names (RESCIND_TRACE_URL), if any.
function traceLink(traceId) {
  const url = state.me && state.me.trace_url;
  if (!url || !traceId || !/^[0-9a-f]{32}$/.test(traceId)) return null;
  return el("a", { class: "trace", href: url.replace("{trace_id}", traceId), target: "_blank",
    rel: "noopener noreferrer" }, "the trace of the run that wrote it");
}

function treeNode(n) {
  const label = el("div", { class: "node", "data-id": n.id }, badge(n.status), " ",
    el("span", { class: "kind" }, n.kind || "?"), " ", el("span", { class: "text" }, short(n.text, 160)));
  const li = el("div", { class: "branch" }, label);
  for (const s of n.said_by || []) {
    li.append(el("div", { class: `said ${s.valid ? "" : "invalid"}` },
      `said by ${s.source} (domain ${s.domain}) at ${s.at}${s.valid ? "" : " — retracted"}`));
  }
  if (n.see_above) li.append(el("div", { class: "meta" }, "(its reasons are shown above)"));
  (n.justifications || []).forEach((premises, i) => {
    const rule = (n.justification_rules || [])[i];
    const j = el("div", { class: "justification" },
      el("div", { class: "meta" }, `reason ${i + 1}${rule ? ` (${rule})` : ""}: rests on`));
    for (const p of premises) j.append(treeNode(p));
    li.append(j);
  });
  return li;
}

// -- retractions: preview, blast radius, commit, reinstate --------------------------------------
async function loadRetractions() {
  const [sources, rows] = await Promise.all([api(T("/sources")), api(T("/retractions"))]);
  const select = $("#src");
  const chosen = select.value;
  select.replaceChildren(...sources.map((s) => el("option", { value: s.id }, `${s.id} (${s.domain})`)));
  if (chosen) select.value = chosen;
  $("#retractions tbody").replaceChildren(...rows.slice().reverse().map((r) => {
    const button = r.state === "committed"
      ? el("button", { type: "button", class: "reinstate", onclick: () => reinstate(r.id) }, "Reinstate") : "";
    return el("tr", { "data-id": r.id, "data-state": r.state },
      el("td", {}, r.id), el("td", {}, r.kind), el("td", {}, r.source || r.memory || ""),
      el("td", {}, r.kind === "retract" ? `${r.from || "open"} → ${r.to || "open"}` : ""),
      el("td", { class: "state" }, r.state), el("td", {}, r.by || ""), el("td", {}, button));
  }));
}

function compromiseBody() {
  const body = { source: $("#src").value, reason: $("#reason").value.trim() };
  if ($("#from").value.trim()) body.from = $("#from").value.trim();
  if ($("#to").value.trim()) body.to = $("#to").value.trim();
  return body;
}

async function preview(event) {
  event.preventDefault();
  try {
    const body = compromiseBody();
    const p = await api(T("/retractions/preview"), { method: "POST", body });
    state.preview = { body, rev: p.rev };
    renderPreview(p, `Preview at revision ${p.rev}: nothing has changed yet`);
    $("#commit-btn").hidden = false;
    $("#commit-btn").disabled = false;
    $("#commit-btn").textContent = `Commit at revision ${p.rev}`;
    say(`Previewed ${body.source}: ${total(p.counts)} memories would go OUT.`);
  } catch (err) { fail(err); }
}

const total = (counts) => Object.values(counts).reduce((a, b) => a + b, 0);
const KIND_LABELS = { observations: "Observations", beliefs: "Beliefs", plans: "Plans",
  answers: "Answers", executed_actions: "Executed payments (to recall)",
  pending_actions: "Pending payments (to hold)" };

function renderPreview(p, title) {
  $("#preview").hidden = false;
  $("#preview-title").textContent = title;
  $("#counts tbody").replaceChildren(...Object.entries(p.counts).map(([k, n]) =>
    el("tr", { "data-kind": k }, el("td", {}, KIND_LABELS[k] || k), el("td", { class: "n" }, n))));
  const item = (a) => el("li", {}, `${a.name || a.id}: ${money(a.amount)} to ${a.payee || "?"}`);
  $("#to-hold").replaceChildren(...p.to_hold.map(item));
  $("#to-recall").replaceChildren(...p.to_recall.map(item));
  $("#kept").replaceChildren(...p.kept.map((k) => el("li", {}, `${k.kind}: ${short(k.text, 80)}`)));
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
    const group = svg("g", { class: `node ${n.fate}`, "data-id": n.id, "data-fate": n.fate });
    group.append(svg("title", {}, `${n.kind}: ${n.text || n.id}`));
    group.append(svg("rect", { x, y, width: 160, height: 32, rx: 6 }));
    group.append(svg("text", { x: x + 8, y: y + 13, class: "kind" }, `${n.kind}${n.fate === "kept" ? " (kept IN)" : ""}`));
    group.append(svg("text", { x: x + 8, y: y + 26 }, short(n.name || n.text || n.id, 24)));
    box.append(group);
  }
}

async function commit() {
  if (!state.preview) return;
  const button = $("#commit-btn");
  button.disabled = true;
  try {
    const d = await api(T("/retractions"), { method: "POST", body: { ...state.preview.body, rev: state.preview.rev } });
    state.preview = null;
    button.hidden = true;
    renderPreview(d, `Committed ${d.retraction}: ${total(d.counts)} went OUT`);
    say(`Committed ${d.retraction}: ${total(d.counts)} memories went OUT; ` +
      `${d.to_hold.length} payment(s) held, ${d.to_recall.length} drafted for recall.`);
    await loadRetractions();
  } catch (err) {
    button.disabled = false;
    if (err.status === 409) {
      button.hidden = true;
      fail(new Error(`${err.message} — the graph changed since the preview: preview again.`));
    } else fail(err);
  }
}

async function reinstate(id) {
  try {
    const d = await api(T(`/retractions/${ref(id)}/reinstate`), { method: "POST" });
    say(`Reinstated ${id}: ${total(d.counts)} memories came back IN.`);
    await loadRetractions();
  } catch (err) { fail(err); }
}

// -- recalls ------------------------------------------------------------------------------------
// Finance reads the whole draft (its state first), then approves or rejects it with a reason,
// adds notes, and exports an approved recall for the bank; every other role only reads.
const decidedBy = (r) => {
  const d = r.state === "exported" && r.exports.length ? r.exports[r.exports.length - 1]
    : { approved: r.approved, rejected: r.rejected }[r.state];
  return d ? `${d.by}, ${String(d.at || "").slice(0, 16).replace("T", " ")} UTC` : "";
};

async function loadRecalls() {
  const rows = await api(T("/recalls"));
  $("#recall-list tbody").replaceChildren(...rows.map((r) => {
    const tr = el("tr", { "data-name": r.name, "data-state": r.state, class: "clickable" },
      el("td", {}, r.name), el("td", { class: "payee" }, r.payee_name || r.payee || ""),
      el("td", { class: "n" }, money(r.amount)), el("td", {}, (r.paid_on || "").slice(0, 10)),
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
  drafted: "", rejected: "Rejected: this recall will not be sent.",
  approved: "Approved: the recall is in the outbox.",
  exported: "Approved and exported: the recall is in the outbox.",
};

function showRecall(r) {
  if (!state.recall || state.recall.action !== r.action) {
    $("#reject-reason").value = "";
    $("#note-text").value = "";
  }
  state.recall = r;
  $("#recall").hidden = false;
  $("#recall").dataset.state = r.state;
  $("#recall-title").textContent = `${r.name}: ${money(r.amount)} to ${r.payee_name || r.payee || "?"} (${r.state})`;
  $("#draft").textContent = r.draft;
  const finance = state.me.role === "finance";
  $("#recall-actions").hidden = !finance;
  $("#approve-btn").hidden = r.state !== "drafted";
  $("#reject-box").hidden = r.state !== "drafted";
  $("#export-box").hidden = !["approved", "exported"].includes(r.state);
  for (const b of ["#approve-btn", "#reject-btn", "#note-btn", "#export-btn"]) $(b).disabled = false;
  $("#approve-note").textContent = RECALL_NOTE[r.state] ||
    (finance ? "" : "Only finance can approve a recall.");
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

function approve() {
  return decideRecall("#approve-btn", "approve", null,
    (r) => `Approved the recall of ${r.name}: it is in the outbox for the bank.`);
}

function reject() {
  const reason = $("#reject-reason").value.trim();
  if (!reason) { fail(new Error("Say why the recall is rejected.")); return; }
  return decideRecall("#reject-btn", "reject", { reason },
    (r) => `Rejected the recall of ${r.name}: it will not be sent.`);
}

async function annotate() {
  const text = $("#note-text").value.trim();
  if (!text) { fail(new Error("The note is empty.")); return; }
  await decideRecall("#note-btn", "notes", { text },
    (r) => `Noted on the recall of ${r.name} (${r.notes.length} note(s)).`);
  if (!$("#error").textContent) $("#note-text").value = "";
}

// The export answers the file itself: it is saved through a link to a blob, named as the API
// names it (Content-Disposition).
async function exportRecall() {
  if (!state.recall) return;
  const format = $("#export-format").value;
  $("#export-btn").disabled = true;
  try {
    const res = await fetch(T(`/recalls/${ref(state.recall.action)}/export`), {
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
    say(`Exported the recall of ${state.recall.name} as ${format}.`);
    await loadRecalls();
  } catch (err) { fail(err); } finally { $("#export-btn").disabled = false; }
}

// -- the payment gate's decisions ---------------------------------------------------------------
// Each record holds the call's own values (amount, payee, account: attacker-reachable text), the
// decision, its reason, the fragility, one smallest set of the trust domains that would have to
// fall to fake the payment (of those it counted as evidence) and what was already allowed to the
// same account or payee.
const when = (t) => (t ? String(t).replace(/\.\d+/, "").replace(/\+00:00$/, "Z") : "");
const counted = (d) => (d.domains || []).join(" + ") || "—";
const wouldFall = (d) => (d.would_fall || []).join(" + ") || "—";
const gateBadge = (d) => el("span", { class: `badge ${d.allowed ? "in" : "out"}` },
  d.allowed ? "allowed" : "refused");
const given = (x) => x !== null && x !== undefined;

// The amount in the call's currency when the record names one, and in the base currency the
// threshold is in when that differs.
function gateAmount(d) {
  if (!given(d.amount)) return "—";
  if (!d.currency) return money(d.amount);
  const base = given(d.base_amount) && Number(d.base_amount) !== Number(d.amount)
    ? ` (base ${num(d.base_amount)})` : "";
  return `${num(d.amount)} ${d.currency}${base}`;
}

async function loadGates(always = true) {
  const rows = await api(T(`/gates?limit=${GATE_LIMIT}`));
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
  el("td", { class: "when" }, when(d.at)), el("td", { class: "name" }, d.name || d.action),
  el("td", { class: "n amount" }, gateAmount(d)), el("td", { class: "payee" }, d.payee || "—"),
  el("td", { class: "account" }, d.account || "—"), el("td", { class: "decision" }, gateBadge(d)),
  el("td", { class: "n fragility" }, given(d.fragility) ? d.fragility : "—"),
  el("td", { class: "domains", title: `counted as evidence: ${counted(d)}` }, wouldFall(d)),
  el("td", { class: "n aggregate" }, given(d.aggregate) ? num(d.aggregate) : "—"),
  el("td", { class: "reason" }, d.reason || ""));
  tr.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
  return tr;
}

function gateItem(d) {
  return el("li", { class: "gate-decision", "data-allowed": String(d.allowed) },
    el("div", {}, gateBadge(d), ` ${when(d.at)} · ${gateAmount(d)}`, d.payee ? ` to ${d.payee}` : "",
      d.account ? ` · account ${d.account}` : ""),
    el("div", { class: "meta" }, `fragility ${given(d.fragility) ? d.fragility : "?"} · would ` +
      `fall: ${wouldFall(d)} · counted: ${counted(d)} · already allowed ${given(d.aggregate) ? num(d.aggregate) : "—"}` +
      (d.trace ? ` · trace ${d.trace}` : "")),
    el("div", { class: "reason" }, d.reason || ""));
}

// The payment's card; when the graph does not hold it (the gate was asked about a call before
// it was proposed or paid), its gate decisions alone.
function openPayment(d) {
  return openDetail(d.action, true, () => {
    const aside = $("#detail");
    delete aside.dataset.id;
    aside.hidden = false;
    $("#detail-title").replaceChildren(`payment: ${d.name || d.action}`);
    $("#detail-facts").replaceChildren("Not in the graph: the gate was asked about this call before " +
      "it was proposed or paid, so it has no justification tree or status history.");
    $("#detail-memory").hidden = true;
    $("#detail-gate").hidden = false;
    const mine = (state.gates || []).filter((g) => g.action === d.action).reverse();
    $("#gate-history").replaceChildren(...mine.map(gateItem));
    aside.scrollTop = 0;
  });
}

// -- pending payments and the audit log ---------------------------------------------------------
async function loadPayments() {
  const rows = await api(T("/payments"));
  $("#payment-list tbody").replaceChildren(...rows.map((p) => el("tr", { "data-name": p.name, class: "clickable",
    onclick: () => openDetail(p.id) },
  el("td", {}, p.name), el("td", {}, p.payee || ""), el("td", { class: "n" }, money(p.amount)),
  el("td", {}, badge(p.status), p.held ? " held" : ""), el("td", { class: "n" }, p.fragility),
  el("td", {}, p.would_fake_it.join(" + ") || "—"))));
}

async function loadAudit() {
  const rows = await api(T("/audit"));
  $("#audit-list tbody").replaceChildren(...rows.map((a) => el("tr", {},
    el("td", {}, a.at), el("td", {}, `${a.who} (${[a.role, a.via].filter(Boolean).join(", ")})`), el("td", {}, a.action),
    el("td", {}, a.target), el("td", { class: a.result },
      `${a.result} ${a.status}${a.count > 1 ? ` ×${a.count}` : ""}`))));
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
$("#commit-btn").addEventListener("click", commit);
$("#approve-btn").addEventListener("click", approve);
$("#reject-btn").addEventListener("click", reject);
$("#note-btn").addEventListener("click", annotate);
$("#export-btn").addEventListener("click", exportRecall);
$("#refused-only").addEventListener("change", renderGates);
$("#close-detail").addEventListener("click", () => { $("#detail").hidden = true; delete $("#detail").dataset.id; });
setInterval(poll, POLL_MS);

const saved = sessionStorage.getItem("rescind-token");
if (saved) signIn(saved).catch(() => signOut());
