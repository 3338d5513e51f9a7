"""Numeric claims: a number with its unit or currency in a text, and what it is about.

Owns claim extraction (`extract_claims`: "5999 元", "$799", "120 Hz", "3.5%", each
with the subject words near it; `extract_item_claims` for a result list), the
extraction half of the `facts:` settings (`ClaimSettings`), the key deciding which
claims are about the same thing (`subject_key`) and `score_claims`, which measures
extraction on a labelled set. It reads text only (snippets and titles); it does no
I/O, reads no clock and knows nothing of domains or agreement, which
`sleuth.stages.facts.agreement` owns. The default tables (units, currencies, multipliers, word
lists) live in `sleuth.stages.facts.claim_units`; each is a setting. The search for each
claim's subject words lives in `sleuth.stages.facts.claim_subjects`.

Supported forms (see `ClaimSettings` for the full tables):

- Arabic numbers with thousands commas and decimals: "5,999", "6.1"; full-width
  digits; a unit after ("5999元", "120 Hz", "6.1-inch", "3.5 %", "799 dollars")
  or a currency before ("$799", "US$799", "￥5,999", "€699", "USD 799", "人民币 5999 元").
- Multipliers: 万, 亿, 万亿, 千, 百万, 千万, thousand, million, billion, trillion
  before a unit ("1.2万元" is 12000 CNY, "3亿元", "5000万像素" is 50 MP, "5 million
  dollars"); k, m, M, bn, B, tn only after a currency sign ("$1.2bn", "$5M").
- Chinese numerals: "百分之三点五" (3.5 %), "百分之五十"; a Chinese numeral of two
  characters or more, or 十, before a unit ("三千元", "两万元", "十分钟", "一亿元").
  A single numeral character ("一元", "三天") is not read: too many idioms
  ("一元二次方程"); neither is one starting with 百/千/万 ("千元机" is a price class).
- ¥ and ￥ are read as CNY (configurable); "$" as USD.

Not claims, by design: numbers without a unit (years, dates, versions such as
"iOS 18" and "Python 3.13", model numbers such as "Mate 60", phone numbers, ranks
such as "No. 1" or "第 1 名"), a number glued to letters ("A18", "H100"), ordinals
("第3周"), ratios and fractions ("16:9", "1/2"), ranges ("5999-6999 元": both ends
are skipped, a range is not one value), relative times ("3天前", "2 hours ago"),
"5G"/"4G" (network generations: a bare G is not a unit), and lower-case "w"
("2w" is Chinese slang for 20,000 as often as it is watts).

The subject (`Claim.attribute`) is the query terms found near the number, in the
query's order, lower-cased: first in the number's own clause, then in earlier
clauses of the same sentence (within `subject_window` characters, never across
another claim), then in the result's title. Variant words found there ("Pro",
"Max", "mini") and a change word just before or after the number ("直降", "off")
are appended, so "iPhone 16 Pro" prices and discounts are not compared with the
"iPhone 16" price. When no query term is near, the nearest content words before
the number (else after it) stand in: up to two Latin words or the last four
Chinese characters, with particles such as 为/约/达 trimmed.

>>> [(c.value, c.unit, c.attribute) for c in extract_claims(
...     "iPhone 16 国行售价 5999 元起，屏幕 6.1 英寸。", ["iPhone", "16", "价格"], ClaimSettings())]
[(5999.0, 'CNY', 'iphone 16'), (6.1, 'inch', 'iphone 16')]
>>> [(c.value, c.unit) for c in extract_claims(
...     "Released in 2024, iOS 18 costs nothing; call 400-666-8800.", [], ClaimSettings())]
[]
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from sleuth.contract import ResultItem
from sleuth.private_attrs import private
from sleuth.stages.facts import claim_units as tables
from sleuth.stages.facts.claim_subjects import (
    Found,
    attribute_of,
    lower,
    term_matcher,
    terms_key,
    title_terms,
    trie,
    word_pattern,
)

__all__ = [
    "Claim",
    "ClaimSettings",
    "extract_claims",
    "extract_item_claims",
    "score_claims",
    "subject_key",
]

_CN_DIGITS = dict(
    zip("零〇一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True)
)
_CN_SMALL = {"十": 10, "百": 100, "千": 1000}
_CN_DIGIT_CHARS = "".join(_CN_DIGITS)
_CN_NUMERAL_CHARS = _CN_DIGIT_CHARS + "十百千万亿"
# A number is read whole or not at all (atomic), never from its middle ("999" of "5999").
_AR_NUMBER = r"(?<![\d.])(?<!\d,)(?>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)"
_CN_NUMBER = rf"[{_CN_DIGIT_CHARS}十][{_CN_NUMERAL_CHARS}]*(?:点[{_CN_DIGIT_CHARS}]+)?"
_CN_FRACTION = rf"[{_CN_NUMERAL_CHARS}]+(?:点[{_CN_DIGIT_CHARS}]+)?"
_SPACE = r"[ \u00a0\u2009\u202f]?"
# Full-width digits, percent, dollar and dot read as ASCII; one character for one, so
# spans found in the translated text are spans of the original.
_FULL_WIDTH = str.maketrans("０１２３４５６７８９％＄．", "0123456789%$.")
_HAS_FULL_WIDTH = re.compile("[０-９％＄．]")
# Before a number: a letter or digit (A18, H100), a dot (3.13), an ordinal 第 or #;
# or, with a digit before it, a ratio, fraction or clock time (16:9, 1/2, 12:30).
_GLUED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.#第")
# Ranges ("5999-6999 元", "$799 to $999", "0-100 km/h") are not one value: two claims
# of one unit joined by a connector, or a bare number joined to a claim. A bare number
# with spaces around the connector counts unless a word precedes it ("iPhone 16 - $799").
_RANGE_LINK = r"\s*(?:[-–—~～〜至到]|\bto\b)\s*"
_RANGE_GAP = re.compile(_RANGE_LINK)
_LINK_NEAR = re.compile(r"[-–—~～〜至到]|to")
_RANGE_BEFORE = re.compile(
    rf"(?:(?<![A-Za-z0-9.,])\d+(?:[.,]\d+)*[-–—~～〜至到]"
    rf"|(?<![A-Za-z]\s)(?<![A-Za-z0-9.,])\d+(?:[.,]\d+)*{_RANGE_LINK})$"
)
_RANGE_AFTER = re.compile(rf"{_RANGE_LINK}\d")
# "¥ 5 999": digits grouped by spaces are not read (is it 5 or 5999?).
_SPACE_GROUPED = re.compile(r"[ \u00a0\u202f]\d{3}(?!\d)")
_DIGIT = re.compile(r"\d")


def _tails(words: Iterable[str], false_friends: Mapping[str, str]) -> dict[str, str]:
    """What must follow each word: a Latin word ends at a word boundary; a Chinese
    unit must not be followed by its false friends ("元" of "元旦")."""
    tails = {}
    for word in words:
        tail = "(?![A-Za-z])" if word[-1].isascii() and word[-1].isalpha() else ""
        if false_friends.get(word):
            tail += f"(?![{re.escape(false_friends[word])}])"
        tails[word] = tail
    return tails


def _either(folded: Mapping[str, str], exact: Mapping[str, str]) -> str:
    """Case-insensitive words (given lower-cased) first, then case-sensitive ones."""
    return f"(?:(?i:{trie(folded)})|{trie(exact)})"


class ClaimSettings(BaseModel):
    """The claim-extraction keys of the `facts:` section of sleuth.yaml.

    `sleuth.stages.facts.agreement.FactSettings` is this model plus the agreement keys
    (tolerances, `max_facts`): the section is one model, and every function here
    accepts it. The tables are compiled once per settings object.

    >>> ClaimSettings().units["英寸"], ClaimSettings(max_claims_per_item=3).max_claims_per_item
    ('inch', 3)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_claims_per_item: int = Field(
        default=8, ge=1, description="Claims read from one snippet, in text order."
    )
    subject_window: int = Field(
        default=48,
        ge=0,
        description=(
            "Characters before and after a number searched for its subject words; the "
            "search never crosses a sentence end or another claim."
        ),
    )
    currency_prefixes: dict[str, str] = Field(
        default_factory=lambda: dict(tables.CURRENCY_PREFIXES),
        description="Signs and codes written before a number, to currency codes (case-sensitive).",
    )
    units: dict[str, str] = Field(
        default_factory=lambda: dict(tables.UNITS),
        description=(
            "Units written after a number, to canonical units; matched case-insensitively. "
            "A unit whose canonical form is a value of `currency_prefixes` is a currency."
        ),
    )
    case_sensitive_units: dict[str, str] = Field(
        default_factory=lambda: dict(tables.CASE_SENSITIVE_UNITS),
        description="Units matched exactly as written ('W' is watts; 'w' is not read).",
    )
    unit_scale: dict[str, float] = Field(
        default_factory=lambda: dict(tables.UNIT_SCALE),
        description="Factors for units written in a smaller measure ('5000万像素' is 50 MP).",
    )
    unit_false_friends: dict[str, str] = Field(
        default_factory=lambda: dict(tables.UNIT_FALSE_FRIENDS),
        description=(
            "Characters that, right after a Chinese unit, make it part of another word: "
            "'2025元旦' is New Year's Day, not 2025 yuan."
        ),
    )
    multipliers: dict[str, float] = Field(
        default_factory=lambda: dict(tables.MULTIPLIERS),
        description="Words between a number and its unit that multiply it ('1.2万元').",
    )
    currency_multipliers: dict[str, float] = Field(
        default_factory=lambda: dict(tables.CURRENCY_MULTIPLIERS),
        description="Short multipliers read only after a currency sign ('$1.2bn', '$5M').",
    )
    duration_units: list[str] = Field(
        default_factory=lambda: ["ms", "s", "min", "h", "day", "week", "month"],
        description="Canonical units of time; followed by a relative-time word they are dates.",
    )
    relative_time_words: list[str] = Field(
        default_factory=lambda: list(tables.RELATIVE_TIME_WORDS),
        description="Words after a duration that make it a date ('3天前', '2 hours ago').",
    )
    variant_words: list[str] = Field(
        default_factory=lambda: list(tables.VARIANT_WORDS),
        description=(
            "Product variant words added to a claim's attribute when found with its subject, "
            "so 'iPhone 16 Pro' and 'iPhone 16' prices are different facts."
        ),
    )
    change_words: list[str] = Field(
        default_factory=lambda: list(tables.CHANGE_WORDS),
        description=(
            "Words just before or after a number that make it a difference ('直降 1000 元', "
            "'$100 off'); added to the attribute so a discount is not compared with a price."
        ),
    )
    fallback_stopwords: list[str] = Field(
        default_factory=lambda: list(tables.FALLBACK_STOPWORDS),
        description="English words never used as subject words when no query term is near.",
    )

    _compiled: _Compiled = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        """Compile the tables once per settings object, never per search."""
        self._compiled = _Compiled(self)

    @property
    def compiled(self) -> _Compiled:
        """The compiled tables, set at validation (`sleuth.private_attrs`)."""
        found: _Compiled = private(self, "_compiled")
        return found


