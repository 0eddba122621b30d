"""A naive, independent reference for scenario files (docs/scenario-format.md).

Plain Python data, no graph, no incrementality: status is the least fixpoint recomputed from
scratch by naive iteration; fragility is brute force over subsets of trust domains. It assumes
the scenario is valid. Written without reading services/engine or services/graph, so that the
property tests compare two independent readings of the rules.
"""

from __future__ import annotations

import itertools
import json
import unicodedata
from datetime import UTC, datetime, timedelta

from schwifty import IBAN
from schwifty.exceptions import SchwiftyException

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
LIMIT = 10_000
BASE = "USD"  # the gate's currency
WINDOW = timedelta(days=30)  # the gate's aggregate window
UNTRUSTED_KINDS = {"user", "agent"}  # whoever talks to the agent controls these


def norm(text: str) -> str:
    """Case-folded, runs of white space collapsed to one space, ends stripped."""
    return " ".join(text.casefold().split())


# docs/scenario-format.md, "Keys": the look-alike pairs, as the section lists them.
LOOKALIKES = dict(pair.split("→") for pair in (  # noqa: SIM905
    "А→A В→B Е→E К→K М→M Н→H О→O Р→P С→C Т→T У→Y Х→X Ѕ→S І→I Ј→J Ԛ→Q Ԝ→W Һ→H Ӏ→I а→a е→e "
    "і→i ј→j к→k о→o р→p с→c у→y х→x ѕ→s ԁ→d һ→h ӏ→l ԛ→q ԝ→w "
    "Α→A Β→B Ε→E Ζ→Z Η→H Ι→I Κ→K Μ→M Ν→N Ο→O Ρ→P Τ→T Υ→Y Χ→X α→a ι→i κ→k ν→v ο→o ρ→p υ→u "
    "χ→x ϲ→c ϳ→j ɡ→g").split(" "))


def plain(text: str) -> str:
    """NFKC, format characters dropped, digits in ASCII, then each run of letters made only of
    ASCII letters and look-alikes written in Latin."""
    chars = [str(unicodedata.decimal(ch)) if ch.isdecimal() else ch
             for ch in unicodedata.normalize("NFKC", text) if unicodedata.category(ch) != "Cf"]
    out, word = [], []
    for ch in [*chars, ""]:
        if ch.isalpha():
            word.append(ch)
            continue
        if all(c.isascii() or c in LOOKALIKES for c in word):
            word = [LOOKALIKES.get(c, c) for c in word]
        out += [*word, ch]
        word = []
    return "".join(out)


def letters(text: str) -> str:
    """Letters and digits of ``text`` made plain, upper-cased."""
    return "".join(ch.upper() for ch in plain(text) if ch.isalnum())


LEADING = ("bank", "beneficiary", "payee", "vendor", "supplier", "receiving", "destination",
           "target")
LABELS = ("iban", "acct", "account", "a/c", "a.c.", "konto", "compte", "cuenta", "rekening",
          "bic", "swift", "sort code")
AFTER = ("number", "num", "nr", "no", "n°", "#", "id", "code")
NUMBERED = ("no", "nr", "number", "n°", "#")
PUNCT = ":.#=-–—"
OPEN, CLOSE = "([{<", ")]}>"


def _spaces(text: str, i: int) -> int:
    """The index after the spaces from ``i``."""
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _word(text: str, i: int, words: tuple[str, ...]) -> int | None:
    """The index after the first of ``words`` found at ``i`` (ASCII letters in any case, the
    space inside ``sort code`` any run of spaces), or None."""
    for w in words:
        j = i
        for part_no, part in enumerate(w.split(" ")):
            if part_no:
                k = _spaces(text, j)
                if k == j:
                    break
                j = k
            got = text[j:j + len(part)]
            if len(got) < len(part) or any(
                    g != p and not (g.isascii() and g.lower() == p) for g, p in zip(got, part, strict=True)):
                break
            j += len(part)
        else:
            return j
    return None


def _unlabelled(text: str) -> str:
    """``text`` without its leading label (docs/scenario-format.md, "Keys", step 1)."""
    i = j = _spaces(text, 0)
    while (k := _word(text, j, LEADING)) is not None and _spaces(text, k) > k:
        j = _spaces(text, k)
    if (k := _word(text, j, LABELS)) is not None:
        if (after := _word(text, _spaces(text, k), AFTER)) is not None:
            k = after
    elif (k := _word(text, i, NUMBERED)) is not None:
        k = _spaces(text, k)
        if k == len(text) or text[k] not in PUNCT:
            return text
    else:
        return text
    while k < len(text) and (text[k] in PUNCT or text[k].isspace()):
        k += 1
    return text[k:]


