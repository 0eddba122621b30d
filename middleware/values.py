"""The values a text states, each in one canonical form however it was written: numbers,
amounts, quantities, percentages, dates and times. Pure: text in, facts and spans out.

A fact is a value with what it is of, never a bare small number: "3" alone says nothing, "3
nights" is a fact (``("qty", "3 night")``), and "3 rooms" is another one. What counts as the
same value:

- **Numbers** (``num``): digits with any thousands separators and trailing zeros ("1,500.00",
  "1500", "4.2700" = "4.27"), a scale word ("1.5 million" = "one and a half million" =
  1500000), English number words ("ten thousand", "nine hundred and ninety-nine thousand"). A
  number is a fact alone when it is at least 100 or has a fraction, and is not a year.
- **Amounts**: a number next to a currency, as a symbol or a code ("€1.250,00", "1 250,00 EUR",
  "10 000 kr", "$410m"): the number, whatever the currency (an invoice's total is the same fact
  in the mail and in the note that writes "EUR" for "€"); spaces and dots group thousands here.
  The currency it is stated in is a fact beside it (``cur``, "1450 GBP"): an amount with a
  currency is the same amount without one ("RENT 1,450.00 DR" states what "£1,450.00" does),
  never one in another currency. Without a currency, an amount is one when its thousands are
  grouped by commas or it has two decimals, standing alone ("1,450.00", "318.40").
- **Quantities** (``qty``): a number, in digits or words, and the noun it counts, singular:
  "three nights" = "3 nights", "thirty-six months" = "36-month"; a percentage ("5%", "five per
  cent") is one with the unit "%".
- **Dates** (``date``): year, month, day and weekday, each known or not, as ``y/m/d/w``
  ("2026/12/14/0", "/12/14/", "//14/0"); see ``compatible``. ISO, "14 Dec", "Dec 14",
  "December 14th, 2026", "the 14th", "monday the 14th", "Thu 17/12", "31.12.2026" (dots: day
  first), "14/12/2026" (slashes: a date whose day and month could be either way round,
  "01/12/2026", states both readings), ranges "18-21 Dec 2026" (both ends), "May 2024" (month
  and year). A weekday alone is not a date, nor is a year, nor "the 3rd floor" (an ordinal
  followed by what it ranks).
- **Times** (``time``): "HH:MM" from "09:30", "9.30 am", "9:30am", "15h30", "noon", each end
  of a range ("10:00-11:00", "9-11am"), and said in words: "half past nine", "quarter to ten",
  "nine o'clock", "at nine thirty", "… in the evening" (``_TIME_WORDS``). Time zones are not
  read.
"""

from __future__ import annotations

import datetime
import re
from decimal import Decimal, InvalidOperation

Fact = tuple[str, str]
Span = tuple[int, int]

_SMALL = re.findall(r"\S+", """zero one two three four five six seven eight nine ten eleven
twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen""")
_TENS_WORDS = re.findall(r"\S+", "twenty thirty forty fifty sixty seventy eighty ninety")
UNITS = {w: i for i, w in enumerate(_SMALL)}
TENS = {w: 10 * (i + 2) for i, w in enumerate(_TENS_WORDS)}
SCALES = {"thousand": 10 ** 3, "million": 10 ** 6, "billion": 10 ** 9}
_ORD_SMALL = re.findall(r"\S+", """zeroth first second third fourth fifth sixth seventh eighth
ninth tenth eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth
nineteenth""")
ORDINALS = {w: i for i, w in enumerate(_ORD_SMALL) if i}
ORDINALS.update({w[:-1] + "ieth": v for w, v in TENS.items()})  # twentieth ...
_NUM_WORD = "|".join(sorted([*UNITS, *TENS, *SCALES, "hundred"], key=len, reverse=True))
_ORD_WORD = "|".join(sorted(ORDINALS, key=len, reverse=True))
# A run of number words: "thirty-six", "one and a half million", "a hundred and five".
_WORDS_RUN = re.compile(
    rf"(?=[abefhmnostz])(?<![\w-])(?:an?[ -]+)?(?:{_NUM_WORD})(?:(?:[ -]+|[ -]+and[ -]+(?:an?[ -]+)?)"
    rf"(?:{_NUM_WORD}|half|{_ORD_WORD}))*(?![\w])", re.IGNORECASE)
# An ordinal day: "14th", "1st", "fourteenth", "twenty-first", "thirty first".
_DAY = rf"(?:\d{{1,2}}(?:st|nd|rd|th)?|(?:(?:twenty|thirty)[ -])?(?:{_ORD_WORD}))"
_ORD_DAY = rf"(?:\d{{1,2}}(?:st|nd|rd|th)|(?:(?:twenty|thirty)[ -])?(?:{_ORD_WORD}))"
MONTHS = {m: i for i, names in enumerate(
    (("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",),
     ("jun", "june"), ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"),
     ("oct", "october"), ("nov", "november"), ("dec", "december")), start=1) for m in names}