class _Compiled:
    """The matchers and lookups of one `ClaimSettings`, as plain attributes (reading a
    pydantic private attribute per claim would cost more than the matching)."""

    def __init__(self, settings: ClaimSettings) -> None:
        self.max_claims = settings.max_claims_per_item
        self.window = settings.subject_window
        self.prefixes = dict(settings.currency_prefixes)
        self.exact_units = dict(settings.case_sensitive_units)
        self.folded_units = {word.lower(): unit for word, unit in settings.units.items()}
        self.scale = {word.lower(): f for word, f in settings.unit_scale.items()}
        self.multipliers = {word.lower(): m for word, m in settings.multipliers.items()}
        self.currency_multipliers = dict(settings.currency_multipliers)
        self.durations = frozenset(settings.duration_units)
        self.stopwords = frozenset(word.lower() for word in settings.fallback_stopwords)
        self.pinned = frozenset(
            word.lower() for word in (*settings.variant_words, *settings.change_words)
        )
        self.pinned_phrases = tuple(word for word in self.pinned if " " in word)
        self.relative_time = re.compile(
            rf"\s*(?:{trie(_tails(settings.relative_time_words, {}))})", re.IGNORECASE | re.ASCII
        )
        self.variants = word_pattern(settings.variant_words)
        self.changes = word_pattern(settings.change_words)
        friends = settings.unit_false_friends
        folded = _tails(self.folded_units, {k.lower(): v for k, v in friends.items()})
        exact = _tails(self.exact_units, friends)
        currencies = set(self.prefixes.values())
        any_unit = _either(folded, exact)
        currency_unit = _either(
            {w: t for w, t in folded.items() if self.folded_units[w] in currencies},
            {w: t for w, t in exact.items() if self.exact_units[w] in currencies},
        )
        multiplier = f"(?i:{trie(_tails(self.multipliers, {}))})"
        currency_multiplier = _either(
            _tails(self.multipliers, {}), _tails(self.currency_multipliers, {})
        )
        prefix = trie(dict.fromkeys(self.prefixes, ""))
        starts = re.escape("".join(sorted({p[0] for p in self.prefixes})))
        self.pattern = re.compile(
            # a cheap first test: only these characters can start a claim
            rf"(?=[0-9百{_CN_NUMERAL_CHARS}{starts}])(?:"
            # a currency before the number: $799, US$1.2bn, ￥5,999 元
            rf"(?P<pre>{prefix}){_SPACE}(?P<pnum>{_AR_NUMBER})"
            rf"(?:{_SPACE}(?P<pmult>{currency_multiplier}))?(?:{_SPACE}(?P<punit>{currency_unit}))?"
            # 百分之三点五, 百分之 3.5
            rf"|百分之{_SPACE}(?P<pct>{_AR_NUMBER}|{_CN_FRACTION})"
            # a unit after the number: 5999 元, 1.2万元, 6.1-inch, 三千元
            rf"|(?P<num>{_AR_NUMBER}|{_CN_NUMBER})"
            rf"(?:{_SPACE}-?(?P<unit>{any_unit})"
            rf"|{_SPACE}(?P<mult>{multiplier}){_SPACE}-?(?P<munit>{any_unit})))",
            re.ASCII,  # ASCII digits and case folding only: "ſec" is not "sec"
        )

    def unit_of(self, written: str) -> tuple[str, float]:
        """The canonical unit of a unit as written, and its scale factor."""
        folded = written.lower()
        unit = self.exact_units.get(written) or self.folded_units.get(folded, "")
        return unit, self.scale.get(folded, 1.0)

    def multiplier(self, written: str) -> float:
        if written in self.currency_multipliers:
            return self.currency_multipliers[written]
        return self.multipliers.get(written.lower(), 1.0)


