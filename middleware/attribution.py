"""Which delivered items a written value uses: the premises of a write, by content.

An agent rarely copies what it read verbatim: it prints a store value as a repr, a tool result
as compact JSON, one field of a record, or an f-string of its own. So a write's premises are not
found by looking for whole texts in the model's input, but by matching the *content leaves* of
each delivered item (identifiers such as account and invoice numbers, amounts, phrases such as
names and addresses) against the written value, however either was rendered.

What a value states (its facts: identifiers, amounts, dates and times, names, phrases; its
words; what a user's message states) is read by ``facts``; this module matches it.

A user states facts in plain words too ("I took up rowing"): the content words of a user's
statements (not of questions or requests) are looked at for the words of a write that none of
its matched premises has; each such word makes the messages stating it needed as well.

Facts, not items, are the unit: items that state the same fact are alternatives (either would
justify it: OR), different facts are all needed (AND). The justifications of a write are the
minimal sets of items that cover every fact it uses. Pure: plain values in, ids out.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from . import values as _v
from .facts import (
    _IDENT,
    _LABEL_WORDS,
    _NUMBER,
    _PATH,
    _START,
    _VALUE_KINDS,
    _capitals,
    _compact,
    _compact_folded,
    _content,
    _leaves,
    _masked,
    _number,
    _short_id,
    _words,
    asked_names,
    facts,
    key_words,
    pairs_of,
    statements,
    words_of,
)

MATCHED = "matched"  # the premises were found in the written value
MAX_JUSTIFICATIONS = 16  # alternatives kept per write (the smallest first)
_LEAD = 30  # words looked at on either side of the digits: a phrase holds at most this many
_ID_LEAD = 8  # code words an identifier may have before its first digit ("ABC DEF 1234")


@dataclass(frozen=True)
class Delivered:
    """One item handed to the agent: a store memory or a tool result, by its memory id."""

    id: str
    value: object


@dataclass(frozen=True)
class Attribution:
    justifications: list[tuple[str, ...]]  # each: every premise needed; the list: alternatives
    rule: str  # how they were found ("matched"; empty list and "none" when nothing matched)

    @property
    def premises(self) -> list[str]:
        return sorted({p for j in self.justifications for p in j})


def attribute(written: object, delivered: Sequence[Delivered],
              limit: int = MAX_JUSTIFICATIONS) -> Attribution:
    """The justifications of ``written`` among ``delivered``: every minimal set of items that
    states every fact of theirs the written value uses."""
    index = FactIndex()
    for item in delivered:
        index.add(item.id, facts(item.value), words_of(item.value))
    return index.attribute(written, limit=limit)


def attribute_facts(written: object, stated_by: Mapping[str, Iterable[tuple[str, str]]],
                    limit: int = MAX_JUSTIFICATIONS) -> Attribution:
    """``attribute`` with each item's ``facts`` computed already."""
    index = FactIndex()
    for item, item_facts in stated_by.items():
        index.add(item, item_facts)
    return index.attribute(written, limit=limit)