WEEKDAYS = {w: i for i, names in enumerate(
    (("mon", "monday"), ("tue", "tues", "tuesday"), ("wed", "weds", "wednesday"),
     ("thu", "thur", "thurs", "thursday"), ("fri", "friday"), ("sat", "saturday"),
     ("sun", "sunday"))) for w in names}
_MON = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?" \
       r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_WD = r"(?:mon(?:day)?|tue(?:s(?:day)?)?|wed(?:s|nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?" \
      r"|sat(?:urday)?|sun(?:day)?)\.?"
_YEAR = r"(?:19|20)\d\d"
_TO = r"\s*(?:-|–|—|to|until|till)\s*"
_I = re.IGNORECASE
_ISO = re.compile(r"(?=\d)(?<![\w./-])(?P<y>\d{4})([-/])(?P<m>\d{1,2})\2(?P<d>\d{1,2})"
                  r"(?:[T ](?P<hh>\d{1,2}):(?P<mm>\d{2})(?::\d{2}(?:\.\d+)?)?"
                  r"(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w/-])")
# The patterns start at the digits or the month, where a text has few places to try (a weekday
# before a date is looked for behind it, ``_weekday_before``): run on every write, they are
# several times faster so than with a leading optional weekday.
_NUMERIC = re.compile(rf"(?=\d)(?<![\w./-])(?P<a>\d{{1,2}})(?P<sep>[./])(?P<b>\d{{1,2}})(?P=sep)"
                      rf"(?P<y>{_YEAR})(?![\w/-]|[.,]\d)", _I)
_NUMERIC_SHORT = re.compile(r"(?=\d)(?<![\w./-])(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![\w/-]|[.,]\d)")
_WD_BEFORE = re.compile(rf"(?<![\w])(?P<wd>{_WD}),?\s+(?:the\s+)?$", _I)
_ON_BEFORE = re.compile(rf"(?<![\w])(?:(?P<wd>{_WD}),?|on)\s+$", _I)
_DIGIT_DAY = r"\d{1,2}(?:st|nd|rd|th)?"


def _day_month(day: str, first: str = "") -> re.Pattern:
    """18-21 Dec 2026; 14 Dec; 14-Dec-2026; the 14th of December 2026 (``first``: the letters
    a day in words may start with)."""
    return re.compile(
        rf"(?=[\dtT{first}])(?<![\w.,-])(?:the\s+)?(?P<d>{day})(?:{_TO}(?:the\s+)?(?P<d2>{day}))?"
        rf"(?:\s+(?:of\s+)?|-)(?P<mon>{_MON})(?:(?:,?\s+|-)(?P<y>{_YEAR}))?(?![\w])", _I)


def _month_day(day: str) -> re.Pattern:
    """Dec 18-21, 2026; December 14th; December the 14th 2026."""
    return re.compile(
        rf"(?=[adfjmnosADFJMNOS])(?<![\w])(?P<mon>{_MON})\s+(?:the\s+)?(?P<d>{day})(?:{_TO}(?P<d2>{day}))?"
        rf"(?:,?\s+(?P<y>{_YEAR}))?(?![\w])", _I)


# With a day in digits only (the common case), and with one in words as well ("fourteenth").
_DAY_MONTH = (_day_month(_DIGIT_DAY), _day_month(_DAY, "efnstEFNST"))
_MONTH_DAY = (_month_day(_DIGIT_DAY), _month_day(_DAY))
_MONTH_YEAR = re.compile(rf"(?=[adfjmnosADFJMNOS])(?<![\w])(?P<mon>{_MON}),?\s+(?P<y>{_YEAR})(?![\w])", _I)
# "the 14th", "monday the 14th", "Monday 14th": a day of some month
_THE_DAY = re.compile(rf"(?=[mtwfsMTWFS])(?<![\w])(?:(?P<wd>{_WD}),?\s+(?:the\s+)?(?P<d>{_ORD_DAY})"
                      r"|the\s+(?P<d2>\d{1,2}(?:st|nd|rd|th)))(?![\w])", _I)
# 09:30, 9:30am, 9.30 a.m., 9 pm, 17:05:00, 15h30 (a dot or no minutes only with am/pm)
_TIME = re.compile(
    r"(?=\d)(?<![\w.:])(?P<h>\d{1,2})(?:(?::(?P<m>\d{2})(?::\d{2})?)(?:\s*(?P<ap>[ap])\.?m\.?)?"
    r"|h(?P<m3>\d{2})|(?:\.(?P<m2>\d{2}))?\s*(?P<ap2>[ap])\.?m\.?)(?![\w:])", _I)
# 9-11am, 9:30-11 a.m., 11 to 1pm: the am or pm said once, for both ends
_HOUR_RANGE = re.compile(
    r"(?=\d)(?<![\w.:])(?P<h1>\d{1,2})(?:[:.](?P<m1>[0-5]\d))?\s*(?:-|–|to)\s*(?P<h2>\d{1,2})"
    r"(?:[:.](?P<m2>[0-5]\d))?\s*(?P<ap>[ap])\.?m\.?(?![\w])", _I)
_NAMED_TIMES = {"noon": "12:00", "midday": "12:00", "midnight": "00:00"}
# Times in words: "half past nine", "quarter to ten", "twenty past 9", "ten to six", "nine
# o'clock", "9 o'clock", and "nine thirty" or "at ten fifteen" (an hour and its minutes in
# words, read as a time only with "at" before it or a part of the day after it). Then "am",
# "pm", "in the morning", "in the evening", "tonight": the half of the day; none: the hour as
# said (9 is 09:00), as "9:30" is read.
_HOUR_WORD = "|".join(sorted(_SMALL[1:13], key=len, reverse=True))
_MINUTE_WORD = "|".join(sorted([*_SMALL[1:], *_TENS_WORDS[:4]], key=len, reverse=True))
_MINUTES = rf"(?:(?:{'|'.join(_TENS_WORDS[:2])})[ -](?:{'|'.join(_SMALL[1:10])})|{_MINUTE_WORD}|\d{{1,2}})"
_HOUR = rf"(?:{_HOUR_WORD}|1[0-2]|0?[1-9])"
_HALF_OF_DAY = (r"(?:\s*(?P<ap>[ap])\.?m\.?(?![\w])|\s+(?:in\s+the\s+(?P<part>morning|afternoon"
                r"|evening)|at\s+(?P<night>night)|(?P<tonight>tonight)))?")
_TIME_WORDS = re.compile(
    rf"(?<![\w'])(?P<at>at\s+)?(?:(?P<frac>half|(?:a\s+)?quarter|{_MINUTES})(?P<min>\s+minutes?)?"
    rf"\s+(?P<rel>past|after|to|before)\s+(?P<h>{_HOUR})(?!\s*[:.]\d)"
    rf"|(?P<h2>{_HOUR})\s+o['’]?\s?clock|(?P<h3>{_HOUR_WORD})[ -](?P<m3>oh[ -](?:{'|'.join(_SMALL[1:10])})"
    rf"|(?:{'|'.join(_TENS_WORDS[:4])})(?:[ -](?:{'|'.join(_SMALL[1:10])}))?|{'|'.join(_SMALL[10:])}))"
    rf"(?![\w'])" + _HALF_OF_DAY, _I)
CURRENCY = (r"(?:(?:US|AU|A|CA|C|NZ|HK|S|R)\$|[$€£¥₹₩₽₺]|kr\.?|zł|Kč|Fr\."
            r"|(?:USD|EUR|GBP|CHF|JPY|CAD|AUD|NZD|SEK|NOK|DKK|PLN|CZK|HUF|INR|CNY|HKD|SGD|ZAR|BRL|MXN|TRY|ILS|AED|RON|ISK)(?![A-Za-z]))")
_AMOUNT = r"\d{1,3}(?:[,.'\u00a0\u202f ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d+)?"
_SCALE = r"(?:\s?(?P<{}>million|billion|thousand|mn|bn|m|k)(?![\w]))?"
_MONEY = re.compile(rf"(?=[\d$€£¥₹₩₽₺A-Zkz])(?:(?<![\w.])(?P<c1>{CURRENCY})\s?(?P<a>{_AMOUNT})"
                    rf"{_SCALE.format('s1')}(?![\w])|(?<![\w.,])(?P<b>{_AMOUNT})"
                    rf"{_SCALE.format('s2')}\s?(?P<c2>{CURRENCY}))")
_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "₩": "KRW", "₽": "RUB",
            "₺": "TRY", "r$": "BRL", "us$": "USD", "au$": "AUD", "a$": "AUD", "ca$": "CAD",
            "c$": "CAD", "nz$": "NZD", "hk$": "HKD", "s$": "SGD", "zł": "PLN", "kč": "CZK",
            "fr.": "CHF", "kr": "kr", "kr.": "kr"}


