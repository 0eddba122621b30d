// Human labels for what the graph holds: sources, agents, payments, times, amounts.
// Pure functions of the API's records (no DOM): the console shows these, and ids only in a
// memory's details. Every string here ends up in the page through textContent.

export const num = (x) => Number(x).toLocaleString("en-US", { minimumFractionDigits: 2,
  maximumFractionDigits: 2 });

// An amount with its currency; an amount that names none is in the gate's (``base``).
export function amount(x, currency, base = "USD") {
  if (x === null || x === undefined) return "";
  return `${num(x)} ${currency || base}`;
}

// The viewer's time zone (the browser's), and how a time is shown in it: "2026-11-17 10:00 UTC"
// for a viewer in UTC, "2026-11-17 11:00 GMT+1" in Berlin (seconds kept when not zero). A
// text that is not a time is shown as it is.
export const zone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

export function time(t) {
  if (!t) return "";
  const ms = Date.parse(String(t));
  if (!/^\d{4}-\d\d-\d\d[T ]\d\d:\d\d/.test(String(t)) || Number.isNaN(ms)) return String(t);
  const parts = Object.fromEntries(new Intl.DateTimeFormat("en-US", { timeZone: zone(),
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    second: "2-digit", hourCycle: "h23", timeZoneName: "short" }).formatToParts(new Date(ms))
    .map((p) => [p.type, p.value]));
  const sec = parts.second && parts.second !== "00" ? `:${parts.second}` : "";
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}${sec} ` +
    `${parts.timeZoneName || "UTC"}`;
}

// A time as a person types it, for the API (ISO 8601 with a zone): "2026-11-16 08:00",
// "2026-11-16T08:00" or "2026-11-16" have no zone and are read as UTC (``assumed`` says so);
// one with Z or ±HH:MM is kept. Anything else is returned as typed, for the API to refuse.
export function typedTime(text) {
  const t = String(text || "").trim();
  const m = t.match(/^(\d{4}-\d\d-\d\d)(?:[T ](\d\d:\d\d(?::\d\d(?:\.\d+)?)?))?$/);
  if (!m) return { iso: t, assumed: false };
  return { iso: `${m[1]}T${m[2] || "00:00"}Z`, assumed: true };
}

const SHORT = new Set(["ap", "ar", "ai", "id", "hr", "it", "qa", "ops"]);

// ap_agent → "AP agent", payments_agent → "payments agent", ap-checker → "AP checker".
export function agent(a) {
  if (!a) return "";
  const words = String(a).split(/[_\-\s]+/).filter(Boolean);
  return words.map((w) => (SHORT.has(w.toLowerCase()) ? w.toUpperCase() : w)).join(" ");
}

const words = (k) => String(k || "").replace(/[_\-]+/g, " ").trim();
const cap = (s) => (s ? s[0].toUpperCase() + s.slice(1) : s);

// A vendor or payee as people write it: a lower-case slug ("acme") capitalised, else as given.
export function vendor(v) {
  if (!v) return "";
  return /^[a-z0-9][a-z0-9_\-]*$/.test(v) ? cap(v.replace(/[_\-]+/g, " ")) : v;
}

// A source by its name; when it has none but its id ("portal:acme", kind vendor_portal),
// "Acme vendor portal".
export function source(s) {
  if (!s) return "";
  if (s.name && s.name !== s.id) return s.name;
  const id = String(s.id || "");
  const subject = id.includes(":") ? id.slice(id.lastIndexOf(":") + 1) : "";
  const kind = words(s.kind) || "source";
  return subject ? `${vendor(subject)} ${kind}` : cap(words(id)) || kind;
}

// A tool call as the middleware records an action: ``pay_invoice({"amount": …})``.
export function toolCall(text) {
  const m = String(text || "").match(/^([A-Za-z_][\w.]*)\((\{[\s\S]*\})\)$/);
  if (!m) return null;
  try {
    const args = JSON.parse(m[2]);
    return args && typeof args === "object" ? { tool: m[1], args } : null;
  } catch { return null; }
}

const VERBS = { pay_invoice: "Pay", schedule_payment: "Schedule paying",
  release_payment: "Release the payment to", wire: "Wire", pay: "Pay" };

// What an action does, in words: "Pay Acme 12,000.00 USD to account ZZ45 ACMP …", with the
// invoice, the tool and the due date apart (``facts``). ``label`` alone is the title.
export function action(m, base = "USD") {
  const call = toolCall(m.text);
  const args = (call && call.args) || {};
  const who = vendor(args.vendor || m.payee || args.payee || "");
  const sum = amount(m.amount ?? args.amount, m.currency || args.currency, base);
  const account = m.account || args.account || "";
  const invoice = args.invoice || (String(m.name || "").match(/INV-[\w-]+/) || [])[0] || "";
  let label;
  if (call) {
    const verb = VERBS[call.tool] || cap(words(call.tool));
    label = [verb, who, sum].filter(Boolean).join(" ");
  } else if (sum) {
    label = ["Pay", who, sum].filter(Boolean).join(" ");
  } else {
    label = m.text || "";
  }
  if (sum && account) label += ` to account ${account}`;
  const when = args.on || args.date || args.due || "";
  if (when) label += `, on ${when}`;
  // A call recorded as words ("Wire 6,000.00 to IBAN … ref INV-1041") says more than the
  // label: it leads the facts. A recorded tool call does not (its arguments are the label).
  const facts = !call && sum && m.text ? [m.text] : [];
  if (invoice) facts.push(`invoice ${invoice}`);
  if (call) facts.push(`tool ${call.tool}`);
  if (m.agent) facts.push(`by ${agent(m.agent)}`);
  return { label, facts, tool: call ? call.tool : null, invoice, vendor: who, sum, account,
    call: Boolean(call) };
}

// The one-line title of any memory (an action's label, or the first line of its text).
export function title(m, base = "USD") {
  if (!m) return "";
  if (m.kind === "action") return action(m, base).label;
  const first = String(m.text || "").split("\n").find((l) => l.trim()) || "";
  return first.trim();
}

const KINDS = { observation: "Observation", belief: "Note", plan: "Plan", action: "Payment",
  answer: "Answer", source: "Source" };

export const kind = (k) => KINDS[k] || cap(words(k)) || "Memory";

// What a memory was written by, in words: "read from Acme vendor portal" or "noted by AP agent".
export function origin(m, sourceLabel = "") {
  const by = agent(m.agent);
  if (m.kind === "observation") return sourceLabel ? `read from ${sourceLabel}` : "read from a source";
  if (m.kind === "belief") return by ? `noted by ${by}` : "a note";
  if (m.kind === "plan") return by ? `planned by ${by}` : "a plan";
  if (m.kind === "answer") return by ? `answered by ${by}` : "an answer";
  if (m.kind === "action") return by ? `proposed by ${by}` : "an action";
  return by;
}

export const short = (t, n = 90) => (t && t.length > n ? t.slice(0, n - 1) + "…" : t || "");

// -- the gate's decisions and fragility, in words -----------------------------------------------
// A whole number without decimals, else two: a threshold reads "10,000 USD", an amount
// "2,400.00 USD".
export const round = (x) => Number(x).toLocaleString("en-US", {
  maximumFractionDigits: Number.isInteger(Number(x)) ? 0 : 2 });

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

// How many independent sources (trust domains) stand behind a payment: "confirmed by 1
// independent source", "confirmed by no independent source".
export const confirmed = (n) => (n ? `confirmed by ${plural(n, "independent source")}`
  : "confirmed by no independent source");

// A trust domain as the sources in it, by name: "Acme vendor portal"; a domain of several
// sources: "Signed contracts (Acme signed contract, Globex signed contract, …)", or, told
// about a payment to ``payee``, the payee's own among them: "Acme signed contract (signed
// contracts)". ``sources``: the API's sources (id, kind, name, domain).
export function domain(d, sources = [], payee = "") {
  const all = sources.filter((s) => s.domain === d);
  const inside = all.map(source);
  if (inside.length === 1) return inside[0];
  const own = payee ? all.find((s) => String(s.id).endsWith(`:${payee}`)) : null;
  if (own) return `${source(own)} (${words(d)})`;
  const what = cap(words(String(d).replace(/:.*/, ""))) || "A trust domain";
  if (!inside.length) return `${what}${String(d).includes(":") ? ` (${vendor(String(d).split(":").pop())})` : ""}`;
  const shown = inside.slice(0, 3).join(", ") + (inside.length > 3 ? `, and ${inside.length - 3} more` : "");
  return `${what} (${shown})`;
}

// The sources an attacker would have to take over together, in words: "Acme vendor portal and
// Signed contracts (…)", or what to say when none would be needed.
export function attackerNeeds(domains, sources = [], payee = "") {
  const names = (domains || []).map((d) => domain(d, sources, payee));
  if (!names.length) return "none: no independent source stands behind it";
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

// Why the gate decided as it did, built from the decision's typed fields (allowed, expired,
// fragility, amount, base_amount, aggregate) and the gate's rule (``policy``: threshold,
// min_domains, currency), not from its recorded reason. What those fields cannot explain (a
// call that did not match its proposal, an amount with no rate) is told by the recorded
// reason, without its "blocked:" prefix (``fallback``).
export function gateWhy(d, policy) {
  const p = policy || { threshold: 10000, min_domains: 2, currency: "USD" };
  const recorded = String(d.reason || "").replace(/^(allowed|blocked):\s*/, "");
  const fallback = `${d.allowed ? "Allowed" : "Refused"}: ${recorded}`;
  if (d.expired) return "Refused: the gate answered after the agent had stopped waiting, so the " +
    "payment never ran.";
  const frag = d.fragility;
  if (frag === null || frag === undefined) return fallback;
  const rule = `${p.min_domains} needed above ${round(p.threshold)} ${p.currency}`;
  const has = (x) => x !== null && x !== undefined;
  const total = has(d.base_amount) ? Number(d.base_amount) + Number(d.aggregate || 0) : null;
  const sum = has(d.amount) ? amount(d.amount, d.currency, p.currency) : "";
  const inBase = has(d.base_amount) && (d.currency || p.currency) !== p.currency
    ? ` (${amount(d.base_amount, p.currency)})` : "";
  const prior = Number(d.aggregate || 0) > 0 && Number(d.base_amount) <= p.threshold
    ? `, with ${amount(d.aggregate, p.currency)} already allowed to the same payee or account ` +
      `(${amount(total, p.currency)} in all),` : "";
  if (d.allowed) {
    if (!has(d.amount)) return `Allowed: ${confirmed(frag)}; the action is declared amount-free.`;
    if (frag >= p.min_domains) return `Allowed: ${confirmed(frag)}; ${rule}.`;
    if (total !== null && total <= p.threshold) {
      return `Allowed: ${confirmed(frag)}; ${rule}, and ${sum}${inBase}${prior} is not above it.`;
    }
    return fallback;
  }
  if (total !== null && total > p.threshold && frag < p.min_domains) {
    return `Refused: ${sum}${inBase}${prior} is above ${round(p.threshold)} ${p.currency} and ` +
      `${confirmed(frag).replace("by ", frag ? "by only " : "by ")}; ${p.min_domains} needed.`;
  }
  return fallback;
}

// What is an id, not a name a person gave: a memory id, a content hash, a notes/ path.
const ID = /^(?:(?:act|bel|obs|pla|ans)-[0-9a-f]{12,}|[0-9a-f]{16,}|notes\/.*)$/;

// A payment as people name it, from what the gate recorded when the graph does not hold it:
// "Pay Northwind Supplies 6,000.00 USD for INV-1001".
export function payment(d, base = "USD") {
  const who = d.payee_name || vendor(d.payee || "");
  const name = String(d.name || "");
  const ref = name.match(/INV-[\w-]+/) || name.match(/^payment:(.+)$/);
  const what = ref ? `for ${ref[1] || ref[0]}` : name && !ID.test(name) ? `(${name})` : "";
  return ["Pay", who, amount(d.amount, d.currency, base), what].filter(Boolean).join(" ") ||
    "A payment";
}

// The viewer's zone as its short name now ("UTC", "GMT+1").
export function zoneAbbr(at = new Date()) {
  const part = new Intl.DateTimeFormat("en-US", { timeZone: zone(), timeZoneName: "short" })
    .formatToParts(at).find((p) => p.type === "timeZoneName");
  return part ? part.value : "UTC";
}

// A datetime-local value ("2026-11-16T09:00", the viewer's wall clock) as ISO 8601 with the
// viewer's offset at that moment: "2026-11-16T09:00+01:00" in Berlin, "2026-11-16T09:00Z" in UTC.
export function withOffset(local) {
  const d = new Date(local);  // a datetime-local value is read in the browser's own zone
  if (Number.isNaN(d.getTime())) return local;
  const off = -d.getTimezoneOffset();
  if (!off) return `${local}Z`;
  const h = String(Math.floor(Math.abs(off) / 60)).padStart(2, "0");
  const m = String(Math.abs(off) % 60).padStart(2, "0");
  return `${local}${off > 0 ? "+" : "-"}${h}:${m}`;
}