@dataclass(frozen=True, slots=True)
class Claim:
    """One numeric claim in a text.

    `value` is normalised (multipliers applied: "1.2万元" is 12000.0), `unit` is
    canonical ("CNY", "USD", "%", "inch", "GB"), `attribute` the subject words (see the
    module docstring) and `span` the characters of the whole claim, currency sign and
    unit included. `from_query` is true when the attribute is made of query terms
    (near the number or in the title), false when nearby words stand in for them.
    """

    value: float
    unit: str
    attribute: str
    span: tuple[int, int]
    from_query: bool = True


# ---------------------------------------------------------------------------
# Extraction


class _Raw(NamedTuple):
    value: float
    unit: str
    start: int
    end: int


def extract_claims(
    text: str, query_terms: Sequence[str], settings: ClaimSettings, *, title: str = ""
) -> list[Claim]:
    """The numeric claims with a unit or currency in `text`, in text order.

    `title`, when given, supplies query terms for a number that has none nearby.

    >>> [(c.value, c.unit) for c in extract_claims(
    ...     "售价1.2万元，百分之三点五", [], ClaimSettings())]
    [(12000.0, 'CNY'), (3.5, '%')]
    >>> [(c.value, c.unit, c.attribute) for c in extract_claims(
    ...     "The iPhone 16 Pro costs US$999, while the iPhone 16 costs $799.",
    ...     ["iPhone", "16", "price"], ClaimSettings())]
    [(999.0, 'USD', 'iphone 16 pro'), (799.0, 'USD', 'iphone 16')]
    """
    return _extract(text, _Query(terms_key(query_terms)), settings.compiled, title)