class FactIndex:
    """Which delivered items state which fact, kept as a run's items arrive, so that matching
    a write looks its numbers, the starts of its words and its words up, instead of scanning
    the written value once per fact."""

    def __init__(self) -> None:
        self.numbers: dict[str, set[str]] = {}
        self.currencies: dict[str, dict[str, set[str]]] = {}  # number -> item -> currencies
        self.ids: dict[str, set[str]] = {}
        self.ids_by_start: dict[str, list[str]] = {}  # first 4 characters -> ids
        self.phrases: dict[str, set[str]] = {}  # " phrase ", as it stands among the words
        self.values: dict[tuple[str, str], set[str]] = {}  # ("time"|"qty", canonical) -> items
        self.dates: dict[str, set[str]] = {}  # a date ("values.date_key") -> items
        self.by_first: dict[bool, dict[str, list[str]]] = {True: {}, False: {}}  # holds a digit?
        # -> first word -> " phrase "s
        self.names: dict[str, set[str]] = {}  # "harbor lane bakery" -> items
        self.names_by_first: dict[str, list[str]] = {}  # first word -> names
        self.short_ids: dict[str, set[str]] = {}  # "p31", "ar7": matched as whole identifiers
        self.pairs: dict[str, set[str]] = {}  # "aisle seat" -> the items stating it
        self.said: dict[str, set[str]] = {}  # a word a user's statement says -> the messages
        self.terms: dict[str, set[str]] = {}  # item -> its content words

    def add(self, item: str, item_facts: Iterable[tuple[str, str]],
            terms: Iterable[str] = ()) -> None:
        """``item`` states ``item_facts``; ``terms``: its content words (``words_of``), by
        which a write's words that no fact explains are told apart."""
        if terms:
            self.terms.setdefault(item, set()).update(terms)
        for kind, key in item_facts:
            if kind == "said":
                self.said.setdefault(key, set()).add(item)
            elif kind == "key":  # a word of a key: no fact, a word the item has
                self.terms.setdefault(item, set()).add(key)
            elif kind == "pair":
                self.pairs.setdefault(key, set()).add(item)
            elif kind == "num":
                self.numbers.setdefault(key, set()).add(item)
            elif kind == "cur":  # "1450 GBP": the currency the item states that amount in
                n, code = key.split(" ", 1)
                self.currencies.setdefault(n, {}).setdefault(item, set()).add(code)
            elif kind in _VALUE_KINDS:
                self.values.setdefault((kind, key), set()).add(item)
            elif kind == "date":
                self.dates.setdefault(key, set()).add(item)
            elif kind == "name":
                if key not in self.names:
                    self.names_by_first.setdefault(key.split(" ", 1)[0], []).append(key)
                self.names.setdefault(key, set()).add(item)
            elif kind == "id" and len(key) < _START:
                self.short_ids.setdefault(key, set()).add(item)
            elif kind == "id":
                if key not in self.ids:
                    self.ids_by_start.setdefault(key[:_START], []).append(key)
                self.ids.setdefault(key, set()).add(item)
            else:
                padded = f" {key} "
                if padded not in self.phrases:
                    digit = any(c.isdigit() for c in key)
                    self.by_first[digit].setdefault(key.split(" ", 1)[0], []).append(padded)
                self.phrases.setdefault(padded, set()).add(item)

    def attribute(self, written: object, exclude: str | Iterable[str] | None = None,
                  limit: int = MAX_JUSTIFICATIONS, target: _Target | None = None) \
            -> Attribution:
        """``target``: ``written`` read already (``read_written``), e.g. outside a lock;
        ``exclude``: items that are no premise of it (itself, and the writes of the model turn
        that wrote it: one model output, none of its writes was shown to the other)."""
        t = target if target is not None else _Target(written)
        exclude = {exclude} if isinstance(exclude, str) else set(exclude or ())
        families = [self._in_currency(n, items, t.currencies.get(n)) for n in t.numbers
                    if (items := self.numbers.get(n)) is not None]
        families = [f for f in families if f]
        families += [items for v in t.values if (items := self.values.get(v)) is not None]
        families += [items for date in t.dates if (items := self._dated(date))]
        if t.starts is None:  # not plain ASCII words: every fact is looked for in the text
            families += [items for key, items in self.ids.items() if key in t.compact]
            said = [key for key in self.phrases if key in t.words]
        else:  # an identifier starts where a word near the digits starts; a phrase with a word
            near, joined = t.near_words, t.near_compact
            families += [self.ids[key] for p in t.starts
                         for key in self.ids_by_start.get(joined[p:p + _START], ())
                         if joined.startswith(key, p)]
            said = [key for word in t.word_set
                    for key in self.by_first[False].get(word, ()) if key in t.words]
            said += [key for word in t.near_set
                     for key in self.by_first[True].get(word, ()) if key in near]
        families += _unlabelled(said, self.phrases)
        families += [items for key in t.short_ids if (items := self.short_ids.get(key))]
        inside, every = t.capitals
        named = {key for word in every for key in self.names_by_first.get(word, ())
                 if (f" {key} " in t.words if " " in key else word in inside)}
        families += [self.names[key] for key in _whole_names(named)]
        if exclude:
            families = [f - exclude if not exclude.isdisjoint(f) else f for f in families]
            families = [f for f in families if f]
        phrased = {p: f for p in t.pairs if (items := self.pairs.get(p))
                   and (f := items - exclude)} if self.pairs else {}
        if not families and not phrased:
            return Attribution([], "none")
        covers = minimal_covers(families, limit)
        if phrased:  # things stated in words that no premise found has: their items too
            covers = self._with_phrases(covers, phrased, limit)
        if self.said:  # words no premise has, which a user's statement says: it is needed too
            covers = self._with_statements(covers, t.content_words, exclude, limit)
        return Attribution(covers, MATCHED)

    def _in_currency(self, n: str, items: set[str], codes: set[str] | None) -> set[str]:
        """The items stating the number ``n`` that the write's amount can be: an amount the
        write states in a currency (``codes``) is the same amount stated without one, never one
        an item states only in other currencies ("£1,450.00" is not "$1,450.00")."""
        stated = self.currencies.get(n)
        if not codes or not stated:
            return items
        return {item for item in items if item not in stated
                or any(_v.same_currency(a, b) for a in stated[item] for b in codes)}

    def _dated(self, date: str) -> set[str]:
        """The items stating a date that can be ``date`` (``values.compatible``): one fact,
        however partly either states it ("the 14th" of "2026-12-14"); a date read either way
        round ("01/12/2026") is either reading."""
        return {item for key, items in self.dates.items()
                if any(_v.compatible(a, b) for a in date.split("|") for b in key.split("|"))
                for item in items}

    def _with_phrases(self, covers: list[tuple[str, ...]], phrased: dict[str, set[str]],
                      limit: int) -> list[tuple[str, ...]]:
        """Each justification, with the items stating the two-word phrases of the write
        ("aisle seat") whose words none of its premises has: a phrase a premise found by its
        values has a word of already adds nothing ("2 of 3 detached houses" written "detached
        homes"), so a phrase only shared with another item never outranks the item that
        states it with the rest."""
        grown: set[frozenset[str]] = set()
        for cover in covers:
            used = set().union(*(self.terms.get(p, ()) for p in cover))
            needed = [f for p, f in phrased.items()
                      if f.isdisjoint(cover) and used.isdisjoint(p.split(" "))]
            grown.update(frozenset(cover) | set(more)
                         for more in (minimal_covers(needed, limit) if needed else [()]))
        minimal = [c for c in grown if c and not any(o < c for o in grown)]
        return [tuple(sorted(c)) for c in sorted(minimal, key=lambda c: (len(c), sorted(c)))
                ][:limit]

    def _with_statements(self, covers: list[tuple[str, ...]], words: frozenset[str],
                         exclude: set[str], limit: int) -> list[tuple[str, ...]]:
        """Each justification, with the user's messages whose statements say the words of the
        write that none of its premises has (in any form: "delayed" has "delay"); then only
        the minimal ones."""
        grown: set[frozenset[str]] = set()
        for cover in covers:
            used = set().union(*(self.terms.get(p, ()) for p in cover))
            stems = {w[:_STEM] for w in used if len(w) >= _STEM}
            needed = [items - exclude for w in words - used
                      if w[:_STEM] not in stems and (items := self.said.get(w))]
            needed = [f for f in needed if f]
            grown.update(frozenset(cover) | set(more)
                         for more in (minimal_covers(needed, limit) if needed else [()]))
        minimal = [c for c in grown if not any(o < c for o in grown)]
        return [tuple(sorted(c)) for c in sorted(minimal, key=lambda c: (len(c), sorted(c)))
                ][:limit]


