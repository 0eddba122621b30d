"""Which delivered items a written value uses: the premises of a write, by content.

An agent rarely copies what it read verbatim: it prints a store value as a repr, a tool result
as compact JSON, one field of a record, or an f-string of its own. So a write's premises are not
found by looking for whole texts in the model's input, but by matching the *content leaves* of
each delivered item (identifiers such as account and invoice numbers, amounts, phrases such as
names and addresses) against the written value, however either was rendered.

Facts, not items, are the unit: items that state the same fact are alternatives (either would
justify it: OR), different facts are all needed (AND). The justifications of a write are the
minimal sets of items that cover every fact it uses. Pure: plain values in, ids out.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

MATCHED = "matched"  # the premises were found in the written value
MAX_JUSTIFICATIONS = 16  # alternatives kept per write (the smallest first)
_PHRASE_MIN, _PHRASE_MAX = 8, 160  # a phrase shorter is too common, longer is a document
_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
# An identifier: code words (with a digit, or in capitals) joined by single spaces, dashes,
# dots or slashes ("ZZ97 QKRB 0000 9034", "INV-1002", "10.1038/s41586"), with at least one
# digit in it. Plain words end it: in "my IBAN is now PT50 0002" the identifier is "PT50 0002".
_CODE = r"(?:[A-Za-z]*\d[A-Za-z0-9]*|[A-Z][A-Z0-9]+)(?![A-Za-z0-9])"
_IDENT = re.compile(rf"(?<![A-Za-z0-9]){_CODE}(?:[ \-./]{_CODE})*")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?![\w.])")
_SEGMENT = re.compile(r"[\n;|]+|(?<=[.!?])\s+")
_MAX_DEPTH = 32  # deeper nesting is not read (it runs in the agent's own store call)
_MAX_PARSED = 64 * 1024  # a longer string is matched as text, not parsed as JSON or a repr
_START = 4  # an identifier has at least 4 characters; matching indexes them by the first 4
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
    return attribute_facts(written, {item.id: facts(item.value) for item in delivered}, limit)


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
        self.ids: dict[str, set[str]] = {}
        self.ids_by_start: dict[str, list[str]] = {}  # first 4 characters -> ids
        self.phrases: dict[str, set[str]] = {}  # " phrase ", as it stands among the words
        self.by_first: dict[bool, dict[str, list[str]]] = {True: {}, False: {}}  # holds a digit?
        # -> first word -> " phrase "s

    def add(self, item: str, item_facts: Iterable[tuple[str, str]]) -> None:
        for kind, key in item_facts:
            if kind == "num":
                self.numbers.setdefault(key, set()).add(item)
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

    def attribute(self, written: object, exclude: str | None = None,
                  limit: int = MAX_JUSTIFICATIONS) -> Attribution:
        t = _Target(written)
        families = [items for n in t.numbers if (items := self.numbers.get(n)) is not None]
        if t.starts is None:  # not plain ASCII words: every fact is looked for in the text
            families += [items for key, items in self.ids.items() if key in t.compact]
            families += [items for key, items in self.phrases.items() if key in t.words]
        else:  # an identifier starts where a word near the digits starts; a phrase with a word
            near, joined = t.near_words, t.near_compact
            families += [self.ids[key] for p in t.starts
                         for key in self.ids_by_start.get(joined[p:p + _START], ())
                         if joined.startswith(key, p)]
            families += [self.phrases[key] for word in t.word_set
                         for key in self.by_first[False].get(word, ()) if key in t.words]
            families += [self.phrases[key] for word in t.near_set
                         for key in self.by_first[True].get(word, ()) if key in near]
        if exclude is not None:
            families = [f - {exclude} if exclude in f else f for f in families]
            families = [f for f in families if f]
        if not families:
            return Attribution([], "none")
        return Attribution(minimal_covers(families, limit), MATCHED)


def facts(value: object) -> set[tuple[str, str]]:
    """The content leaves of a value that can identify what it says: ("id", compact),
    ("num", canonical number), ("text", normalised phrase)."""
    out: set[tuple[str, str]] = set()
    for leaf in _leaves(value):
        if isinstance(leaf, bool):
            continue
        if isinstance(leaf, int | float):
            if (n := _number(leaf)) is not None:
                out.add(("num", n))
            continue
        for segment in _SEGMENT.split(leaf):
            out |= _segment_facts(segment)
    return out


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
        self.starts: list[int] | None = None
        span = _digit_span(text)
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


def _segment_facts(segment: str) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for m in _IDENT.finditer(segment):
        token = m.group()
        compact = _compact(token)
        if len(compact) >= 4 and any(c.isdigit() for c in compact) and not _is_plain_number(token):
            out.add(("id", compact))
    for m in _NUMBER.finditer(segment):
        if (n := _number(m.group())) is not None:
            out.add(("num", n))
    # A phrase is what a segment says; of a labelled one ("Bank account: ..."), the value: the
    # label is the document's wording, not a fact, and a note may word it otherwise.
    words = _words((segment.split(":", 1)[1] if ":" in segment else segment).casefold())
    phrase = " ".join(words)
    if len(words) >= 2 and _PHRASE_MIN <= len(phrase) <= _PHRASE_MAX:
        out.add(("text", phrase))
    return out


def _leaves(value: object, depth: int = 0) -> Iterable[object]:
    """Strings and numbers inside a value; a string holding JSON (or a repr of a dict or list)
    is read as what it holds, so an item prints the same facts however it was rendered."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v, depth + 1)
    elif isinstance(value, list | tuple | set | frozenset):
        for v in value:
            yield from _leaves(v, depth + 1)
    elif isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in "[{" and len(stripped) <= _MAX_PARSED:  # JSON, or a repr
            for parse in (json.loads, ast.literal_eval):
                try:
                    parsed = parse(stripped)
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    continue
                if isinstance(parsed, dict | list | tuple | set):
                    yield from _leaves(parsed, depth + 1)
                    return
        yield value
    elif isinstance(value, int | float):
        yield value
    elif value is not None:
        yield str(getattr(value, "content", value))