def extract_item_claims(
    items: Sequence[ResultItem], query_terms: Sequence[str], settings: ClaimSettings
) -> list[list[Claim]]:
    """The claims of each item's snippet, its title supplying query terms as in
    `extract_claims`: one list per item, in the order of `items`.

    >>> item = ResultItem(id="1", url=None, title="iPhone 16 价格", snippet="售价 5999 元",
    ...                   providers=["p"])
    >>> [[(c.value, c.attribute) for c in found]
    ...  for found in extract_item_claims([item], ["iPhone", "16"], ClaimSettings())]
    [[(5999.0, 'iphone 16')]]
    """
    query, compiled = _Query(terms_key(query_terms)), settings.compiled  # once, not per item
    return [_extract(item.snippet, query, compiled, item.title) for item in items]


class _Query:
    """The query terms as every item's search for subject words reads them."""

    __slots__ = ("matcher", "order", "terms")

    def __init__(self, terms: tuple[str, ...]) -> None:
        self.terms = terms
        self.matcher = term_matcher(terms)
        self.order = {term: n for n, term in enumerate(terms)}


def _extract(text: str, query: _Query, compiled: _Compiled, title: str) -> list[Claim]:
    raws = _read_numbers(text, compiled)[: compiled.max_claims]
    if not raws:
        return []
    terms, matcher = query.terms, query.matcher
    pieces, done = [], 0
    for raw in raws:  # claims are walls: subject words are never looked for across one
        pieces += [text[done : raw.start], "\x00" * (raw.end - raw.start)]
        done = raw.end
    masked = "".join([*pieces, text[done:]])
    found = Found(masked, [(raw.start, raw.end) for raw in raws], matcher, compiled)
    read: list[list[str]] = []  # the title's terms, read once a claim needs them

    def in_title() -> list[str]:
        if not read:
            read.append(title_terms(lower(title), terms, matcher, compiled))
        return read[0]

    claims = []
    for raw in raws:
        span = (raw.start, raw.end)
        attribute, from_query = attribute_of(span, found, query.order, in_title, compiled)
        claims.append(Claim(raw.value, raw.unit, attribute, span, from_query))
    return claims


