"""What a value states, for matching: its facts and its words.

Facts are values, not lines: identifiers (and a code word of letters and digits inside a
longer one: "BA1326" of "BA1326 LHR-EDI"; short codes such as "P-31", "AR7"), amounts (any
separators, with their currency), dates and times (09:30, 9.30 am, 10:00-11:00, ISO dates,
20 Nov 2026), small numbers with the word that says what they count ("gate 22", "bay 14",
"6°C", "41 GW"), names however short (runs of capitalised words and each of their words:
"Harbor Lane Bakery", "Hull", or of words in capitals: "BLUE HERON FOODS LTD"; a word any
sentence may start with is none), the phrases between values (addresses, titles) and the
two-word phrases inside them ("aisle seat", "gluten free": ``_pairs``). Labels
are not facts: "Bank account:" before a value, one or two words just before it ("bank account
GB33 …", "IBAN GB33 …"), or before a phrase.

Also the words of a value (``words_of``, ``key_words``) and what a user's message states
(``statements``) or only asks about (``asked_names``). ``attribution`` matches all of these
against a written value. Pure: plain values in, plain values out.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import json
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from . import values as _v

_PHRASE_MIN, _PHRASE_MAX = 8, 160  # a phrase shorter is too common, longer is a document
_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
# An identifier: code words (with a digit, or in capitals) joined by single spaces, dashes,
# dots or slashes ("ZZ97 QKRB 0000 9034", "INV-1002", "10.1038/s41586"), with at least one
# digit in it. Plain words end it: in "my IBAN is now PT50 0002" the identifier is "PT50 0002".
_CODE = r"(?:[A-Za-z]{1,3}-\d[A-Za-z0-9]*|[A-Za-z]*\d[A-Za-z0-9]*|[A-Z][A-Z0-9]+)(?![A-Za-z0-9])"
_IDENT = re.compile(rf"(?<![A-Za-z0-9]){_CODE}(?:[ \-./]{_CODE})*")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?![\w.])")
_SEGMENT = re.compile(r"[\n;|]+|(?<=[.!?])\s+")
_MAX_DEPTH = 32  # deeper nesting is not read (it runs in the agent's own store call)
_MAX_PARSED = 64 * 1024  # a longer string is matched as text, not parsed as JSON or a repr
_START = 4  # an identifier has at least 4 characters; matching indexes them by the first 4


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


def words_of(value: object) -> frozenset[str]:
    """The content words of a value (case-folded, of three characters or more, not words any
    text uses such as "the" or "please"), for the fallback when no fact matches."""
    text = " ".join(str(x) for x in _leaves(value) if not isinstance(x, bool))
    return _content(_words(text.casefold()))


def key_words(value: object) -> set[tuple[str, str]]:
    """The words of the keys of a structured value, as ("key", word): a key names what its
    value is, its unit or currency too ("limit_nok": 250000 is an amount in NOK, "distanceKm"
    a distance in km), so a write saying "NOK 250,000" has "NOK" from that item, not from
    whoever else said "NOK" (``FactIndex.add``'s ``terms``)."""
    keys: list[str] = []
    for _ in _leaves(value, keys=keys):
        pass
    if not keys:
        return set()
    text = " ".join(_CAMEL.sub(" ", k) for k in keys)
    return {("key", w) for w in _content(_words(text.replace("_", " ").casefold()))
            | {w for w in _words(text.replace("_", " ").casefold()) if w in _v.CODES}}


_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _content(words: Iterable[str]) -> frozenset[str]:
    return frozenset(w for w in words if len(w) > 2
                     and w not in _FUNCTION_WORDS and w not in _COMMON_CAPITALS)



def statements(value: object) -> set[tuple[str, str]]:
    """The words a message states as facts about its writer: ("said", word) for each content
    word of its statements ("I took up rowing"), not of its questions ("What to pack?") nor
    its requests ("Save me a reminder", "… please"). A single lowercase word is a fact only
    when a user states it and nothing else a write uses has it (``FactIndex.attribute``)."""
    out: set[tuple[str, str]] = set()
    if _topic(value) is not None:  # a topic to work on states nothing (``asked_names``)
        return out
    for leaf in _leaves(value):
        for sentence in _SENTENCE.split(str(leaf)):
            words = _words(sentence.casefold())
            if not words or sentence.rstrip().endswith("?") or words[0] in _REQUESTS \
                    or "please" in words or _ASKING.match(" ".join(words)):
                continue
            out |= {("said", w) for w in words_of(sentence)}
    return out


def asked_names(value: object) -> set[tuple[str, str]]:
    """The names a message only asks about ("What's the weather in Leeds?"): a question asks,
    it states nothing, so a note naming Leeds from the forecast does not rest on it. A name
    its other sentences state as well is not among them."""
    asked: set[tuple[str, str]] = set()
    stated: set[tuple[str, str]] = set()
    for leaf in _leaves(value):
        for sentence in _SENTENCE.split(str(leaf)):
            question = sentence.rstrip().endswith("?")
            for clause in _CLAUSE.split(sentence) if question else [sentence]:
                # "I'm in Paris until Tuesday, what's the weather?": the user's own clause
                words = _words(clause.casefold())[:1]
                mine = not question or (words and words[0] in _FIRST_PERSON)
                (stated if mine else asked).update(_names(clause))
            # a question's or a request's pairs ("can you book an aisle seat?") ask for a thing
            words = _words(sentence.casefold())
            requested = question or bool(words) and (
                words[0] in _REQUESTS or "please" in words or _ASKING.match(" ".join(words)))
            (asked if requested else stated).update(_pairs(sentence))
    topic = _topic(value)
    if topic is not None:  # a topic to work on ("heat pumps in norway") asks, states nothing
        asked |= {f for f in _segment_facts(topic) if f[0] in ("text", "name", "pair")}
    return asked - stated


def _topic(value: object) -> str | None:
    """A message that is only a topic: one short line, no sentence (no end mark, no digit, no
    word of the writer's own such as "I" or "my"), "heat pumps in norway". What a write
    restates of it is what it was asked to be about, not something the user stated: neither
    its phrases and names nor its words (``statements``) are the user's facts. A write that
    matches nothing else still falls back to it by shared words (a terse statement, "allergic
    to peanuts", reads as a topic)."""
    text = " ".join(str(x) for x in _leaves(value)).strip()
    if not text or len(text) > _TOPIC_CHARS or "\n" in text or text[-1] in ".!?;:" \
            or any(c.isdigit() for c in text):
        return None
    words = _words(text.casefold())
    if not 1 < len(words) <= _TOPIC_WORDS or _FIRST_PERSON & set(words):
        return None
    return text



# A label ("Bank account:", "Remit address:"): one to five words of letters, then a colon and
# white space. It is the document's wording, not a fact: "09:30" has digits, so is no label.
_LABEL = re.compile(r"(?:^|(?<=[\s,;(]))[^\W\d_]+(?:[ \-][^\W\d_]+){0,4}\s*:(?=\s|$)")
# Capitals before an identifier that starts with digits, apart by a space ("IBAN GB33 …",
# "ACCT 0417 1643"): a label; "INV-1002" and "MSA-2026-001" keep theirs.
_LEADING_WORDS = re.compile(r"^(?:[A-Z]+ )+(?=[A-Za-z]*\d)")
_VALUE_KINDS = ("time", "qty", "path")
# A file's path ("billing/vat.py", "src/app/main.ts"): folders and a name with its extension;
# an identifier, however few digits it has.
_PATH = re.compile(r"(?<![\w./\-])(?:[\w\-]+/)+[\w\-]+\.[A-Za-z][A-Za-z0-9]{0,5}(?![\w/])")
_TOPIC_WORDS, _TOPIC_CHARS = 8, 80  # the most a topic has (``_topic``)
_LABEL_WORDS = 2  # words just before a value, or before a phrase, that may be its label


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each of ``spans`` blanked (a separator nothing matches across)."""
    if not spans:
        return text
    out, at = [], 0
    for a, b in spans:
        out += [text[at:a], "\x1f" * (b - a)]
        at = b
    out.append(text[at:])
    return "".join(out)


def _inside(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    """Whether ``span`` overlaps one of ``spans`` (sorted, not overlapping each other)."""
    i = bisect.bisect_left(spans, (span[1], -1)) - 1
    return i >= 0 and spans[i][1] > span[0]


def _segment_facts(segment: str) -> set[tuple[str, str]]:
    """A segment's facts are its values: identifiers, amounts, dates and times, and the phrases
    between them (names, addresses, titles). Labels are not facts: a labelled value ("Bank
    account: GB33 …") is the value, and two words just before a value ("bank account GB33 …",
    "pay to …") are its unmarked label."""
    out: set[tuple[str, str]] = set()
    parts, start = [], 0
    for m in _LABEL.finditer(segment):
        parts.append(segment[start:m.start()])
        start = m.end()
    parts.append(segment[start:])
    for part in parts:
        found, spans = _v.scan(part)
        out |= found
        out |= {("path", m.group().casefold()) for m in _PATH.finditer(part)}
        for m in _IDENT.finditer(_masked(part, spans)):  # a value ends an identifier
            token = _LEADING_WORDS.sub("", m.group())  # "IBAN GB33 …": the label is no part
            compact = _compact(token)
            if len(compact) >= _START and any(c.isdigit() for c in compact) \
                    and not _is_plain_number(token):
                out.add(("id", compact))
                spans.append(m.span())
                # "BA1326 LHR-EDI": a code word of letters and digits, long enough to stand
                # alone, is an identifier of its own too (an IBAN's 4-character groups are not)
                if " " in token:
                    out |= {("id", c) for g in token.split(" ")
                            if len(c := _compact(g)) > _START and _mixed(c)}
            elif _short_id(compact):  # "P-31", "AR7", "m-41": a short code, matched whole
                out.add(("id", compact))
                spans.append(m.span())
        spans.sort()
        masked = _masked(part, spans)
        out |= _quantities(masked)
        found, more = _v.numbers(masked)
        out |= found
        spans = sorted(spans + more)
        pieces, at = [], 0
        for a, b in spans:
            if a >= at:
                pieces.append((part[at:a], True))  # followed by a value
                at = b
        pieces.append((part[at:], False))
        for piece, before_value in pieces:
            words = _words(piece.casefold())
            if before_value and len(words) <= _LABEL_WORDS:
                continue  # an unmarked label
            out |= _pairs(piece, label=before_value)
            shown = _words(piece) if len(words) > 2 else []
            for drop in range(_LABEL_WORDS + 1):  # and an address or a name less one or two
                rest = words[drop:]  # leading words, which may be its label ("ship to …")
                phrase = " ".join(rest)
                if len(rest) < 2 or len(phrase) < _PHRASE_MIN:
                    break
                if drop and not (any(c.isdigit() for c in phrase)
                                 or all(w[:1].isupper() for w in shown[drop:])):
                    continue
                if len(phrase) <= _PHRASE_MAX:
                    out.add(("text", phrase))
    return out | _names(segment)


def _pairs(piece: str, label: bool = False) -> set[tuple[str, str]]:
    """The phrases of two plain words inside a piece of text (an adjective and its noun, two
    nouns: "aisle seat", "vegetarian meal", "gluten free"), as ("pair", "aisle seat"): a
    thing stated in words, matched when a write restates it (``FactIndex``'s ``pairs``). Both
    words are lowercase (a capitalised run is a name), adjacent with no punctuation between,
    and neither is a word any text uses ("the", "next", "please", a number's or a date's
    word); the last two words before a value are its label ("bank account GB33 …"), no pair."""
    out: set[tuple[str, str]] = set()
    runs = [run.split() for run in _PUNCTUATION.split(piece)]
    if label:
        runs[-1] = runs[-1][:-_LABEL_WORDS]
    for words in runs:
        for a, b in itertools.pairwise(words):
            if _pair_word(a) and _pair_word(b):
                out.add(("pair", f"{a} {b}"))
    return out


def _pair_word(word: str) -> bool:
    """A plain lowercase word of three letters or more that is no word any text uses, nor an
    adverb ("renews automatically" says how, in the writer's own wording, not what)."""
    return len(word) > 2 and word.isalpha() and word.islower() and word not in _PLAIN \
        and not word.endswith("ly")


def pairs_of(words: list[str]) -> set[str]:
    """The two-word phrases a written value's words (case-folded, ``_words``) may restate: each
    two adjacent words that can be a pair's (``_pairs``)."""
    return {f"{a} {b}" for a, b in itertools.pairwise(words) if _pair_word(a) and _pair_word(b)}


def _mixed(compact: str) -> bool:
    """Whether a compact code holds letters and digits both."""
    return any(c.isdigit() for c in compact) and any(c.isalpha() for c in compact)


def _short_id(compact: str) -> bool:
    """A code of three letters and digits ("p31", "ar7"), not an ordinal ("2nd") nor a time."""
    return len(compact) == _START - 1 and _mixed(compact) \
        and _ORDINAL.fullmatch(compact) is None


def _quantities(text: str) -> set[tuple[str, str]]:
    """Small numbers, which alone are too common, with the word that says what they count:
    its label just before ("gate 22", "bay 14", "level -2") or its unit just after ("6°C",
    "41 GW", "2 Dec"): each pair is a fact, as the words it is written with."""
    out: set[tuple[str, str]] = set()
    for pattern in (_LABELLED_NUMBER, _NUMBER_UNIT):
        for m in pattern.finditer(text):
            word = m["word"].casefold()
            if word in _FUNCTION_WORDS or _number(m["n"]) is not None:
                continue
            out.add(("text", " ".join(_words(m.group().casefold()))))
    return out


def _names(segment: str) -> set[tuple[str, str]]:
    """Names: runs of capitalised words ("Harbor Lane Bakery", "Hull", "Dr Okafor"), each run
    and each of its words, less the words any sentence may start with ("I'm", "Please",
    "What"). A name is a fact however short: "moving to Hull" uses the name the user gave."""
    out: set[tuple[str, str]] = set()
    run: list[str] = []
    end = -1

    def close() -> None:
        words = [w for w in run if w not in _COMMON_CAPITALS]
        while run and run[0] in _COMMON_CAPITALS:
            run.pop(0)
        while run and run[-1] in _CONNECTORS:
            run.pop()
        out.update(("name", w) for w in words if w not in _CONNECTORS)
        # a language named in its own tongue is the one named in English ("auf Deutsch")
        out.update(("name", _LANGUAGES[w]) for w in words if w in _LANGUAGES)
        if len(run) > 1:
            out.add(("name", " ".join(run)))
        run.clear()

    if sum(c.isupper() for c in segment) > 3:
        out |= _capital_names(segment)
    for m in _NAME_WORD.finditer(segment):
        word = m.group()
        if word[-2:] in ("'s", "’s"):
            word = word[:-2]
        titled = word[:1].isupper() and any(c.islower() for c in word[1:]) \
            and not _dated(segment, m.start(), m.end(), word)
        joined = m.start() - end == 1 and segment[end] == " "
        folded = word.casefold()
        if not folded.isalpha():  # "Wi-Fi", "O'Neill": as its words
            folded = " ".join(_words(folded))
        if titled and folded:
            if not (run and joined):
                close()
            run.append(folded)
        elif run and joined and folded in _CONNECTORS:
            run.append(folded)
        else:
            close()
        end = m.end()
    close()
    return out


def _capital_names(segment: str) -> set[tuple[str, str]]:
    """Names written in capitals, as registers and forms print them ("NØRDLYS FISKERI AS",
    "STADT KÖLN"): a run of two to five words in capitals (no currency code), one of them four
    letters or more, is a name with each of its leading runs ("nørdlys fiskeri"), and each of
    its words of four letters or more. A single word in capitals ("URGENT", "IBAN") is none."""
    out: set[tuple[str, str]] = set()
    runs: list[list[str]] = [[]]
    end = -1
    for m in _NAME_WORD.finditer(segment):
        word, a, b = m.group(), m.start(), m.end()
        whole = (not a or not segment[a - 1].isalnum()) and \
            (b == len(segment) or not segment[b].isalnum())
        capital = whole and len(word) > 1 and word.isupper() \
            and word.casefold() not in _v.CODES
        if not capital or not (a - end == 1 and segment[end] == " "):
            runs.append([])
        if capital:
            runs[-1].append(word.casefold())
        end = b
    for run in runs:
        if not 2 <= len(run) <= _CAPITAL_RUN or max(map(len, run)) < 4:
            continue
        out.update(("name", " ".join(run[:k])) for k in range(2, len(run) + 1))
        out.update(("name", w) for w in run if len(w) >= 4 and w not in _COMMON_CAPITALS)
    return out


_CAPITAL_RUN = 5  # the most words a name in capitals has (a longer run is a shouted sentence)


def _dated(segment: str, start: int, end: int, word: str) -> bool:
    """Whether ``word`` (at ``start:end``) is the month or weekday of a date ("14 Dec",
    "Monday the 14th", "May 2024"): part of the date, no name; "May" or "Sun" alone may be."""
    folded = word.casefold().rstrip(".")
    if folded not in _v.MONTHS and folded not in _v.WEEKDAYS:
        return False
    return _DATE_AFTER.match(segment, end) is not None \
        or _DATE_BEFORE.search(segment[max(0, start - 12):start]) is not None


_DATE_AFTER = re.compile(r"\.?,?\s*(?:the\s+)?\d")
_DATE_BEFORE = re.compile(r"\d(?:st|nd|rd|th)?\s*(?:of\s+)?$", re.IGNORECASE)


def _capitals(text: str) -> tuple[set[str], set[str]]:
    """The words of ``text`` (case-folded) written with a capital letter: those inside a
    sentence, where a single word is a name ("moving to Hull"), and all of them, with those
    that start a sentence ("User prefers …"), where only a name of several words is one. A
    word starts a sentence when only punctuation stands between it and the sentence's start."""
    inside: set[str] = set()
    every: set[str] = set()
    if text.isascii():  # the common case, by one pass over the capitals only
        for m in _ASCII_CAPITAL.finditer(text):
            word = m.group().casefold()
            words = [word] if word.isalpha() else _words(word.removesuffix("'s"))
            every.update(words)
            k = m.start()
            while k and not text[k - 1].isalnum():
                k -= 1
            gap = text[k:m.start()]
            if k and not any(c in gap for c in "\n;|") and _SENTENCE_END.search(gap) is None:
                inside.update(words)
        return inside, every
    for segment in _SEGMENT.split(text):
        at = 0
        for m in _NAME_WORD.finditer(segment):
            word = m.group()
            if word[:1].isupper():
                folded = word.casefold()
                words = [folded] if folded.isalpha() else \
                    _words(folded.removesuffix("'s").removesuffix("’s"))
                every.update(words)
                if any(c.isalnum() for c in segment[:m.start()]) if at == 0 else True:
                    inside.update(words)
            at = m.end()
    return inside, every


# A sentence ends at an end mark, a line's end, or an emoticon (":(", ";)", ":-D"), as a chat
# message's sentences often do.
_SENTENCE = re.compile(r"[\n;]+|(?<=[.!?])\s+|\s*(?<!\w)[:;]-?[()DPp]+(?=\s|$)\s*")
# How requests and questions start: their words are no statement of the user's.
_REQUESTS = frozenset(re.findall(r"\S+", """
what what's when where which who whom whose why how can could would should will shall may
might must do does did is are was were have has please let save remember remind read write
send pay check find get tell show add schedule book buy make keep call look give take use
set update summarise summarize answer reply pick search list create delete cancel note"""))
# A request put as a statement: "I want …", "I'd like …", "we need …", "I would …".
_ASKING = re.compile(r"(?:i|we)(?:'d| would| want| need| wish)\b|(?:i|we) (?:'d|would) like")
_ASCII_CAPITAL = re.compile(r"(?<![A-Za-z])(?<![A-Za-z]['\-])[A-Z][A-Za-z]*(?:['\-][A-Za-z]+)*")
_SENTENCE_END = re.compile(r"[.!?]\s")
_CLAUSE = re.compile(r"\s*[,:;()\u2013\u2014]\s*|\s+-\s+")
_FIRST_PERSON = frozenset(("i", "i'm", "i've", "i'll", "i'd", "my", "we", "we're", "we've",
                           "our"))
_NAME_WORD = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
_LABELLED_NUMBER = re.compile(
    r"(?<![^\W_])(?P<word>[^\W\d_]{3,})[ \t]+[-+−]?(?P<n>\d{1,3})(?![^\W_]|[.,:/]\d)")
_NUMBER_UNIT = re.compile(
    r"(?<![\w.,:/])(?<!\w[\-−])[-+−]?(?P<n>\d{1,3}(?:[.,]\d{1,2})?)[ \t]?°?(?P<word>[^\W\d_]{1,5})(?![^\W_])")
# Words that start sentences and label lines whatever the text is about: never a name alone.
_COMMON_CAPITALS = frozenset(re.findall(r"\S+", """
i i'm i've i'd i'll me my we we're our us you you're your he she it it's they their them his
her its this that these those there here the a an some any each every all no not none yes
ok okay sure what what's when where which who whom whose why how can could would should will
shall may might must do does did is are was were be been have has had get got and but or so
if then also as at by for from in into of on onto to with without about after before over
under up down out off per via than until please thanks thank hi hello hey dear regards best
cheers kind sincerely today tomorrow yesterday now just new note notes see let mr mrs ms dr
prof sir madam re fwd fw save remember remind read write send pay check find get tell show
add schedule book buy make keep call look give take use set update summarise summarize answer
reply pick search list create delete cancel"""))
# Languages as their speakers name them, and in English.
_LANGUAGES = {"deutsch": "german", "français": "french", "francais": "french",
              "español": "spanish", "espanol": "spanish", "castellano": "spanish",
              "italiano": "italian", "português": "portuguese", "portugues": "portuguese",
              "nederlands": "dutch", "polski": "polish", "svenska": "swedish",
              "norsk": "norwegian", "dansk": "danish", "suomi": "finnish", "čeština": "czech",
              "česky": "czech", "slovenčina": "slovak", "magyar": "hungarian",
              "română": "romanian", "türkçe": "turkish", "ελληνικά": "greek",
              "русский": "russian", "українська": "ukrainian", "日本語": "japanese",
              "中文": "chinese", "한국어": "korean", "العربية": "arabic", "עברית": "hebrew"}
_CONNECTORS = frozenset(("of", "de", "du", "da", "del", "der", "den", "van", "von", "la", "le",
                         "upon", "on", "y", "and"))
# Words before a number that do not say what it counts ("in 2", "at 3", "to 14").
_FUNCTION_WORDS = frozenset(re.findall(r"\S+", """
the and for but nor yet from with into onto upon about above below after before over under
than then till until since per via are was were has had have its our you your their his her
all any each every only just some not now out off also into within without between among
around near next last this that these those there here when what which who whose how why
"""))


# Punctuation that ends a two-word phrase ("aisle seat, vegetarian meal": no "seat vegetarian").
_PUNCTUATION = re.compile(r"[^\w\s'’\-]+|\s[\-–—]\s")
# Words no two-word phrase has: words any text uses, requests, and the words of values.
_PLAIN = _FUNCTION_WORDS | _COMMON_CAPITALS | _REQUESTS | _v.STOP | _v.CODES \
    | frozenset(_v.MONTHS) | frozenset(_v.WEEKDAYS) | frozenset(_v.UNITS) | frozenset(_v.TENS) \
    | frozenset(re.findall(r"\S+", """
    more most less very much many such same other another own only also still even really
    always never often usually sometimes again already almost about around thing things stuff
    way ways lot lots kind sort part bit good great nice best better well like want wants need
    needs know think said says new old one ones first last next previous current following
    time times day days week weeks month months year years today tonight morning evening
    please thanks thank hello dear regards yes okay sure"""))


def _leaves(value: object, depth: int = 0, keys: list | None = None) -> Iterable[object]:
    """Strings and numbers inside a value; a string holding JSON (or a repr of a dict or list)
    is read as what it holds, so an item prints the same facts however it was rendered.
    ``keys``: where the keys of its dicts are put, if given."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, dict):
        if keys is not None:
            keys.extend(k for k in value if isinstance(k, str))
        for v in value.values():
            yield from _leaves(v, depth + 1, keys)
    elif isinstance(value, list | tuple | set | frozenset):
        for v in value:
            yield from _leaves(v, depth + 1, keys)
    elif isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in "[{" and len(stripped) <= _MAX_PARSED:  # JSON, or a repr
            for parse in (json.loads, ast.literal_eval):
                try:
                    parsed = parse(stripped)
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    continue
                if isinstance(parsed, dict | list | tuple | set):
                    yield from _leaves(parsed, depth + 1, keys)
                    return
        elif ("\n{" in stripped or "\n[" in stripped) and len(stripped) <= _MAX_PARSED:
            # lines of text and of JSON (a Command's messages, then the rest of its update):
            # each line read as what it holds
            for line in stripped.split("\n"):
                yield from _leaves(line, depth + 1, keys)
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
    """The canonical form of a number worth matching alone (``values.significant``)."""
    if isinstance(value, str):
        x = _v.number_of(value)
    else:
        try:
            x = Decimal(repr(float(value)))
        except (ValueError, OverflowError, InvalidOperation):
            return None
    if x is None or not x.is_finite() or not _v.significant(x):
        return None
    return _v.canonical(x)