def _unlabelled(said: list[str], phrases: dict[str, set[str]]) -> list[set[str]]:
    """The families of the phrases matched: a phrase that is another matched one with one or
    two words before it (its label: "ship to 4 elm court york") is that phrase, so the items
    stating either are alternatives for it."""
    found = set(said)
    if len(found) < 2:
        return [phrases[p] for p in found]

    def labelled(p: str, q: str) -> bool:
        return q != p and p.endswith(q) and p.count(" ") - q.count(" ") <= _LABEL_WORDS

    return [set().union(*(phrases[p] for p in found if p == q or labelled(p, q)))
            for q in found if not any(labelled(q, r) for r in found)]


def _whole_names(named: set[str]) -> set[str]:
    """The names matched, less those that are words of a longer one matched ("Köln" of
    "DEKRA Köln-Ost"): the write names the longer one, and the shorter is no fact of its own
    (an item naming "Stadt Köln" does not state "Köln-Ost")."""
    if len(named) < 2:
        return named
    padded = [f" {n} " for n in named if " " in n]
    return {n for n in named if not any(f" {n} " in p and p != f" {n} " for p in padded)}



def read_written(written: object) -> _Target:
    """``written`` read for matching (``FactIndex.attribute``'s ``target``), and its content
    words (``content_words``, as ``words_of``): done once per write, by whoever holds no lock."""
    return _Target(written)