def _unbracketed(text: str) -> str:
    """``text`` without one name in brackets, the one at its start if it starts with one,
    else the one at its end ("Keys", step 2)."""
    i = _spaces(text, 0)
    if text[i:i + 1] and text[i] in OPEN:
        j = i + 1
        while j < len(text) and text[j] not in OPEN + CLOSE:
            j += 1
        if j < len(text) and text[j] in CLOSE:
            return text[_spaces(text, j + 1):]
    end = len(text.rstrip())
    if text[end - 1:end] and text[end - 1] in CLOSE:
        j = end - 2
        while j >= 0 and text[j] not in OPEN + CLOSE:
            j -= 1
        if j >= 0 and text[j] in OPEN:
            return text[:j].rstrip()
    return text


def account(text: str) -> str:
    """docs/scenario-format.md, "Keys": the first valid IBAN among the letters and digits
    (tried at every length an IBAN may have), else the letters and digits left once leading
    labels and names in brackets at either end are taken off, step by step."""
    glued = letters(text)
    for i in range(len(glued) - 3):
        if glued[i:i + 2].isascii() and glued[i:i + 2].isalpha() and glued[i + 2:i + 4].isdigit():
            for size in range(15, 35):
                try:
                    return IBAN(glued[i:i + size]).compact
                except (SchwiftyException, ValueError):
                    pass
    rest = plain(text)
    while True:
        shorter = _unbracketed(_unlabelled(rest))
        if shorter == rest or not any(ch.isalnum() for ch in shorter):
            return letters(rest)
        rest = shorter


def states(text: str, key: str) -> bool:
    """A text states an account when its letters and digits hold the account's key, of at
    least 6 characters."""
    return len(key) >= 6 and key in letters(text)


def payee(text: str) -> str:
    """A payee: plain, case-folded, anything but letters and digits
    read as space, runs of space as one."""
    text = plain(text).casefold()
    return " ".join("".join(c if c.isalnum() else " " for c in text).split())


