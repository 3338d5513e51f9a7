"""Dates found in a result's text: the fallback behind `freshness` when a provider sent none.

Owns one question: when does a result's title, snippet or URL path say it was
written? `find_date` reads date expressions in Chinese and English, absolute
("2025年3月1日", "2025-03-01", "Mar 1, 2025", "1 March 2025", "/2025/03/01/") and
relative ("3天前", "三天前", "昨天", "刚刚", "3 days ago", "an hour ago", "yesterday"),
and resolves them against the time of the search, passed in as `now`. It never
writes `published_at` (that stays what the provider sent); the caller labels
freshness with `sleuth.stages.freshness.freshness_of(found.at, now)` and records
`dated_from = found.found_in`. Pure: no clock, no I/O; regexes are compiled once.

Rules, each chosen to keep a wrong date out rather than to find more dates:

- An expression whose meaning depends on when the text was *written* ("昨天",
  "3天前", "上周", "3月1日", "last week", "2 years ago") counts only where a search
  engine rendered it as a date stamp: at the start of the field or after a
  separator ("3天前 · ...", "作者 · 2天前"), or after a publication cue ("发布于",
  "Posted", "Updated"), or before a clock time ("昨天 14:30"). In running prose
  ("苹果公司昨天发布了...", "Two years ago, I...") it is relative to an unknown
  writing date and is ignored. Minutes, hours, "刚刚" and "just now" are the
  exception: prose almost never uses them, engines often do.
- Absolute dates count anywhere, except deadlines and effective dates ("2027年1月1日起
  施行", "until March 31, 2026"), which say nothing about when the text was written.
- A bare year ("2025年目标", "Top languages of 2025") is not a date: too coarse, and
  more often a topic than a publication date. A month with a year ("2025年3月",
  "March 2025", "/2025/03/") resolves to the 1st of that month, the earliest day it
  allows, so a month never makes a result look fresher than it is.
- Year-first dotted dates need two-digit month and day ("2025.03.01"); "2024.3.1"
  is a version (PyCharm 2024.3.1, certifi 2024.8.30). Day/month order without a
  named month ("03/01/2025") is ambiguous and not read.
- Dates later than `now` plus a small tolerance are rejected; within the tolerance
  they are taken as `now` (a date written in a time zone ahead of UTC). Years before
  `min_year` are rejected.
- Choosing among several dates: a date stamp (leading, cued, or in the URL path)
  beats a date mentioned in passing; among equals the configured field order decides
  (title, snippet, URL); within one field the most recent date wins, because text
  that mentions a past date was written on or after it, so the most recent mention is
  the tightest bound that never overstates freshness.

When a result's page was read (`include: content`), `date_from_pages` puts what the
page states about itself first: its own publication date becomes `published_at`, and
the later of its publication and modification dates gives `freshness`, with
`dated_from: "page"` (a page's dates are read from its markup, never guessed; see
`sleuth.extract.metadata`). A stated date past `now` and the tolerance is not taken.

>>> now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
>>> snippet = "3天前 · 华为发布 Mate 80，售价 5999 元。"
>>> found = find_date("华为发布会", snippet, None, now, DateSettings())
>>> found.at.date().isoformat(), found.found_in, found.text
('2026-11-27', 'snippet', '3天前')
>>> find_date("Python 3.13.1 released", "Call 400-820-2025. Score 3-1.", None, now, DateSettings())
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import ResultItem
from sleuth.extract.models import ExtractedPage
from sleuth.stages.freshness import freshness_of
from sleuth.stages.links import split_link

__all__ = [
    "DateField",
    "DateSettings",
    "FoundDate",
    "date_from_pages",
    "date_items",
    "find_date",
    "score_dates",
]

DateField = Literal["title", "snippet", "url"]


class DateSettings(BaseModel):
    """The `dates:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fields: tuple[DateField, ...] = Field(
        default=("title", "snippet", "url"),
        min_length=1,
        description=(
            "Where to look and in which order; the order breaks ties between equally "
            "strong dates found in different fields (a date stamp always beats a date "
            "mentioned in passing)."
        ),
    )
    future_tolerance_hours: float = Field(
        default=14.0,
        ge=0,
        description=(
            "A date up to this far after the time of the search is taken as that time "
            "(a day written in a zone ahead of UTC, at most UTC+14); later ones are rejected."
        ),
    )
    min_year: int = Field(
        default=1990,
        ge=1,
        description="Dates before this year are rejected as implausible for a web result.",
    )
    month_precision: bool = Field(
        default=True,
        description=(
            "Read a month with its year ('2025年3月', 'March 2025', '/2025/03/') as the 1st "
            "of that month; when false, only full dates and relative expressions count."
        ),
    )
    relative_needs_stamp: bool = Field(
        default=True,
        description=(
            "Count expressions relative to the writing date ('昨天', '3天前', 'last week', "
            "'3月1日') only where they stand as a date stamp (leading, after a separator or "
            "a publication cue, before a clock time); minutes, hours and 'just now' always "
            "count. When false they count anywhere."
        ),
    )


@dataclass(frozen=True, slots=True)
class FoundDate:
    """A date found in a result's text: when (timezone-aware, UTC), where, and the words."""

    at: datetime
    found_in: DateField
    text: str


# --- patterns -----------------------------------------------------------------------------

_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?"
    r"|JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC)"
)
_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}  # fmt: skip
_ZH_UNITS = {"秒": "s", "秒钟": "s", "分钟": "m", "小时": "h", "钟头": "h", "天": "d", "周": "w",
             "星期": "w", "礼拜": "w", "月": "mo", "年": "y"}  # fmt: skip
# "…前" followed by one of these is another word: 5年前端 (front end), 第1天前往 (go to),
# 2025年前三季度 (first three quarters).
_ZH_AGO = (
    r"(?P<u>秒钟?|分钟|个?小时|个?钟头|天|周|个?星期|个?礼拜|个月|年)\s*前"
    r"(?![端台后夕线置沿列者任身期景提瞻往排锋三十几])"
)

# Expressions are found in two steps. _TRIGGER starts with a bare character class, which
# the regex engine skips through in C, and checks what follows that first character: a
# digit run before 年, 月, a unit or a month name, or four digits before a date separator;
# a numeral before a unit; a month's first letters; 刚刚, 今天, 昨天, 前天, 上周... The
# pattern for that first character is then tried there. One big alternation tried at
# every position, or a trigger on every digit, cost three to four times as much.
_TRIGGER = re.compile(
    r"[0-9〇零一二两三四五六七八九十半刚今昨前上JFMASOND]"
    r"(?:(?<=[0-9])(?<![0-9][0-9])[0-9]*"
    r"(?=\s*[年月天周秒分小个钟星礼]|(?<=[0-9]{4})[-/.][0-9]|(?:st|nd|rd|th)?\s+[A-Z])"
    r"|(?<=[A-Z])(?=an|AN|eb|EB|ar|ay|AR|AY|pr|PR|ug|UG|un|ul|UN|UL|ep|EP|ct|CT|ov|OV|ec|EC)"
    r"|(?<=[〇零一二两三四五六七八九十半])(?=[〇零一二两三四五六七八九十]*\s*[年天周秒分小个钟星礼])"
    r"|(?<=刚)(?=刚)|(?<=[今昨前])(?=天)|(?<=上)(?=[周个星礼月]))"
)
_DIGIT_LED = re.compile(
    "|".join(
        [
            # 2025年3月1日, 2025 年 3 月 1 号, and 2025年3月 (month precision)
            r"(?P<zh_ymd>(?<![\d.])(?P<y>\d{4})\s*年\s*(?P<m>\d{1,2})\s*月"
            r"(?:\s*(?P<d>\d{1,2})\s*[日号]|(?!\s*\d)))",
            # 2025-03-01, 2025/3/1, 2025.03.01 (dotted needs two digits: 2024.3.1 is a version)
            r"(?P<iso>(?<![0-9A-Za-z.\-/+_#])(?:(?P<iy>\d{4})(?P<sep>[-/])(?P<im>\d{1,2})(?P=sep)"
            r"(?P<id>\d{1,2})(?![0-9]|[.\-/][0-9]|[A-SU-Za-z])"
            r"|(?P<dy>\d{4})\.(?P<dm>\d{2})\.(?P<dd>\d{2})(?![0-9]|[.\-/][0-9]|[A-Za-z])))",
            # 3月1日: the year comes from `now`
            r"(?P<zh_md>(?<![\d.年])(?P<cm>\d{1,2})\s*月\s*(?P<cd>\d{1,2})\s*[日号])",
            # 3天前, 2个小时前, 1周前 (not 5年前端)
            r"(?P<zh_ago>(?<![\d.])(?P<n>\d{1,3})\s*" + _ZH_AGO + ")",
            # 1 March 2025
            r"(?P<en_dmy>(?<![0-9A-Za-z.])(?P<hd>\d{1,2})(?:st|nd|rd|th)?\s+(?P<hmon>"
            + _MONTH
            + r")\.?,?\s+(?P<hy>\d{4})(?![0-9]))",
        ]
    )
)
_HAN_LED = re.compile(
    # 二〇二五年三月一日 (dates on official documents)
    r"(?P<zh_num>(?P<y>[〇零一二三四五六七八九]{4})\s*年\s*(?P<m>[一二三四五六七八九十]{1,2})\s*月"
    r"\s*(?P<d>[一二三四五六七八九十]{1,3})\s*[日号])"
    # 三天前, 半个月前, 二十分钟前
    r"|(?P<zh_ago>(?P<n>[一二两三四五六七八九十半]{1,3})\s*" + _ZH_AGO + ")"
    # 刚刚, 今天, 昨天, 前天 (not 目前天气, 以前天天, 前天津市长), 上周, 上个月
    r"|(?P<zh_word>刚刚|今天|昨天|(?<![目之以提当此面眼门跟事空生向超日先从史战会饭睡考赛节])前天(?!津)"
    r"|上周|上个?星期|上个?礼拜|上个?月)"
)
# Mar 1, 2025 · March 1st 2025 · March 2025 (month precision) · Nov 28 (year from `now`)
_MONTH_LED = re.compile(
    r"(?P<en_month>(?<![A-Za-z])(?P<mon>" + _MONTH + r")\.?,?\s+(?:(?P<y>\d{4})(?![0-9])"
    r"|(?P<d>\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(?P<dy>\d{4})(?![0-9]))?(?![0-9:])))"
)
# English relative words start lower case, so they cannot share the trigger; they are
# scanned only when a hint word occurs in the text.
_EN_AGO = re.compile(
    r"(?P<en_ago>(?<![\w.])(?i:(?P<n>\d{1,4}|an?|one|two|three|four|five|six|seven|eight"
    r"|nine|ten|eleven|twelve)\s*(?P<u>seconds?|secs?|minutes?|mins?|hours?|hrs?|days?"
    r"|weeks?|wks?|months?|mos?|years?|yrs?|[smhdw])\s+ago)\b)"
    r"|(?P<en_word>\b(?i:just\s+now|yesterday|today|last\s+week|last\s+month)\b)"
)
_SHORT_UNITS = frozenset({"s", "m", "h"})  # seconds, minutes, hours

# Dates in a URL path: /2025/03/01/, /2025-03-01-slug, /20250301/, t20250301_123.html,
# /2025/0301/ (people.com.cn), /2025-03/01/ (gov.cn, news.cn), /2025/03/ (month).
_URL_PATTERN = re.compile(
    r"(?<=[/_\-])(?P<y>\d{4})(?P<sep>[/\-])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})(?=[/_\-.]|$)"
    r"|(?<=[/_\-t])(?P<cy>\d{4})(?P<cm>\d{2})(?P<cd>\d{2})(?=[/_\-])"
    r"|(?<=/)(?P<sy>\d{4})[/\-](?P<sm>\d{2})/?(?P<sd>\d{2})(?=/)"
    r"|(?<=/)(?P<my>\d{4})/(?P<mm>\d{2})(?=/)"
)

_SEPARATORS = "·•|｜—–-"
_CLOSING = ")）]】」》>"
_CLOCK = re.compile(r"\s*(?:at\s+)?\d{1,2}:\d{2}")
_CUE = re.compile(
    r"(?:发布于|发表于|更新于|发布时间|更新时间|发表时间|发布日期|更新日期|日期|时间"
    r"|posted|published|updated|last\s+updated|modified|edited|date)\s*(?:on|at)?\s*[:：]?\s*$",
    re.IGNORECASE,
)
# After or before a date, words that make it a deadline or an effective date.
_PROSPECTIVE_AFTER = re.compile(r"\s*(?:起|前|之前|以前|以后|之后|后|截止|止|到期|施行|生效|实施)")
_PROSPECTIVE_BEFORE = re.compile(
    r"(?:将于|将在|预计|计划|定于|拟于|自|从|\b(?:until|till|by|before|from|starting|effective"
    r"|due|scheduled\s+for|expected|will\s+be\s+held\s+on|on\s+or\s+before))\s*$",
    re.IGNORECASE,
)

# What a match means, which decides how it may be used (see _in_text).
_Sort = Literal["absolute", "month", "yearless", "short", "relative"]
# Tiers: a stamp beats a date mentioned in passing (see the module docstring).
_STAMP, _MENTION = 0, 1


def find_date(
    title: str, snippet: str, url: str | None, now: datetime, settings: DateSettings
) -> FoundDate | None:
    """The date the result's text gives for itself, resolved against `now`, or None.

    >>> now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    >>> find_date("", "", "https://www.reuters.com/tech/2025/03/01/nvidia/", now, DateSettings())
    FoundDate(at=datetime.datetime(2025, 3, 1, 0, 0, tzinfo=datetime.timezone.utc), \
found_in='url', text='2025/03/01')
    >>> find_date("", "Mar 1, 2025 — The rule takes effect on January 1, 2026.", None, now,
    ...           DateSettings()).text
    'Mar 1, 2025'
    >>> find_date("", "苹果公司昨天发布了 iPhone 6。", None, now, DateSettings()) is None
    True
    """
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    latest = now + timedelta(hours=settings.future_tolerance_hours)
    best: tuple[int, int, datetime, str, DateField] | None = None
    for rank, field in enumerate(settings.fields):
        if field == "url":
            found = _in_url(url, now, latest, settings)
        else:
            found = _in_text(title if field == "title" else snippet, now, latest, settings)
        if found is not None:
            tier, at, text = found
            if best is None or tier < best[0]:
                best = (tier, rank, at, text, field)
    if best is None:
        return None
    _, _, at, text, field = best
    return FoundDate(at=min(at, now), found_in=field, text=text)


def score_dates(cases: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Precision, recall and exact-day accuracy of `find_date` over labelled cases.

    Each case has `title`, `snippet`, `url`, `now` (ISO 8601) and `expected` (the UTC
    calendar date "YYYY-MM-DD", or null when no date should be found); `found_in` is
    optional. A prediction is correct when it gives the expected day. precision =
    correct / dates found; recall = correct / cases expecting a date; accuracy =
    (correct + rightly undated) / cases; found_in_accuracy = correct predictions
    found in the labelled field / correct predictions with a labelled field.

    >>> case = {"title": "", "snippet": "2天前 · 新闻", "url": None,
    ...         "now": "2026-11-30T12:00:00+00:00", "expected": "2026-11-28"}
    >>> score_dates([case])["precision"]
    1.0
    """
    settings = DateSettings()
    total = predicted = expected = correct = undated_right = 0
    located = located_right = 0
    for case in cases:
        total += 1
        now = datetime.fromisoformat(case["now"])
        found = find_date(case["title"], case["snippet"], case.get("url"), now, settings)
        day = found.at.astimezone(UTC).date().isoformat() if found else None
        want = case.get("expected")
        predicted += day is not None
        expected += want is not None
        if want is None and day is None:
            undated_right += 1
        elif found is not None and day == want:
            correct += 1
            if case.get("found_in"):
                located += 1
                located_right += found.found_in == case["found_in"]
    return {
        "cases": float(total),
        "precision": correct / predicted if predicted else 1.0,
        "recall": correct / expected if expected else 1.0,
        "accuracy": (correct + undated_right) / total if total else 1.0,
        "found_in_accuracy": located_right / located if located else 1.0,
    }


# --- internals ----------------------------------------------------------------------------


def _in_text(
    text: str, now: datetime, latest: datetime, settings: DateSettings
) -> tuple[int, datetime, str] | None:
    """The strongest date in one field: lowest tier, then the most recent."""
    best: tuple[int, datetime, str] | None = None
    for match in _matches(text):
        at, sort = _resolve(match, now, latest)
        if at is None or at > latest or at.year < settings.min_year:
            continue
        start, end = match.span()
        if sort in ("absolute", "month", "yearless") and _is_prospective(text, start, end):
            continue
        if sort == "month" and not settings.month_precision:
            continue
        if _is_stamp(text, start, end):
            tier = _STAMP
        elif sort in ("absolute", "month", "short") or not settings.relative_needs_stamp:
            tier = _MENTION
        else:
            continue  # relative to an unknown writing date
        if best is None or (tier, -at.timestamp()) < (best[0], -best[1].timestamp()):
            best = (tier, at, match.group(0).strip())
    return best


def _in_url(
    url: str | None, now: datetime, latest: datetime, settings: DateSettings
) -> tuple[int, datetime, str] | None:
    if not url:
        return None
    best: tuple[int, datetime, str] | None = None
    for match in _URL_PATTERN.finditer(split_link(url).path):
        g = match.group
        if g("y"):
            at = _make(g("y"), g("m"), g("d"))
        elif g("cy"):
            at = _make(g("cy"), g("cm"), g("cd"))
        elif g("sy"):
            at = _make(g("sy"), g("sm"), g("sd"))
        elif settings.month_precision:
            at = _make(g("my"), g("mm"), 1)
        else:
            continue
        if at is None or at > latest or at.year < settings.min_year:
            continue
        if best is None or at > best[1]:
            best = (_STAMP, at, match.group(0))
    return best


def _matches(text: str) -> Iterator[re.Match[str]]:
    """Every date expression in `text`, left to right, without trying every position."""
    position = 0
    while (trigger := _TRIGGER.search(text, position)) is not None:
        start = trigger.start()
        first = text[start]
        pattern = _DIGIT_LED if first <= "9" else _MONTH_LED if first <= "Z" else _HAN_LED
        match = pattern.match(text, start)
        if match is not None:
            yield match
            position = match.end()
        else:
            position = trigger.end()
    lowered = text.lower()
    if "ago" in lowered or "day" in lowered or "last" in lowered or "just" in lowered:
        yield from _EN_AGO.finditer(text)


def _is_stamp(text: str, start: int, end: int) -> bool:
    """Whether the expression stands as a date stamp rather than inside running prose."""
    before = text[:start].rstrip()
    if _CUE.search(before[-24:]):
        return True
    after = text[end:]
    if _CLOCK.match(after):
        return True
    leading = not before.strip("([（【「《<") or before[-1] in _SEPARATORS
    if not leading:
        return False
    rest = after.lstrip()
    return (
        not rest
        or rest[0] in _SEPARATORS
        or rest[0] in _CLOSING
        or (after[:1].isspace() and rest[0] not in ",，、。.")
    )


def _is_prospective(text: str, start: int, end: int) -> bool:
    """Whether a date is a deadline or an effective date ("3月1日起", "until March 31")."""
    return bool(
        _PROSPECTIVE_AFTER.match(text, end) or _PROSPECTIVE_BEFORE.search(text[:start][-24:])
    )


def _resolve(
    match: re.Match[str], now: datetime, latest: datetime
) -> tuple[datetime | None, _Sort]:
    """The moment a match points at, and what sort of expression it is."""
    kind, g = match.lastgroup, match.group
    if kind == "zh_ymd":
        if g("d") is None:
            return _make(g("y"), g("m"), 1), "month"
        return _make(g("y"), g("m"), g("d")), "absolute"
    if kind == "iso":
        if g("iy"):
            return _make(g("iy"), g("im"), g("id")), "absolute"
        return _make(g("dy"), g("dm"), g("dd")), "absolute"
    if kind == "zh_num":
        year = "".join(str(_ZH_DIGITS[char]) for char in g("y"))
        return _make(year, _zh_number(g("m")) or 0, _zh_number(g("d")) or 0), "absolute"
    if kind == "en_dmy":
        return _make(g("hy"), _MONTHS[g("hmon")[:3].lower()], g("hd")), "absolute"
    if kind == "en_month":
        month = _MONTHS[g("mon")[:3].lower()]
        if g("y"):
            return _make(g("y"), month, 1), "month"
        if g("dy"):
            return _make(g("dy"), month, g("d")), "absolute"
        return _this_year(now, latest, month, g("d")), "yearless"
    if kind == "zh_md":
        return _this_year(now, latest, g("cm"), g("cd")), "yearless"
    if kind == "zh_ago":
        unit = _ZH_UNITS[g("u").removeprefix("个")]
        return _ago(now, _zh_number(g("n")), unit), "short" if unit in _SHORT_UNITS else "relative"
    if kind == "en_ago":
        word, raw = g("n").lower(), g("u").lower()
        amount = float(_EN_NUMBERS[word]) if word in _EN_NUMBERS else float(word)
        unit = "mo" if raw.startswith("mo") else raw[0]
        return _ago(now, amount, unit), "short" if unit in _SHORT_UNITS else "relative"
    word = " ".join(g(0).lower().split())  # zh_word, en_word
    if word in ("刚刚", "just now"):
        return now, "short"
    if word in ("今天", "today"):
        return now, "relative"
    if word in ("昨天", "yesterday"):
        return now - timedelta(days=1), "relative"
    if word == "前天":
        return now - timedelta(days=2), "relative"
    if word in ("上个月", "上月", "last month"):
        return _ago(now, 1, "mo"), "relative"
    return now - timedelta(days=7), "relative"  # 上周, 上星期, last week


def _this_year(now: datetime, latest: datetime, month: str | int, day: str) -> datetime | None:
    """A year-less day in the year of `now`, or the year before if that would be ahead."""
    at = _make(now.year, month, day)
    if at is not None and at > latest:  # "12月25日" on 30 November is last year's
        at = _make(now.year - 1, month, day)
    return at


def _ago(now: datetime, amount: float | None, unit: str) -> datetime | None:
    if amount is None:
        return None
    try:
        if unit in ("mo", "y"):
            months = amount * (12 if unit == "y" else 1)
            if months == int(months):
                return _minus_months(now, int(months))
            return now - timedelta(days=months * 30.44)  # 半个月: half a month
        seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[unit]
        return now - timedelta(seconds=amount * seconds)
    except (OverflowError, ValueError):
        return None


def _minus_months(now: datetime, months: int) -> datetime:
    """`now` moved back by calendar months, the day clamped to the target month's length."""
    index = now.year * 12 + now.month - 1 - months
    year, month = divmod(index, 12)
    day = now.day
    while True:
        try:
            return now.replace(year=year, month=month + 1, day=day)
        except ValueError:
            if day <= 28:
                raise
            day -= 1


def _zh_number(text: str) -> float | None:
    """3, 三, 两, 十五, 二十, 半 → a number; None for anything else."""
    if text.isdigit():
        return float(text)
    if text == "半":
        return 0.5
    if "十" in text:
        tens, _, ones = text.partition("十")
        if (tens and tens not in _ZH_DIGITS) or (ones and ones not in _ZH_DIGITS):
            return None
        return float((_ZH_DIGITS[tens] if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0))
    return float(_ZH_DIGITS[text]) if text in _ZH_DIGITS else None


def _make(year: str | int, month: str | float, day: str | float) -> datetime | None:
    try:
        return datetime(int(year), int(month), int(day), tzinfo=UTC)
    except ValueError:
        return None


def date_items(
    items: Sequence[ResultItem], now: datetime, settings: DateSettings
) -> list[ResultItem]:
    """Undated items dated from their own text; `published_at` is left as sent."""
    dated = []
    for item in items:
        if item.published_at is not None:
            dated.append(item)
            continue
        found = find_date(item.title, item.snippet, item.url, now, settings)
        if found is None:
            dated.append(item)
            continue
        dated.append(
            item.model_copy(
                update={"freshness": freshness_of(found.at, now), "dated_from": found.found_in}
            )
        )
    return dated


def date_from_pages(
    items: Sequence[ResultItem],
    pages: Mapping[str, ExtractedPage],
    now: datetime,
    settings: DateSettings,
) -> list[ResultItem]:
    """`items` whose page was read (`pages`, by item id) dated by what the page states:
    `published_at` its publication date, when it states one; `freshness` from the later
    of that and its modification date. An item whose page states no date (or only
    dates later than `now` allows) keeps its own."""
    latest_allowed = now + timedelta(hours=settings.future_tolerance_hours)

    def allowed(at: datetime | None) -> datetime | None:
        # In UTC, as a provider's dates are normalised.
        return None if at is None or at > latest_allowed else min(at, now).astimezone(UTC)

    dated = []
    for item in items:
        page = pages.get(item.id)
        if page is None or page.error is not None:
            dated.append(item)
            continue
        published, modified = allowed(page.published_at), allowed(page.modified_at)
        stated = [at for at in (published, modified) if at is not None]
        if not stated:
            dated.append(item)
            continue
        update: dict[str, Any] = {"freshness": freshness_of(max(stated), now), "dated_from": "page"}
        if published is not None:
            update["published_at"] = published
            if "published_at" in item.missing:
                missing = [name for name in item.missing if name != "published_at"]
                update |= {"missing": missing, "degraded": item.degraded and bool(missing)}
        dated.append(item.model_copy(update=update))
    return dated