def _read_numbers(text: str, compiled: _Compiled) -> list[_Raw]:
    """Every number with a unit or currency, ranges left out, before subject words."""
    plain = text.translate(_FULL_WIDTH) if _HAS_FULL_WIDTH.search(text) else text
    found = [
        raw
        for match in compiled.pattern.finditer(plain)
        if (raw := _read_match(match, plain, compiled)) is not None
    ]
    kept = []
    previous_end = 0
    for n, raw in enumerate(found):
        start, end = raw.start, raw.end
        ranged = (
            _LINK_NEAR.search(plain, max(previous_end, start - 4), start)
            and (
                (
                    n > 0
                    and found[n - 1].unit == raw.unit
                    and _RANGE_GAP.fullmatch(plain, previous_end, start)
                )
                or _RANGE_BEFORE.search(plain, max(previous_end, start - 24), start)
            )
        ) or (
            _LINK_NEAR.search(plain, end, end + 4)
            and (
                (
                    n + 1 < len(found)
                    and found[n + 1].unit == raw.unit
                    and _RANGE_GAP.fullmatch(plain, end, found[n + 1].start)
                )
                or _bare_after(plain, end, found[n + 1].start if n + 1 < len(found) else -1)
            )
        )
        if not ranged:
            kept.append(_per_period(raw, plain))
        previous_end = end
    return kept