def currency_code(text: str | None) -> str | None:
    """A currency's code, from its symbol or its code: "€" and "EUR" are one currency ("kr"
    stays "kr": it is the Swedish, Norwegian, Danish and Icelandic one)."""
    if not text:
        return None
    folded = text.casefold()
    return _SYMBOLS.get(folded, text.upper() if text.isalpha() and len(text) == 3 else None)
_NUMBER = re.compile(r"(?=[-+\d])(?<![\w.,])[-+]?(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
                     r"(?:\s(?P<s>million|billion|thousand))?(?![\w]|[.,]\d)", _I)
_GROUPED = re.compile(r"(?<![\w.,])(?:(?P<g>\d{1,3}(?:[\u00a0\u202f ]\d{3})+(?:,\d{1,2})?)"
                      r"|(?P<k>\d{1,3}(?:\.\d)?)[kK])(?![\w]|[.,]\d|[\u00a0\u202f ]\d)")
_BARE = re.compile(r"(?<![\w.,/\-:'])(?P<a>\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+\.\d{2})"
                   r"(?![\w%]|[.,/\-:']\w)")
_PERCENT = re.compile(r"(?=\d)(?<![\w.,])(?P<n>\d+(?:[.,]\d+)?)\s?(?:%|per\s?cent\b)", _I)
_PER_CENT = re.compile(r"\s?(?:%|per\s?cent\b)", _I)
_UNIT = re.compile(r"(?:[ \t]|-(?=[^\W\d_]))(?P<u>[^\W\d_]{2,})(?![\w])")
# Words after a number that say nothing of what it counts ("2 of 3", "one of them").
STOP = frozenset(re.findall(r"\S+", """a an the and or but nor of in on at to for from by with
as than then per
via into onto x is are was were be been am will would can could may might must do does did
has have had it its this that these those there here what which who when where why how i you
he she we they me him her us them my your his our their more less most least other another
else times"""))


