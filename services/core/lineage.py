"""Lineage for identifiers: a write that states a high-value identifier none of its premises
states rests on the tenant's observations that state it.

An agent can have an account number from a channel Rescind does not see (a system prompt built
outside the graph, a cache, its own earlier output). Recorded as resting only on what it was
shown, a note restating an attacker's IBAN would stay IN after the portal that said it is
compromised, with the plan and the payment resting on it. So, for each identifier of a kind the
operator marks as high-value (IBAN and labelled account numbers by default) that a write states
and no premise states, the write's justification is widened: one justification per observation
of the tenant that states the identifier, each needing the write's own premises and that
observation (rule ``lineage``). The belief rule is unchanged: the write is IN while one of those
observations is. When no observation states it, the write is flagged as an ungrounded identifier
and keeps the justification it came with; the gate counts no domain for it (only a grounding
that states the account is evidence, ``rescind.core.evidence``).

Identifiers are compared in the gate's canonical form (``rescind.core.money.normalise_account``,
``states``). Pure: the engine reads the premises' texts and the observations that state each
identifier (``rescind.graph.lineage_queries``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product

from schwifty import registry
from schwifty.exceptions import SchwiftyException

from rescind.core.money import (
    _IBAN_START,
    MIN_ACCOUNT,
    _iban_in,
    compact,
    normalise_account,
    plain,
    states,
)

IBAN, ACCOUNT = "iban", "account"
KINDS = (IBAN, ACCOUNT)  # every kind an observation is indexed under
DEFAULT_KINDS = (IBAN, ACCOUNT)  # the kinds a write is given lineage for, unless configured
# The rules of premises chosen by the interception (docs/wrapping.md): a write whose writer
# named its premises itself (``declared``, a scenario's lines) is taken as it is.
RULES = ("matched", "turn-context", "agent")
KINDS_WITH_LINEAGE = ("belief", "plan", "answer")  # an action's account is the gate's to judge
RULE = "lineage"
MAX_ALTERNATIVES = 16  # justifications one write is widened to, at most

# A labelled account number: the label (as the gate strips it) then digits in groups.
_ACCOUNT = re.compile(
    r"(?<![^\W\d_])(?:acct|account|a/c|konto|compte|cuenta|rekening)"
    r"(?:\s*(?:number|num|nr|no|n°|#|id))?\s*[:.#=\-–—]*\s*"
    r"\d[\d \-./]*\d(?![\w])", re.IGNORECASE)


@functools.lru_cache(maxsize=512)
def _length(country: str) -> int | None:
    try:
        return registry.get_iban_spec(country).iban_length
    except (SchwiftyException, KeyError, ValueError):
        return None


def _may_be_iban(glued: str, start: int) -> bool:
    """A cheap test before schwifty's: a known country, enough characters, the mod-97 check.
    Every observation is read for identifiers as it is written, most of them with none."""
    length = _length(glued[start:start + 2])
    if length is None or start + length > len(glued):
        return False
    candidate = glued[start:start + length]
    if not (candidate.isascii() and candidate.isalnum()):  # "Ë" is a letter, but no IBAN's
        return False
    return int("".join(str(int(c, 36)) for c in candidate[4:] + candidate[:4])) % 97 == 1


_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_DIGIT = re.compile(r"[0-9]")


def _compact(text: str) -> str:
    """``money.compact``, with a fast path for ASCII text (already plain)."""
    return _NOT_ALNUM.sub("", text).upper() if text.isascii() else compact(text)


def ibans(text: str) -> list[str]:
    """Every valid IBAN ``text`` states (checked by schwifty, as the gate checks one), in its
    compact form, in order."""
    glued, out, pos = _compact(text), [], 0
    if len(glued) < 15 or not _DIGIT.search(glued):  # the shortest IBAN (Norway) has 15
        return out
    for m in _IBAN_START.finditer(glued):
        if m.start() < pos or not _may_be_iban(glued, m.start()):
            continue
        if (found := _iban_in(glued[m.start():])) is not None:
            out.append(found)
            pos = m.start() + len(found)
    return out


_ACCOUNT_WORDS = ("acct", "account", "a/c", "konto", "compte", "cuenta", "rekening")


def accounts(text: str) -> list[str]:
    """Every labelled account number ``text`` states (``Acct: 12-34 56``, ``account no.
    12345678``), as its key (``normalise_account``), at least ``MIN_ACCOUNT`` long."""
    text = text if text.isascii() else plain(text)
    folded = text.casefold()
    if not any(w in folded for w in _ACCOUNT_WORDS):
        return []
    keys = (normalise_account(m.group()) for m in _ACCOUNT.finditer(text))
    return [k for k in keys if len(k) >= MIN_ACCOUNT]


def identifiers(text: str, kinds: Iterable[str] = KINDS) -> list[str]:
    """The keys of the identifiers of ``kinds`` that ``text`` states, sorted, once each."""
    kinds = set(kinds)
    found = (ibans(text) if IBAN in kinds else []) + (accounts(text) if ACCOUNT in kinds else [])
    return sorted(set(found))


def applies(kind: str, rule: str, source: str | None, deletes: bool = False) -> bool:
    """Whether a write of ``kind`` whose premises were chosen by ``rule`` is given lineage."""
    return source is None and not deletes and kind in KINDS_WITH_LINEAGE and rule in RULES


def unstated(keys: Iterable[str], premise_texts: Iterable[str]) -> list[str]:
    """The keys no premise text states (``rescind.core.money.states``)."""
    texts = list(premise_texts)
    return [k for k in keys if not any(states(t, k) for t in texts)]


@dataclass
class Facts:
    """What lineage needs of the graph for one batch: the configured ``kinds``, the texts of
    the premises named (those in the graph), and the observations that state each identifier
    the batch's writes state."""

    kinds: tuple[str, ...] = DEFAULT_KINDS
    texts: dict[str, str] = field(default_factory=dict)
    stating: dict[str, list[str]] = field(default_factory=dict)


def wanted(writes: Sequence, kinds: Iterable[str]) -> tuple[set[str], set[str]]:
    """What to read for ``writes`` (planning.Write): the identifiers that writes given lineage
    state, and their premises."""
    kinds, keys, premises = tuple(kinds), set(), set()
    for w in writes:
        if applies(w.kind, w.rule, w.source, w.deletes) and (found := identifiers(w.text, kinds)):
            keys.update(found)
            premises.update(w.premises)
    return keys, premises


def alternatives(premises: tuple[str, ...], keys: Sequence[str],
                 stating: Mapping[str, Sequence[str]],
                 limit: int = MAX_ALTERNATIVES) -> list[tuple[str, ...]]:
    """The premise sets a write resting on ``premises`` and stating ``keys`` (none stated by a
    premise) is given: its premises and one observation stating each key, for each choice (at
    most ``limit``, the observations taken in sorted order). Empty when some key is stated
    by no observation: the write is an ungrounded identifier."""
    choices = [sorted(set(stating.get(k, ()))) for k in keys]
    if not keys or any(not c for c in choices):
        return []
    out = []
    for pick in product(*choices):
        out.append(tuple(sorted(set(premises) | set(pick))))
        if len(out) == limit:
            break
    return out


__all__ = ["ACCOUNT", "DEFAULT_KINDS", "Facts", "IBAN", "KINDS", "MAX_ALTERNATIVES", "RULE",
           "RULES", "accounts", "alternatives", "applies", "ibans", "identifiers", "unstated",
           "wanted"]
