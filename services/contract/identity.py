"""Canonical names of sources: one spelling per source, whatever the model or a sender typed.

A source is named from a template filled with a tool's arguments (``portal:{vendor}``), and
the model chooses those arguments: ``northwind``, ``Northwind``, `` northwind``, a full-width
``ｎｏｒｔｈｗｉｎｄ`` or one with a zero-width space inside must all name the same source, or a
compromise of one spelling leaves the others standing. So every name is canonicalised where it
is built (the middleware, per argument, with the normaliser the configuration names) and again
where it enters the server (every event's ``source``, whoever sent it): both sides use the
functions here, which are pure and idempotent (``f(f(x)) == f(x)``).

``text``   Unicode NFKC, case folding, invisible characters removed (zero-width spaces and
           joiners, bidi marks and embeddings, the BOM, the soft hyphen), white space stripped
           and collapsed to one space, and Latin look-alikes read as Latin (``latin``).
``host``   a host name, or the host of a URL: lower case, IDNA (punycode), no trailing dot,
           no port or user.
``email``  an e-mail address: its display name and angle brackets dropped, ``mailto:`` too,
           the local part as ``text``, the domain as ``host``.
``iban``   an IBAN (or any account number written in groups): compact and upper case, a
           leading ``IBAN`` label dropped, full-width digits folded.

``source_name`` canonicalises a whole name (``text``, and no space beside ``:``, ``/`` or
``@``): what the server applies to every name,
so a name built by a client that does not canonicalise still lands on the same source. Case
folding applies to the whole name, so an IBAN inside a name reads in lower case there.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from typing import Literal
from urllib.parse import urlsplit

Normaliser = Literal["text", "host", "email", "iban"]
NORMALISERS: tuple[str, ...] = ("text", "host", "email", "iban")

# Invisible characters that change a string without changing how it reads: zero-width space,
# non-joiner, joiner, left-to-right and right-to-left marks (U+200B-U+200F), bidi embeddings
# and overrides (U+202A-U+202E), word joiner and invisible operators (U+2060-U+2064), bidi
# isolates (U+2066-U+2069), the byte order mark / zero-width no-break space (U+FEFF), the soft
# hyphen (U+00AD), the combining grapheme joiner (U+034F), the Mongolian vowel separator
# (U+180E) and the Arabic letter mark (U+061C).
INVISIBLE = re.compile("[\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                       "\u2066-\u2069\ufeff]")
_SPACE = re.compile(r"\s+")

# Cyrillic and Greek letters drawn like a Latin letter (Unicode's confusables, the letters an
# attacker reaches for: "nоrthwind" with a Cyrillic о reads as "northwind").
_LOOKALIKE = str.maketrans(
    "АВЕКМНОРСТУХЅІЈԚԜҺӀаеіјкорсуxхѕԁһӏԛԝɡ"
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορυχϲϳ",
    "ABEKMHOPCTYXSIJQWHIaeijkopcyxxsdhlqwg"
    "ABEZHIKMNOPTYXaikvopuxcj")
_LOOKS_LATIN = frozenset(chr(c) for c in _LOOKALIKE)


def latin(value: str) -> str:
    """``value`` with each word (a run of letters) that mixes Latin look-alikes into Latin
    letters, or is made of look-alikes only, written in Latin: "nоrthwind" (a Cyrillic о)
    and "аррӏе" (all Cyrillic) read as "northwind" and "apple". A word with any other letter
    of its script ("сбербанк", "Müller") is a word of that language and stays as it is
    (Unicode TR39's mixed-script and whole-script confusables, for the Cyrillic and Greek
    letters that matter)."""
    if value.isascii():
        return value

    out = []
    for is_word, run in itertools.groupby(value, str.isalpha):
        w = "".join(run)
        out.append(w.translate(_LOOKALIKE) if is_word and all(
            ch.isascii() or ch in _LOOKS_LATIN for ch in w) else w)
    return "".join(out)


def _settled(step):
    """``step`` applied until its result no longer changes (at most a few rounds): removing a
    character can let NFKC compose what it kept apart, so one pass is not always idempotent."""

    @functools.wraps(step)
    def settled(value: str) -> str:
        for _ in range(8):
            again = step(value)
            if again == value:
                break
            value = again
        return value

    return functools.lru_cache(maxsize=8192)(settled)


@_settled
def text(value: str) -> str:
    """NFKC, case-folded, invisible characters removed, white space stripped and collapsed,
    Latin look-alikes in Latin (before case folding too: a Cyrillic Н folds to н, no
    look-alike of h)."""
    value = INVISIBLE.sub("", value)
    value = latin(unicodedata.normalize("NFKC", value))
    value = latin(unicodedata.normalize("NFKC", value.casefold()))
    value = INVISIBLE.sub("", value)  # NFKC can compose nothing into these, but be sure
    return _SPACE.sub(" ", value).strip()


@_settled
def host(value: str) -> str:
    """A host name (or a URL's host): lower case, IDNA-encoded (punycode), no trailing dot,
    no port, no user. A value that is no host name stays as ``text`` gives it."""
    value = text(value)
    if "://" in value or value.startswith("//"):
        try:
            netloc = urlsplit(value if "://" in value else "x:" + value).netloc
        except ValueError:
            netloc = value
        value = netloc or value
    value = value.rsplit("@", 1)[-1]  # user:password@
    if value.startswith("["):  # an IPv6 literal, port after the bracket
        return value.split("]", 1)[0] + "]" if "]" in value else value
    if value.count(":") == 1:
        value = value.split(":", 1)[0]
    value = value.replace(" ", "").rstrip(".")
    labels = []
    for label in value.split("."):
        try:
            labels.append(label.encode("idna").decode("ascii") if label else label)
        except UnicodeError:  # too long, or not a label: kept as text
            labels.append(label)
    return ".".join(labels)


@_settled
def email(value: str) -> str:
    """An e-mail address: display name and angle brackets dropped (``Ann <a@b.com>``), a
    ``mailto:`` prefix too; local part as ``text``, domain as ``host``."""
    value = text(value)
    if "<" in value:
        inner = value.rsplit("<", 1)[1]
        value = inner.split(">", 1)[0]
    value = value.strip().strip("<>\"' ")
    if value.startswith("mailto:"):
        value = value[len("mailto:"):].split("?", 1)[0]
    local, at, domain = value.rpartition("@")
    if not at:
        return value.replace(" ", "")
    return f"{local.replace(' ', '')}@{host(domain)}"


_IBAN_SEPARATORS = re.compile(r"[\s\-./_:]+")


@_settled
def iban(value: str) -> str:
    """An IBAN (or an account number in groups): compact and upper case, full-width digits
    folded, a leading ``IBAN`` label dropped. Not checked: a name is a name."""
    value = latin(unicodedata.normalize("NFKC", INVISIBLE.sub("", value))).strip()
    value = latin(unicodedata.normalize("NFKC", _IBAN_SEPARATORS.sub("", value).upper()))
    while value.startswith("IBAN") and len(value) > 4:
        value = value[4:]
    return value


_BY_KIND = {"text": text, "host": host, "email": email, "iban": iban}


def normalise(value: object, kind: str = "text") -> str:
    """``value`` (an argument) in canonical form by the named normaliser (``NORMALISERS``)."""
    try:
        how = _BY_KIND[kind]
    except KeyError:
        raise ValueError(f"unknown normaliser {kind!r}; one of {', '.join(NORMALISERS)}") from None
    return how(value if isinstance(value, str) else str(value))


_AROUND_SEPARATOR = re.compile(r" ?([:/@]) ?")


@functools.lru_cache(maxsize=8192)
def source_name(name: str) -> str:
    """The canonical form of a whole source name (or trust domain): ``text``, and no space
    beside a separator (``:``, ``/``, ``@``), so that ``portal: northwind``, built from an
    argument with a space in front, is ``portal:northwind``."""
    return _AROUND_SEPARATOR.sub(r"\1", text(name))


def spellings_agree(a: str, b: str) -> bool:
    """Two spellings name the same source."""
    return source_name(a) == source_name(b)


__all__ = ["INVISIBLE", "NORMALISERS", "Normaliser", "email", "host", "iban", "latin", "normalise",
           "source_name", "spellings_agree", "text"]