def when(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


class Reference:
    """The state of one tenant after the lines applied so far."""

    def __init__(self, rates: dict[str, float] | None = None) -> None:
        self.rates = {BASE: 1.0, **(rates or {})}  # one unit's worth in BASE
        self.domain: dict[str, str] = {}  # source id -> trust domain
        self.kind: dict[str, str] = {}  # source id -> kind
        self.text: dict[tuple, str] = {}  # observation memory -> its text as written
        self.allowed: list[dict] = []  # what earlier gates allowed: action, at, base, account, payee
        self.key: dict[str, tuple] = {}  # scenario memory id -> memory identity
        self.grounds: dict[tuple, list[tuple]] = {}  # memory -> [(source, at, via)]
        self.justs: dict[tuple, list[list[tuple]]] = {}  # memory -> [[premise memory]]
        self.ret: dict[str, dict] = {}  # retract/withdraw/correct id -> op (+ "active")
        self.actions: dict[str, dict] = {}  # act id -> {amount, payee, executed, approved}
        self.gates: list[dict] = []
        self.last_at = EPOCH
        # memory -> why it is not current ("superseded", "deleted"); no part of the belief rule
        self.replaced: dict[tuple, str] = {}

    def _mem(self, key: tuple) -> tuple:
        self.grounds.setdefault(key, [])
        self.justs.setdefault(key, [])
        return key

    def apply(self, op: dict, line: int = 0) -> None:
        kind = op["op"]
        if kind == "source":
            self.domain[op["id"]] = op.get("domain", op["id"])
            self.kind[op["id"]] = op["kind"]
        elif kind == "observe":
            k = self._mem(("observation", norm(op["text"])))
            self.text.setdefault(k, op["text"])
            self.grounds[k].append((op["source"], when(op["at"]), None))
            self.key[op["id"]] = k
        elif kind == "update":  # a write of the old memory's kind; the old one is replaced
            old = self.key[op["memory"]]
            k = self._mem((old[0], norm(op["text"])))
            self.justs[k].append([self.key[p] for p in op["premises"]])
            self.key[op["id"]] = k
            self.replaced[old] = "superseded"
            self.replaced.pop(k, None)  # written again: current (also when it is the old one)
        elif kind == "delete":
            self.replaced[self.key[op["memory"]]] = "deleted"
        elif kind in ("write", "act"):
            k = ("action", op["id"]) if kind == "act" else (op["kind"], norm(op["text"]))
            self._mem(k)
            self.justs[k].append([self.key[p] for p in op["premises"]])
            self.key[op["id"]] = k
            if kind == "act":
                self.actions[op["id"]] = {
                    "amount": op.get("amount"), "payee": op.get("payee"),
                    "currency": op.get("currency"), "account": op.get("account"),
                    "executed": op["executed"], "approved": False}
        elif kind == "execute":
            self.actions[op["action"]]["executed"] = True
        elif kind in ("retract", "withdraw"):
            self.ret[op["id"]] = dict(op, active=True)
        elif kind == "correct":
            self.ret[op["id"]] = dict(op, active=True)
            self.domain.setdefault(op["by"], op["by"])
            at = when(op["at"]) if "at" in op else self.last_at
            k = self._mem((self.key[op["memory"]][0], norm(op["text"])))
            self.text.setdefault(k, op["text"])
            self.grounds[k].append((op["by"], at, op["id"]))
            self.key[op["id"]] = k
        elif kind == "reinstate":
            self.ret[op["retraction"]]["active"] = False
        elif kind == "approve":
            self.actions[op["action"]]["approved"] = True
        elif kind == "gate":
            if "at" in op:
                self.last_at = max(self.last_at, when(op["at"]))
            now = when(op["at"]) if "at" in op else self.last_at
            self.gates.append(dict(self.gate(op["action"], op.get("args") or {}, now), line=line))
        if "at" in op:
            self.last_at = max(self.last_at, when(op["at"]))

    def gate(self, a: str, args: dict, now: datetime) -> dict:
        """The gate's answer about action ``a``, released by a call with ``args``."""
        act = self.actions[a]
        same = {"amount": lambda x, y: y is not None and abs(x - y) < 0.005,
                "currency": lambda x, y: x == (y or BASE),
                "account": lambda x, y: y is not None and account(x) == account(y),
                "payee": lambda x, y: y is not None and payee(x) == payee(y)}
        if any(not same[f](v, act[f]) for f, v in args.items() if v is not None):
            return {"action": a, "allowed": False, "fragility": 0, "aggregate": 0.0}
        frag = self.fragility(a, act["account"])
        if self.key[a] not in self.status():
            return {"action": a, "allowed": False, "fragility": frag, "aggregate": 0.0}
        # Each earlier allowed action once (an act is one proposal: asked again, it is not
        # added again, and this one's own amount is added below), per account and per payee.
        to_account: dict[str, float] = {}
        to_payee: dict[str, float] = {}
        for d in self.allowed:
            if d["action"] == a or d["at"] < now - WINDOW:
                continue
            if act["account"] and d["account"] == account(act["account"]):
                to_account[d["action"]] = max(to_account.get(d["action"], 0.0), d["base"] or 0.0)
            if act["payee"] and d["payee"] == payee(act["payee"]):
                to_payee[d["action"]] = max(to_payee.get(d["action"], 0.0), d["base"] or 0.0)
        aggregate = max(sum(to_account.values()), sum(to_payee.values()))
        entry = {"action": a, "allowed": False, "fragility": frag, "aggregate": aggregate}
        amount, currency = act["amount"], act["currency"] or BASE
        if amount is None or currency not in self.rates:  # no amount: refused
            return entry
        base = amount if currency == BASE else round(amount * self.rates[currency], 2)
        if base + aggregate > LIMIT and frag < 2:
            return entry
        self.allowed.append({"action": a, "at": now, "base": base,
                             "account": account(act["account"]) if act["account"] else None,
                             "payee": payee(act["payee"]) if act["payee"] else None})
        return dict(entry, allowed=True)

    def status(self, lost_domains: frozenset = frozenset(), counts=None,
               neutral=None) -> set[tuple]:
        """The IN memories: least fixpoint by naive iteration, starting from all OUT. With
        ``counts`` (fragility), a grounding whose memory and source it refuses is lost too;
        with ``neutral``, a grounding it accepts is not lost with its domain."""
        active = [r for r in self.ret.values() if r["active"]]
        withdrawn = {self.key[r["memory"]] for r in active if r["op"] in ("withdraw", "correct")}

        def valid(k, source, at, via) -> bool:
            if via is not None and not self.ret[via]["active"]:
                return False
            if self.domain[source] in lost_domains and not (neutral and neutral(k, source)):
                return False
            if counts is not None and not counts(k, source):
                return False
            return not any(r["op"] == "retract" and r["source"] == source
                           and (r.get("from") is None or when(r["from"]) <= at)
                           and (r.get("to") is None or at <= when(r["to"]))
                           for r in active)

        grounded = {k for k, gs in self.grounds.items() if any(valid(k, *g) for g in gs)}
        inn: set[tuple] = set()
        changed = True
        while changed:
            changed = False
            for k in self.grounds:
                if k in inn or k in withdrawn:
                    continue
                if k in grounded or any(all(p in inn for p in j) for j in self.justs[k]):
                    inn.add(k)
                    changed = True
        return inn

    def upstream(self, k: tuple) -> set[tuple]:
        """``k`` and every memory it rests on, through any justification."""
        seen, todo = {k}, [k]
        while todo:
            for j in self.justs[todo.pop()]:
                for p in j:
                    if p not in seen:
                        seen.add(p)
                        todo.append(p)
        return seen

    def fragility(self, action: str, paid_to: str | None = None) -> int:
        """Least number of trust domains to lose for ``action`` to fall. No account named: a
        user's or an agent's word never counts (lost already). An account named: only a
        grounding of a trusted source on a memory stating the account counts; every other one
        stands whatever is lost, and the action falls when it is OUT or no memory it rests on
        that states the account is IN on counting groundings alone."""
        k = self.key[action]
        domains = sorted(set(self.domain.values()))
        if paid_to is None:
            def trusted(mem: tuple, source: str) -> bool:
                return self.kind.get(source) not in UNTRUSTED_KINDS

            def stands(lost: frozenset) -> bool:
                return k in self.status(lost, trusted)
        else:
            key = account(paid_to)

            def counted(mem: tuple, source: str) -> bool:
                return self.kind.get(source) not in UNTRUSTED_KINDS \
                    and states(self.text.get(mem, ""), key)

            evidence = {m for m in self.upstream(k)
                        if any(counted(m, g[0]) for g in self.grounds[m])}

            def stands(lost: frozenset) -> bool:
                if k not in self.status(lost, neutral=lambda m, s: not counted(m, s)):
                    return False
                return bool(evidence & self.status(lost, counted))

        if not stands(frozenset()):
            return 0
        for size in range(1, len(domains) + 1):
            for lost in itertools.combinations(domains, size):
                if not stands(frozenset(lost)):
                    return size
        raise AssertionError("an IN memory survived losing every trust domain")

    def report(self) -> dict:
        inn = self.status()
        out = {a for a in self.actions if self.key[a] not in inn}
        recalls = [
            {"action": a, "amount": v["amount"], "payee": v["payee"],
             "state": ("withdrawn" if v["executed"] and a not in out else "approved")
             if v["approved"] else "drafted"}
            for a, v in self.actions.items() if v["approved"] or (v["executed"] and a in out)
        ]  # in act order; the stable sort below keeps it for ties
        recalls.sort(key=lambda r: (r["amount"] is None, -(r["amount"] or 0)))
        return {
            "memories": {m: {"status": "IN" if k in inn else "OUT"} for m, k in self.key.items()},
            "held": [a for a, v in self.actions.items() if not v["executed"] and a in out],
            "recalls": recalls,
            "gates": [{k: g[k] for k in ("action", "allowed", "fragility", "aggregate", "line")}
                      for g in self.gates],
            "fragility": {a: self.fragility(a) for a in self.actions},
            "replaced": {m: self.replaced[k] for m, k in self.key.items() if k in self.replaced},
        }


def parse(text: str) -> list[tuple[int, dict]]:
    """(1-based line number, op) for every line that is not blank or a comment."""
    lines = []
    for number, raw in enumerate(text.split("\n"), start=1):
        stripped = raw.strip()
        if stripped and not stripped.startswith("#"):
            lines.append((number, json.loads(stripped)))
    return lines


def run(text: str, rates: dict[str, float] | None = None) -> dict:
    """Apply a valid scenario in order and return the comparable part of its report."""
    ref = Reference(rates)
    for number, op in parse(text):
        ref.apply(op, number)
        ref.status()  # naive: the whole fixpoint again after every line
    return ref.report()