# "$33.29/mo.", "99 元/月", "$120 per year": a rate, not the price itself.
_PER_PERIOD = re.compile(
    r"\s*(?:/\s*|per\s+|a\s+|每)(?P<period>mo(?:nth)?\b\.?|months?\b|yr\b\.?|years?\b"
    r"|wk\b|weeks?\b|day\b|月|年|周|天)",
    re.IGNORECASE,
)
_PERIOD_UNIT = {"mo": "month", "mon": "month", "yr": "year", "wk": "week", "月": "month",
                "年": "year", "周": "week", "天": "day"}  # fmt: skip


def _per_period(raw: _Raw, text: str) -> _Raw:
    """A currency amount followed by a period is a rate: its unit says so (USD/month)."""
    if not raw.unit.isupper():  # currencies are upper-case codes (CNY, USD, EUR)
        return raw
    match = _PER_PERIOD.match(text, raw.end)
    if match is None:
        return raw
    word = match.group("period").lower().rstrip(".")
    period = _PERIOD_UNIT.get(word[:3] if word.startswith("mon") else word, word.rstrip("s"))
    return raw._replace(unit=f"{raw.unit}/{period}", end=match.end())


def _bare_after(text: str, end: int, next_claim: int) -> bool:
    """A connector and a bare number (not the next claim) follow: "$799-999"."""
    link = _RANGE_AFTER.match(text, end)
    return link is not None and link.end() - 1 != next_claim


def _read_match(match: re.Match[str], text: str, compiled: _Compiled) -> _Raw | None:
    """One match as a value in its canonical unit, or None when it is not a claim."""
    start, end = match.span()
    pre, pnum, pmult, _, pct, num, unit_written, mult, munit = match.groups()
    before = text[start - 1] if start else ""
    if pre:
        # "...USD" glued to a word; "¥ 5 999" grouped by spaces (5 or 5999?)
        if (pre[0].isalpha() and before.isalnum()) or _SPACE_GROUPED.match(text, end):
            return None
    elif before in _GLUED or (before in ":/" and start > 1 and text[start - 2].isdigit()):
        return None  # A18, 3.13, 第3, 16:9, 1/2
    if end < len(text) and text[end].isdigit():
        return None
    number: float | None
    scale = 1.0
    if pre:
        number = _arabic(pnum)
        unit = compiled.prefixes[pre]
        if pmult:
            scale = compiled.multiplier(pmult)
    elif pct is not None:
        number = _arabic(pct) if pct[0].isdigit() else _chinese(pct)
        unit = "%"
    else:
        if not num[0].isdigit():
            if before and before in _CN_NUMERAL_CHARS:
                return None
            if len(num.split("点")[0]) < 2 and num[0] != "十":
                return None  # one numeral character: "一元二次方程", "三天"
        number = _arabic(num) if num[0].isdigit() else _chinese(num)
        unit, scale = compiled.unit_of(unit_written or munit)
        if mult:
            scale *= compiled.multiplier(mult)
        if unit in compiled.durations and compiled.relative_time.match(text, end):
            return None  # "3天前", "2 hours ago": a date, not a duration
    if number is None or not unit or not math.isfinite(number * scale):
        return None
    if scale != 1.0:
        number = float(f"{number * scale:.12g}")  # 1.2 × 10000 is 12000.000000000002
    return _Raw(number, unit, start, end)