def same_currency(a: str, b: str) -> bool:
    """Whether two currency codes (``currency_code``) can be one currency: equal, or "kr" and
    the Swedish, Norwegian, Danish or Icelandic krona it may be."""
    return a == b or ("kr" in (a, b) and (b if a == "kr" else a) in _KRONA)


_KRONA = frozenset(("SEK", "NOK", "DKK", "ISK"))


def canonical(x: Decimal) -> str:
    """A number as digits, without trailing zeros or exponent: 4.2700 -> "4.27"."""
    text = format(x, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def significant(x: Decimal, money: bool = False) -> bool:
    """Whether a number alone is a fact: at least 100 or with a fraction; a year is not one
    unless it is an amount, or written with decimals ("1982.00" is no year)."""
    whole = x == x.to_integral_value()
    return not whole or (abs(x) >= 100 and (money or x.as_tuple().exponent < 0
                                            or not 1900 <= x <= 2100))


def number_of(text: str) -> Decimal | None:
    """A number in digits, with commas grouping thousands and a dot before decimals."""
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None


def amount_of(text: str) -> Decimal | None:
    """An amount in digits with any thousands and decimal separators: a last separator followed
    by one or two digits is the decimal point ("1.250,00", "1 260", "12'000.50")."""
    text = text.replace("\u00a0", " ").replace("\u202f", " ")
    m = re.fullmatch(r"(.*?)([.,])(\d+)", text)  # a last separator and what follows it
    whole, frac = (m.group(1), m.group(3)) if m and len(m.group(3)) != 3 else (text, "")
    digits = re.sub(r"[,.' ]", "", whole)
    if not digits.isdigit():
        return None
    return Decimal(f"{digits}.{frac}" if frac else digits)


def words_number(text: str) -> tuple[Decimal, bool] | None:
    """The value of a run of English number words ("thirty-six", "nine hundred and ninety-nine
    thousand", "one and a half million", "twenty-first") and whether it is an ordinal; None
    when the words do not make one number ("one two")."""
    tokens = [t for t in re.split(r"[\s-]+", text.casefold()) if t not in ("and", "a", "an")]
    total, current, last, ordinal = Decimal(0), Decimal(0), "", False
    for tok in tokens:
        if ordinal:
            return None  # nothing follows an ordinal
        if tok in UNITS or tok in ORDINALS and ORDINALS[tok] < 20:
            value = UNITS.get(tok, ORDINALS.get(tok))
            if last in ("unit", "teen") or (last == "tens" and value >= 10):
                return None
            current += value
            last, ordinal = ("teen" if value >= 10 else "unit"), tok in ORDINALS
        elif tok in TENS or tok in ORDINALS:
            if last in ("unit", "teen", "tens"):
                return None
            current += TENS.get(tok, ORDINALS.get(tok, 0))
            last, ordinal = "tens", tok in ORDINALS
        elif tok == "hundred":
            if current >= 100:
                return None
            current, last = (current or 1) * 100, "hundred"
        elif tok in SCALES:
            total, current, last = total + (current or 1) * SCALES[tok], Decimal(0), "scale"
        elif tok == "half":
            current, last = current + Decimal("0.5"), "half"
        else:
            return None
    return total + current, ordinal


def _singular(word: str) -> str:
    word = word.casefold()
    if word in ("percent", "pct"):
        return "%"
    if word in _ABBREVIATED:  # "45 min" = "45 minutes"
        return _ABBREVIATED[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


# Units written short, as the word they stand for (singular).
_ABBREVIATED = {"min": "minute", "mins": "minute", "hr": "hour", "hrs": "hour", "h": "hour",
                "sec": "second", "secs": "second", "wk": "week", "wks": "week",
                "yr": "year", "yrs": "year", "mo": "month", "mos": "month"}


def _day(text: str) -> int | None:
    text = text.casefold()
    digits = re.match(r"\d+", text)
    if digits:
        return int(digits.group())
    found = words_number(text)
    return int(found[0]) if found and found[0] == int(found[0]) else None


def date_key(year: int | None, month: int | None, day: int | None,
             weekday: int | None = None) -> str | None:
    """``y/m/d/w`` with each part known or empty; None when no such date exists. A full date's
    weekday is its own, whatever the text said."""
    if month is not None and not 1 <= month <= 12 or day is not None and not 1 <= day <= 31:
        return None
    if year is not None and month is not None and day is not None:
        try:
            weekday = datetime.date(year, month, day).weekday()
        except ValueError:
            return None
    parts = (year, month, day, weekday)
    return "/".join("" if p is None else str(p) for p in parts)


def compatible(a: str, b: str) -> bool:
    """Whether two dates (``date_key``) can be the same day: no part both state differs, and
    both state the day, or both the month and the year ("the 14th" is 2026-12-14, and
    "Monday the 14th" is too; "Tuesday the 14th" and "14 Jan" are not; "May 2024" is any day
    of May 2024)."""
    pa, pb = a.split("/"), b.split("/")
    if any(x and y and x != y for x, y in zip(pa, pb, strict=True)):
        return False
    return bool(pa[2] and pb[2]) or bool(pa[0] and pb[0] and pa[1] and pb[1])


def _inside(span: Span, spans: list[Span]) -> bool:
    return any(a < span[1] and span[0] < b for a, b in spans)


def _weekday(text: str | None) -> int | None:
    return WEEKDAYS.get(text.casefold().rstrip(".")) if text else None


class _Look:
    """What a text holds, found cheaply, so that only the patterns that can match are run
    (this runs on every write an agent makes): whether it has a digit, and its words."""

    __slots__ = ("digit", "text", "words")

    def __init__(self, text: str) -> None:
        self.text = text
        self.digit = _DIGIT.search(text) is not None
        self.words = set(_LETTERS.split(text.casefold())) if _LETTER.search(text) else set()


_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")
_LETTERS = re.compile(r"[\W\d_]+")
_MONTH_WORDS = frozenset(MONTHS)
_WEEKDAY_WORDS = frozenset(WEEKDAYS)
_ORDINAL_WORDS = frozenset(ORDINALS)
_NUMBER_WORDS = frozenset([*UNITS, *TENS, *SCALES, "hundred"])
_CENT = frozenset(("cent", "percent"))
_SYMBOL_CHARS = frozenset("$€£¥₹₩₽₺")
CODES = frozenset(("kr", "zł", "kč", "fr", "usd", "eur", "gbp", "chf", "jpy", "cad", "aud",
                    "nzd", "sek", "nok", "dkk", "pln", "czk", "huf", "inr", "cny", "hkd", "sgd",
                    "zar", "brl", "mxn", "try", "ils", "aed", "ron", "isk"))


def _dates(look: _Look, out: set[Fact], spans: list[Span]) -> None:
    text = look.text

    def add(span: Span, *keys: str | None) -> None:
        found = [k for k in keys if k]
        if found:
            out.add(("date", "|".join(dict.fromkeys(found))))
            spans.append(span)

    slash = "/" in text
    if look.digit and ("-" in text or slash):
        for m in _ISO.finditer(text):
            add(m.span(), date_key(int(m["y"]), int(m["m"]), int(m["d"])))
            if m["hh"] is not None and int(m["hh"]) < 24 and int(m["mm"]) < 60:
                out.add(("time", f"{int(m['hh']):02d}:{m['mm']}"))
    numeric = []
    if look.digit and (slash or "." in text):
        numeric.append(_NUMERIC)
    if look.digit and slash and (look.words & _WEEKDAY_WORDS or "on" in look.words):
        numeric.append(_NUMERIC_SHORT)
    for pattern in numeric:
        for m in pattern.finditer(text):
            if _inside(m.span(), spans):
                continue
            a, b = int(m["a"]), int(m["b"])
            year = int(m["y"]) if pattern is _NUMERIC else None
            wd, start = _weekday_before(text, m.start(), _ON_BEFORE)
            if pattern is _NUMERIC_SHORT and start == m.start():
                continue  # "17/12" alone may be a fraction: a date after a weekday or "on"
            dm, md = date_key(year, b, a, wd), date_key(year, a, b, wd)
            if a == b or a > 12 or b > 12 or "." in m.group():  # dots: day first
                add((start, m.end()), dm or md)
            elif year is not None or wd is not None:  # either way round: both readings
                add((start, m.end()), dm, md)
    worded = bool(look.words & _ORDINAL_WORDS)
    if not (look.digit or worded) or not look.words & _MONTH_WORDS and not (
            look.words & _WEEKDAY_WORDS or "the" in look.words):
        return
    month = bool(look.words & _MONTH_WORDS)
    for pattern in (_DAY_MONTH[worded], _MONTH_DAY[worded]) if month else ():
        for m in pattern.finditer(text):
            if _inside(m.span(), spans):
                continue
            number = MONTHS.get(m["mon"].casefold().rstrip("."))
            year = int(m["y"]) if m["y"] else None
            day = _day(m["d"])
            if number is None or day is None:
                continue
            wd, start = _weekday_before(text, m.start())
            key = date_key(year, number, day, wd)
            if key is None:
                continue
            add((start, m.end()), key)
            if m["d2"] and (end := _day(m["d2"])) is not None:
                add((start, m.end()), date_key(year, number, end))
    later = [_MONTH_YEAR] if month and look.digit else []
    if look.words & _WEEKDAY_WORDS or "the" in look.words:
        later.append(_THE_DAY)
    for pattern in later:
        for m in pattern.finditer(text):
            if _inside(m.span(), spans):
                continue
            if pattern is _MONTH_YEAR:
                add(m.span(), date_key(int(m["y"]), MONTHS.get(m["mon"].casefold()
                                                               .rstrip(".")), None))
            elif m["d2"] and _counted(text, m.end()):
                continue  # "the 3rd floor": an ordinal of what follows, no day
            elif (day := _day(m["d"] or m["d2"])) is not None:
                add(m.span(), date_key(None, None, day, _weekday(m["wd"])))


def _weekday_before(text: str, start: int, pattern: re.Pattern = _WD_BEFORE) \
        -> tuple[int | None, int]:
    """The weekday written just before a date starting at ``start`` ("Monday, 14 Dec") and
    where it starts (``start`` when there is none)."""
    m = pattern.search(text, max(0, start - 16), start)
    if m is None:
        return None, start
    return _weekday(m["wd"]), m.start()


def _counted(text: str, end: int) -> bool:
    """Whether the word after an ordinal is what it ranks ("the 3rd floor", "the 2nd
    attempt"): any word but one that cannot be ("the 14th instead", "the 14th at 9")."""
    m = _UNIT.match(text, end)
    return m is not None and m["u"].casefold() not in STOP | _NOT_RANKED


_NOT_RANKED = frozenset(("instead", "please", "then", "ok", "okay", "works", "suits", "only",
                         "too", "also", "either", "again", "maybe", "perhaps", "if", "so"))


def _times(look: _Look, out: set[Fact], spans: list[Span]) -> None:
    text = look.text
    out.update(("time", t) for word, t in _NAMED_TIMES.items() if word in look.words)
    if _may_say_time(look):
        _worded_times(text, out, spans)
        spans.sort()
    if not look.digit:
        return
    for m in _HOUR_RANGE.finditer(text) if "m" in text or "M" in text else ():
        ap = m["ap"].casefold()
        h1, h2 = int(m["h1"]), int(m["h2"])
        if not (1 <= h1 <= 12 and 1 <= h2 <= 12) or _inside(m.span(), spans):
            continue
        # "9-11am": both in the morning; "11-1pm": from 11 in the morning to 1 in the afternoon
        first = ap if h1 % 12 <= h2 % 12 else ("a" if ap == "p" else "p")
        for h, mm, half in ((h1, m["m1"], first), (h2, m["m2"], ap)):
            out.add(("time", f"{h % 12 + (12 if half == 'p' else 0):02d}:{mm or '00'}"))
        spans.append(m.span())
    taken = sorted(spans)
    for m in _TIME.finditer(text):
        if _inside(m.span(), taken):
            continue
        hour, minute = int(m["h"]), int(m["m"] or m["m2"] or m["m3"] or 0)
        ap = (m["ap"] or m["ap2"] or "").casefold()
        if ap and not 1 <= hour <= 12 or hour > 23 or minute > 59:
            continue
        hour = hour % 12 + (12 if ap == "p" else 0) if ap else hour
        out.add(("time", f"{hour:02d}:{minute:02d}"))
        spans.append(m.span())


_RELATIVE = frozenset(("past", "after", "to", "before"))
_CUES = frozenset(("at", "am", "pm", "morning", "afternoon", "evening", "night", "tonight"))
_HOUR_WORDS = frozenset(_SMALL[1:13])
_PARTS = frozenset(("half", "quarter", "minute", "minutes"))


def _may_say_time(look: _Look) -> bool:
    """Whether a text's words can say a time in words (``_TIME_WORDS``): the pattern is run
    only then, as most texts have "to" or "at" and no hour said in words."""
    words = look.words
    if not words or "clock" in words or "oclock" in words:
        return bool(words)
    hours = not words.isdisjoint(_HOUR_WORDS)
    if hours:
        return not (words.isdisjoint(_RELATIVE) and words.isdisjoint(_CUES))
    return look.digit and not words.isdisjoint(_RELATIVE) and not words.isdisjoint(_PARTS)


def _worded_times(text: str, out: set[Fact], spans: list[Span]) -> None:
    """Times said in words (``_TIME_WORDS``), each as "HH:MM": the pattern is tried only
    where a word a time can start with stands ("half", "at", an hour or minutes)."""
    done = 0
    for w in _TOKEN.finditer(text):
        if w.start() < done or w.group().casefold() not in _TIME_STARTS \
                and not (w.group().isdigit() and len(w.group()) <= 2):
            continue
        m = _TIME_WORDS.match(text, w.start())
        if m is None or _inside(m.span(), spans):
            continue
        cued = m["at"] or m["ap"] or m["part"] or m["night"] or m["tonight"]
        if m["h3"] is not None:  # "nine thirty": a time only with "at" or a part of the day
            if not cued:
                continue
            hour, minute = _hour(m["h3"]), _minute(re.sub(r"^oh[ -]", "", m["m3"], flags=_I))
        elif m["h2"] is not None:
            hour, minute = _hour(m["h2"]), 0
        else:
            frac = m["frac"].casefold()
            # "twenty past nine" is a time; "ten to six" and "5 past 9" only said as one
            # ("at ten to six", "five minutes to ten"): "three to five days" is a range
            if not (cued or m["min"] or frac == "half" or frac.endswith("quarter")
                    or not frac[:1].isdigit() and m["rel"].casefold() in ("past", "after")):
                continue
            minute = 30 if frac == "half" else 15 if frac.endswith("quarter") else _minute(frac)
            hour = _hour(m["h"])
            if minute is not None and minute >= 60 or frac == "half" and \
                    m["rel"].casefold() in ("to", "before"):
                continue
            if minute is not None and hour is not None and \
                    m["rel"].casefold() in ("to", "before"):
                hour, minute = (hour - 1) or 12, 60 - minute
        if hour is None or minute is None or not 1 <= hour <= 12 or not 0 <= minute <= 59:
            continue
        ap = (m["ap"] or "").casefold()
        if ap == "p" or m["part"] and m["part"].casefold() != "morning" or m["night"] \
                or m["tonight"]:
            hour = hour % 12 + 12
        elif ap == "a":
            hour %= 12
        out.add(("time", f"{hour:02d}:{minute:02d}"))
        spans.append(m.span())
        done = m.end()


_TOKEN = re.compile(r"[^\W_]+")
_TIME_STARTS = frozenset((*_SMALL[1:], *_TENS_WORDS[:4], "half", "quarter", "a", "at"))


def _hour(text: str) -> int | None:
    return int(text) if text.isdigit() else UNITS.get(text.casefold())


def _minute(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    found = words_number(text)
    return int(found[0]) if found and not found[1] and found[0] == int(found[0]) else None


_SCALE_OF = {"million": 10 ** 6, "mn": 10 ** 6, "m": 10 ** 6, "billion": 10 ** 9,
             "bn": 10 ** 9, "thousand": 1000, "k": 1000}


def _numbers(look: _Look, out: set[Fact], spans: list[Span]) -> None:
    text = look.text
    if not look.digit:
        return
    taken = list(spans)
    money = look.words & CODES or not _SYMBOL_CHARS.isdisjoint(text)
    for m in _MONEY.finditer(text) if money else ():
        if _inside(m.span(), taken):
            continue
        x = amount_of(m["a"] or m["b"])
        if x is not None:
            scale = (m["s1"] or m["s2"] or "").casefold()
            x *= _SCALE_OF.get(scale, 1)
            if significant(x, money=True):
                out.add(("num", canonical(x)))
                if (code := currency_code(m["c1"] or m["c2"])) is not None:
                    out.add(("cur", f"{canonical(x)} {code}"))  # the currency it is stated in
                spans.append(m.span())  # no identifier, no phrase runs across an amount
            elif (unit := currency_code(m["c1"] or m["c2"])) is not None:
                out.add(("qty", f"{canonical(x)} {unit}"))  # "CHF 90": small, with its currency
    for m in _PERCENT.finditer(text) if "%" in text or look.words & _CENT else ():
        if not _inside(m.span(), spans) and (x := amount_of(m["n"])) is not None:
            out.add(("qty", f"{canonical(x)} %"))  # in place, as a quantity's words are
    # with no currency, as a statement's column prints it ("1,450.00 DR", "162.00"): thousands
    # grouped by commas or two decimals, standing alone (no code word runs across it)
    for m in _BARE.finditer(text) if "," in text or "." in text else ():
        if not _inside(m.span(), spans) and (x := amount_of(m["a"])) is not None \
                and significant(x, money=True):
            out.add(("num", canonical(x)))
            spans.append(m.span())
    spans.sort()
    # with no currency: thousands grouped by spaces ("4 000", "47 695,83") and "60k"
    for m in _GROUPED.finditer(text) if " " in text or "k" in text or "K" in text else ():
        if _inside(m.span(), spans):
            continue
        x = amount_of(m["g"]) if m["g"] else number_of(m["k"])
        if x is not None and m["k"]:
            x *= 1000
        if x is not None and significant(x):
            out.add(("num", canonical(x)))
            spans.append(m.span())


def numbers(text: str) -> tuple[set[Fact], list[Span]]:
    """The numbers of ``text`` (after ``scan``'s values and the identifiers are blanked out, so
    that "3442-587242" stays one identifier): a number at least 100 or with a fraction, in
    digits or words, is a fact (``num``); any number with the noun it counts is one
    (``qty``). The spans are those of the ``num`` facts."""
    out: set[Fact] = set()
    spans: list[Span] = []
    look = _Look(text)
    for m in _NUMBER.finditer(text) if look.digit else ():
        if (x := number_of(m["n"])) is None or _PER_CENT.match(text, m.end()):
            continue  # a percentage is a quantity (``scan``), in place
        x *= SCALES.get((m["s"] or "").casefold(), 1)
        if significant(x):
            out.add(("num", canonical(x)))
            spans.append(m.span())
        else:
            _quantity(text, m.end(), x, out)
    if not look.words & _NUMBER_WORDS:
        return out, spans
    for m in _WORDS_RUN.finditer(text):
        if _inside(m.span(), spans) or m.group().casefold() in SCALES:
            continue
        found = words_number(m.group())
        if found is None or found[1]:
            continue
        x = found[0]
        if significant(x):
            out.add(("num", canonical(x)))
            spans.append(m.span())
        _quantity(text, m.end(), x, out)
    spans.sort()
    return out, spans


def _quantity(text: str, end: int, x: Decimal, out: set[Fact]) -> None:
    """The noun just after a number (a space or a hyphen apart) is what it counts."""
    if _PER_CENT.match(text, end):
        out.add(("qty", f"{canonical(x)} %"))
        return
    m = _UNIT.match(text, end)
    if m is not None and (unit := m["u"].casefold()) not in STOP:
        out.add(("qty", f"{canonical(x)} {_singular(unit)}"))
        # "2 new monitors", "15 working days": a plural noun after one word that qualifies
        # it (no plural itself) is what is counted too ("2 monitor"): another text may leave
        # the word out
        after = _UNIT.match(text, m.end()) if text[end] != "-" else None
        if after is not None and (noun := after["u"].casefold()) not in STOP \
                and unit not in _ABBREVIATED and _singular(unit) == unit \
                and _singular(noun) != noun:
            out.add(("qty", f"{canonical(x)} {_singular(noun)}"))


def scan(text: str) -> tuple[set[Fact], list[Span]]:
    """The values ``text`` states, as facts, and where they stand (sorted spans: what an
    identifier or a phrase must not run across). Quantities, percentages and small amounts
    leave their words in place: a phrase around them keeps them, so that it stays as
    particular as it was ("units in q3 4", not "units in q3")."""
    out: set[Fact] = set()
    spans: list[Span] = []
    look = _Look(text)
    _dates(look, out, spans)
    spans.sort()
    _times(look, out, spans)
    spans.sort()
    _numbers(look, out, spans)
    spans.sort()
    return out, spans


def might_hold(text: str) -> bool:
    """Whether ``text`` may state a value at all (a digit, or a word a value is written with)."""
    look = _Look(text)
    return look.digit or not look.words.isdisjoint(_HINTS)


_HINTS = _NUMBER_WORDS | _ORDINAL_WORDS

__all__ = ["CODES", "CURRENCY", "MONTHS", "currency_code", "WEEKDAYS", "amount_of", "canonical", "compatible",
           "date_key", "might_hold", "number_of", "numbers", "same_currency", "scan", "significant",
           "words_number"]