def minimal_covers(families: Iterable[set[str]], limit: int = MAX_JUSTIFICATIONS) \
        -> list[tuple[str, ...]]:
    """Every minimal set that meets each of ``families`` (the smallest ``limit`` of them)."""
    covers: list[frozenset[str]] = [frozenset()]
    for family in sorted({frozenset(f) for f in families}, key=lambda f: (len(f), sorted(f))):
        grown: set[frozenset[str]] = set()
        for c in covers:
            if c & family:
                grown.add(c)
            else:
                grown.update(c | {x} for x in family)
        minimal = [c for c in grown if not any(o < c for o in grown)]
        covers = sorted(minimal, key=lambda c: (len(c), sorted(c)))[:limit]
    return [tuple(sorted(c)) for c in covers]


class _Target:
    """The written value, rendered for matching: its words, compact, numbers, and (for plain
    ASCII words) the set of its words and the first characters from each word's start on."""

    def __init__(self, written: object) -> None:
        leaves = [x for x in _leaves(written) if not isinstance(x, bool)]
        text = " ".join(str(x) for x in leaves)
        folded = text.casefold()
        words = _words(folded)
        self.words = " " + " ".join(words) + " "
        self.compact = _compact_folded(folded)
        self.word_set = set(words)
        self.content_words = _content(self.word_set)  # words_of(written)
        self.pairs = pairs_of(words)  # the two-word phrases it may restate
        self.capitals = _capitals("\n".join(str(x) for x in leaves))  # where names are
        self.starts: list[int] | None = None
        span = _digit_span(text)
        self.short_ids = {c for m in _IDENT.finditer(span)  # a short code has a digit
                          if _short_id(c := _compact(m.group()))}
        if folded.isascii() and "'" not in folded:
            # Identifiers and phrases holding a digit are looked for near the digits only: an
            # identifier starts at most a few code words before its first digit and a phrase
            # holds at most a few dozen words (joined, the words there are their compact).
            before, _, after = text.partition(span) if span else ("", "", "")
            lead = _words(" ".join(before.rsplit(maxsplit=_LEAD)[-_LEAD:]).casefold())
            middle = _words(span.casefold())
            near = lead + middle + _words(" ".join(after.split(maxsplit=_LEAD)[:_LEAD])
                                          .casefold())
            self.near_words = " " + " ".join(near) + " "
            self.near_set = set(near)
            self.near_compact = "".join(near)
            offsets = list(itertools.accumulate(map(len, near), initial=0))
            first = max(0, len(lead) - _ID_LEAD)  # an identifier starts by its digits
            self.starts = offsets[first:len(lead) + len(middle) + 1]
        self.numbers = {n for m in _NUMBER.finditer(span)
                        if (n := _number(m.group())) is not None}
        found: set[tuple[str, str]] = set()
        if _v.might_hold(text):  # values in any notation, in digits or in words
            found, spans = _v.scan(text)
            found |= _v.numbers(_masked(text, spans))[0]
        self.values = {(k, v) for k, v in found if k in _VALUE_KINDS}
        if "/" in text:
            self.values |= {("path", m.group().casefold()) for m in _PATH.finditer(text)}
        self.dates = [v for k, v in found if k == "date"]
        self.currencies: dict[str, set[str]] = {}  # number -> the currencies it is stated in
        for k, v in found:
            if k == "cur":
                n, code = v.split(" ", 1)
                self.currencies.setdefault(n, set()).add(code)
        self.numbers |= {v for k, v in found if k == "num"}
        self.numbers |= {n for x in leaves if isinstance(x, int | float)
                         and (n := _number(x)) is not None}


def _digit_span(text: str) -> str:
    """The part of ``text`` from the word holding its first digit to the one holding its last
    (cut at white space, so a number's neighbours stay what they were): prose is not scanned."""
    found = [i for d in "0123456789" if (i := text.find(d)) >= 0]
    if not found:
        return ""
    first, last = min(found), max(text.rfind(d) for d in "0123456789")
    start = max(text.rfind(" ", 0, first), text.rfind("\n", 0, first)) + 1
    ends = [i for i in (text.find(" ", last), text.find("\n", last)) if i >= 0]
    return text[start:min(ends) if ends else len(text)]



_STEM = 5  # a word of a write is another's inflection when their first 5 letters agree



__all__ = ["MATCHED", "Attribution", "Delivered", "FactIndex", "attribute", "attribute_facts",
           "asked_names", "facts", "key_words", "minimal_covers", "read_written", "statements", "words_of"]