def _arabic(written: str) -> float:
    return float(written.replace(",", ""))


def _chinese(written: str) -> float | None:
    """A Chinese numeral's value; None for "two or three" (两三).

    >>> [_chinese(s) for s in ("十", "十二万", "两千五百", "一亿五千万", "三点五", "两三")]
    [10.0, 120000.0, 2500.0, 150000000.0, 3.5, None]
    """
    whole, _, decimals = written.partition("点")
    total = section = 0.0
    digit: int | None = None
    for char in whole:
        if char in _CN_DIGITS:
            if digit:  # two digits in a row: an estimate, not a number
                return None
            digit = _CN_DIGITS[char]
        elif char in _CN_SMALL:
            section += (1 if digit is None else digit) * _CN_SMALL[char]
            digit = None
        elif char == "万":
            total += (section + (digit or 0)) * 1e4
            section, digit = 0.0, None
        else:  # 亿
            total = (total + section + (digit or 0)) * 1e8
            section, digit = 0.0, None
    value = total + section + (digit or 0)
    if decimals:
        value += float("0." + "".join(str(_CN_DIGITS[char]) for char in decimals))
    return value


# ---------------------------------------------------------------------------
# Subject words (found by `sleuth.stages.facts.claim_subjects`)


def subject_key(claim: Claim, settings: ClaimSettings) -> str:
    """What must match for two claims of one unit to be about the same thing.

    When the attribute is made of query terms and holds terms with a digit ("16" of
    "iPhone 16"), variant words or change words, those alone decide ("=" and them,
    sorted), so "iPhone 16 售价" and "price of the iPhone 16" meet; otherwise the
    whole attribute must match ("~" and it).

    >>> [subject_key(Claim(5999.0, "CNY", attribute, (0, 7)), ClaimSettings())
    ...  for attribute in ("iphone 16 价格", "price iphone 16 pro", "gdp")]
    ['=16', '=16 pro', '~gdp']
    """
    if not claim.from_query:
        return "~" + claim.attribute
    compiled = settings.compiled
    words = claim.attribute.split(" ")
    pinned = {word for word in words if word in compiled.pinned or _DIGIT.search(word)}
    if compiled.pinned_phrases:
        padded = f" {claim.attribute} "
        pinned.update(phrase for phrase in compiled.pinned_phrases if f" {phrase} " in padded)
    return "=" + " ".join(sorted(pinned)) if pinned else "~" + claim.attribute


# ---------------------------------------------------------------------------
# Evaluation


def score_claims(
    cases: Iterable[Mapping[str, Any]], settings: ClaimSettings | None = None
) -> dict[str, float]:
    """Precision and recall of extracted (value, unit) pairs over labelled cases.

    Each case has `text`, `query` (split on spaces into terms) and `expected`, a list
    of `{"value": ..., "unit": ...}`; pairs are matched one to one.

    >>> score_claims([{"text": "2024 年发布，售价 5999 元", "query": "", "expected": [
    ...     {"value": 5999, "unit": "CNY"}]}])["precision"]
    1.0
    """
    settings = settings or ClaimSettings()
    hits = extracted = expected_total = cases_seen = 0
    for case in cases:
        cases_seen += 1
        query = str(case.get("query", "")).split()
        found = [(c.value, c.unit) for c in extract_claims(str(case["text"]), query, settings)]
        expected = [(float(e["value"]), str(e["unit"])) for e in case.get("expected", [])]
        extracted += len(found)
        expected_total += len(expected)
        for value, unit in expected:
            for position, (got, got_unit) in enumerate(found):
                if got_unit == unit and math.isclose(got, value, rel_tol=1e-9):
                    hits += 1
                    del found[position]
                    break
    precision = hits / extracted if extracted else 1.0
    recall = hits / expected_total if expected_total else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "cases": float(cases_seen),
        "expected": float(expected_total),
        "extracted": float(extracted),
    }