_NOT_ALNUM = re.compile(r"[\W_]+")
# ASCII text (the common case) is cut by str.translate, ten times faster than a regex here.
_ASCII_DROP = {c: None for c in range(128) if not chr(c).isalnum()}
_ASCII_SPACE = {c: " " for c in range(128) if not chr(c).isalnum() and chr(c) != "'"}


def _compact(text: str) -> str:
    """Letters and digits only, case-folded: "GB33 BUKB-2020" and "gb33bukb2020" compare equal."""
    return _compact_folded(text.casefold())


def _compact_folded(folded: str) -> str:
    return folded.translate(_ASCII_DROP) if folded.isascii() else _NOT_ALNUM.sub("", folded)


def _words(folded: str) -> list[str]:
    """The words of a case-folded text (an apostrophe inside a word keeps it whole)."""
    if not folded.isascii():
        return _WORDS.findall(folded)
    tokens = folded.translate(_ASCII_SPACE).split()
    if "'" not in folded:
        return tokens
    return [w for w in (t.strip("'") for t in tokens) if w]


def _is_plain_number(token: str) -> bool:
    return _NUMBER.fullmatch(token.replace(" ", "")) is not None


def _number(value: object) -> str | None:
    """A canonical form of an amount worth matching: at least 100, or with a fraction; bare
    years are left out (every dated item has one)."""
    try:
        x = float(str(value).replace(",", "")) if isinstance(value, str) else float(value)
    except ValueError:
        return None
    if x != x or abs(x) == float("inf"):
        return None
    whole = x == int(x)
    if whole and (abs(x) < 100 or 1900 <= x <= 2100):
        return None
    return f"{x:.2f}"


__all__ = ["MATCHED", "Attribution", "Delivered", "FactIndex", "attribute", "attribute_facts",
           "facts",
           "minimal_covers"]
