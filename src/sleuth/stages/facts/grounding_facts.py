"""Key facts: the numbers and names in a sentence that a supporting result must hold.

Owns reading them (`facts_of`, for `sleuth.stages.facts.grounding`), with the number
reading and the normalised text that grounding also uses to find them in a result
(`number_matches`, `normalised`). Pure functions: no I/O, no model, no clock; the
Chinese names to look for are passed in (`names` under `grounding:` in sleuth.yaml).

- numbers, with their unit or currency when they have one (5999 元, $799, 120 Hz,
  3.5%, 1.2 million; "5,999" = "5999", "$799" = "799 美元", "120万" = 1 200 000);
- names: runs of capitalised or mixed-case words with their model numbers
  (iPhone 15, Mate 60 Pro, Galaxy S24 Ultra, GPT-4o, Python 3.13), Chinese names
  next to a model number (小米14), names in 《》「」“” quotes, organisations ending in
  大学 / 银行 / 集团 …, and the Chinese names listed in `names` (华为, 苹果, 腾讯 …).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from sleuth.text import CJK, tokens

__all__ = ["HAS_LETTER", "MODEL_SUFFIXES", "Fact", "facts_of", "normalised", "number_matches"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Any letter, Latin or Chinese.
HAS_LETTER = re.compile(rf"[^\W\d_]|[{CJK}]")


# --- numbers --------------------------------------------------------------------------

_CURRENCY_SIGNS = {"$": "usd", "¥": "cny", "￥": "cny", "€": "eur", "£": "gbp"}
_MULTIPLIERS = {
    "万亿": 1e12,
    "万": 1e4,
    "亿": 1e8,
    "千": 1e3,
    "thousand": 1e3,
    "million": 1e6,
    "billion": 1e9,
    "trillion": 1e12,
    "bn": 1e9,
}
# Surface form → canonical unit. Chinese measure words are units too, so that
# "3999元" and "共有3种" are read as numbers, not as model names.
_UNITS = {
    "%": "%", "％": "%", "percent": "%", "个百分点": "pp", "percentage points": "pp",
    "元": "cny", "人民币": "cny", "块": "cny", "rmb": "cny", "cny": "cny", "yuan": "cny",
    "美元": "usd", "美金": "usd", "usd": "usd", "dollars": "usd", "dollar": "usd",
    "欧元": "eur", "eur": "eur", "euros": "eur", "euro": "eur",
    "英镑": "gbp", "gbp": "gbp", "pounds": "gbp",
    "日元": "jpy", "jpy": "jpy", "yen": "jpy",
    "hz": "hz", "赫兹": "hz", "khz": "khz", "mhz": "mhz", "ghz": "ghz",
    "kb": "kb", "mb": "mb", "gb": "gb", "tb": "tb", "pb": "pb",
    "mah": "mah", "毫安时": "mah", "毫安": "mah", "w": "w", "瓦": "w", "kw": "kw", "kwh": "kwh",
    "nm": "nm", "纳米": "nm", "mm": "mm", "毫米": "mm", "cm": "cm", "厘米": "cm",
    "km": "km", "公里": "km", "千米": "km", "米": "m", "kg": "kg", "千克": "kg", "公斤": "kg",
    "克": "g", "吨": "t", "英寸": "inch", "寸": "inch", "inch": "inch", "inches": "inch",
    "fps": "fps", "帧": "fps", "像素": "px", "mp": "mp", "megapixels": "mp",
    "年": "year", "years": "year", "year": "year", "个月": "month", "月": "month",
    "months": "month", "month": "month", "周": "week", "weeks": "week", "week": "week",
    "天": "day", "日": "day", "号": "day", "days": "day", "day": "day",
    "小时": "hour", "hours": "hour", "hour": "hour", "分钟": "minute", "minutes": "minute",
    "秒": "second", "seconds": "second", "岁": "age",
    "人": "people", "名": "people", "位": "people", "people": "people",
    "个": "count", "台": "device", "部": "device", "款": "model", "次": "times",
    "倍": "fold", "times": "fold", "家": "org", "种": "kind", "项": "item", "条": "item",
    "件": "item", "张": "sheet", "辆": "vehicle", "座": "site", "所": "site", "版": "edition",
    "代": "generation", "核": "core", "cores": "core", "core": "core",
}  # fmt: skip


def _alternation(words: Sequence[str]) -> str:
    """Longest first; Latin words must end at a word boundary ("m" is not "min")."""
    parts = []
    for word in sorted(words, key=len, reverse=True):
        escaped = re.escape(word).replace(r"\ ", r"\s")
        parts.append(
            f"{escaped}(?![a-z])" if word[-1].isascii() and word[-1].isalpha() else escaped
        )
    return "|".join(parts)


# Numbers are found in two steps, which is several times faster than one pattern with
# look-behinds tried at every character: the digits, then what follows them
# (multiplier and unit, matched only where a number ends) and the currency sign before.
_DIGITS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
_AFTER_NUMBER = re.compile(
    rf"(?:\s?(?P<mul>{_alternation([m for m in _MULTIPLIERS if m != '千'])}|千(?![克米瓦])))?"
    rf"(?:\s?(?P<unit>{_alternation(list(_UNITS))}))?",
    re.IGNORECASE,
)
# First characters of every multiplier and unit: most numbers are followed by none.
_UNIT_STARTS = frozenset(word[0] for word in [*_MULTIPLIERS, *_UNITS])
_SIGNS = "$¥￥€£"
_WORD_BEFORE_NUMBER = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.")
_VERSION_TAIL = frozenset(f".{digit}" for digit in "0123456789")

# --- names ----------------------------------------------------------------------------

# Latin words and digit groups, each with its position, to find runs of name words.
_LATIN_TOKEN = re.compile(r"[A-Za-z]+|\d+(?:\.\d+)*")
# Words that are capitalised because a sentence starts with them, or that start no name.
_NOT_NAMES = _words(
    """a an the this that these those it its he she they we you i my our your their his her
    in on at for with and but or if as by from to of into over after before about under
    than then so also both each all some any no not new here there what when where which
    who why how according however while because although since until per via vs yes
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday
    friday saturday sunday mon tue wed thu fri sat sun"""
)
# Words after a model number that make it another model: "iPhone 15 Pro" ≠ "iPhone 15".
MODEL_SUFFIXES = _words("pro max plus ultra mini lite se air fe neo turbo")
# “…” quotes speech as often as names: only short ones count.
_QUOTED = re.compile(r"《([^》]{1,30})》|「([^」]{1,30})」|『([^』]{1,30})』|“([^”]{1,12})”")
# Two Chinese characters right before a model number: 小米14, 红米K70, 麒麟9000S.
_CJK_MODEL = re.compile(
    rf"([{CJK}]{{2}})\s?([A-Za-z]{{0,3}}\d+(?:[A-Za-z]{{1,2}}(?![A-Za-z]))?)(?![\d.])"
)
_CJK_ORG = re.compile(rf"[{CJK}]{{2}}(?:大学|学院|银行|医院|集团|研究院|研究所|委员会)")
# Characters that start no Chinese name ("共有3", "售价5999", "第3").
_CJK_STOP = frozenset(
    "的了是在和与及或为有约达共第近超仅前后等至到于从将被把让给价值量率售卖涨跌增减"
)
_NORM_TOKEN = re.compile(rf"[a-z]+|\d+(?:\.\d+)*|[{CJK}]")


@dataclass(frozen=True, slots=True)
class Fact:
    """A key fact: a number or a name, as written and as a result must hold it."""

    text: str  # as written in the sentence
    phrase: str  # normalised ("iphone 15"), for names; "" for numbers
    extra_words: frozenset[str]  # name words that need only appear somewhere in the result
    value: float | None = None  # for numbers
    unit: str | None = None


def normalised(text: str) -> str:
    """Lower-case words, digit groups and single Chinese characters: " iphone 15 售 价 " """
    return " " + " ".join(_NORM_TOKEN.findall(text.lower())) + " "


def number_matches(text: str) -> list[tuple[int, int, float, str | None]]:
    """(start, end, value, unit) of each number in `text`, sign and unit in the span."""
    found = []
    for match in _DIGITS.finditer(text):
        start, end = match.span()
        before = text[start - 1] if start else " "
        if before in _WORD_BEFORE_NUMBER:
            continue  # part of a word or a version: iPhone15, v2, 3.13.1
        if text[end : end + 2] in _VERSION_TAIL:
            continue
        value = float(match.group().replace(",", ""))
        unit = None
        next_char = text[end + 1 : end + 2] if text[end : end + 1] == " " else text[end : end + 1]
        after = _AFTER_NUMBER.match(text, end) if next_char.lower() in _UNIT_STARTS else None
        if after is not None and after.group():
            if after["mul"]:
                value *= _MULTIPLIERS.get(after["mul"].lower(), 1.0)
            if after["unit"]:
                unit = _UNITS[" ".join(after["unit"].lower().split())]
            end = after.end()
        sign_at = start - 1 if before in _SIGNS else start - 2
        if sign_at >= 0 and text[sign_at] in _SIGNS and text[sign_at + 1 : start].strip() == "":
            start = sign_at - 2 if text[max(0, sign_at - 2) : sign_at].lower() == "us" else sign_at
            unit = unit or _CURRENCY_SIGNS[text[sign_at]]
        found.append((start, end, value, unit))
    return found


@lru_cache(maxsize=2048)
def facts_of(text: str, names: tuple[str, ...]) -> tuple[Fact, ...]:
    """Names first (in order of appearance), then the numbers not inside a name."""
    name_facts: list[tuple[int, int, Fact]] = []
    name_facts.extend(_latin_names(text))
    for match in _CJK_MODEL.finditer(text):
        prefix = match.group(1)
        after = text[match.end() :].lstrip()
        if _CJK_STOP & set(prefix) or _unit_follows(after):
            continue
        name_facts.append((match.start(), match.end(), _name(match.group())))
    for match in _QUOTED.finditer(text):
        inner = next(group for group in match.groups() if group)
        name_facts.append((match.start(), match.end(), _name(inner)))
    organisations = [m for m in _CJK_ORG.finditer(text) if not _CJK_STOP & set(m.group()[:2])]
    listed = list(_names_pattern(names).finditer(text)) if names else []
    name_facts.extend((m.start(), m.end(), _name(m.group())) for m in [*organisations, *listed])
    numbers = number_matches(text)
    # A currency sign belongs to its number: "US$1,299" names no "US".
    signed = [(start, end) for start, end, _, _ in numbers if not text[start].isdigit()]
    name_facts = [
        fact for fact in _without_overlaps(name_facts) if not _overlaps(fact[0], fact[1], signed)
    ]
    taken = [(start, end) for start, end, _ in name_facts]
    number_facts = [
        (start, end, Fact(text[start:end].strip(), "", frozenset(), value, unit))
        for start, end, value, unit in numbers
        if not _overlaps(start, end, taken)
    ]
    return tuple(fact for _, _, fact in name_facts) + tuple(fact for _, _, fact in number_facts)


def _overlaps(start: int, end: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start < s_end and s_start < end for s_start, s_end in spans)


def _unit_follows(text: str) -> bool:
    match = _AFTER_NUMBER.match(text)
    return bool(match and (match["unit"] or match["mul"]))


@lru_cache(maxsize=16)
def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(name) for name in sorted(names, key=len, reverse=True)))


def _name(text: str) -> Fact:
    return Fact(text.strip(), " ".join(_NORM_TOKEN.findall(text.lower())), frozenset())


def _without_overlaps(found: list[tuple[int, int, Fact]]) -> list[tuple[int, int, Fact]]:
    """Longest first wins; the survivors in order of appearance."""
    kept: list[tuple[int, int, Fact]] = []
    for start, end, fact in sorted(found, key=lambda f: (-(f[1] - f[0]), f[0])):
        if all(end <= k_start or k_end <= start for k_start, k_end, _ in kept):
            kept.append((start, end, fact))
    return sorted(kept, key=lambda f: f[0])


def _is_name_word(word: str) -> bool:
    return word[0].isalpha() and any(ch.isupper() for ch in word) and word.lower() not in _NOT_NAMES


def _latin_names(text: str) -> list[tuple[int, int, Fact]]:
    """Runs of name words with their model numbers: "Apple iPhone 15 Pro", "GPT-4o"."""
    found: list[tuple[int, int, Fact]] = []
    run: list[re.Match[str]] = []
    for match in [*_LATIN_TOKEN.finditer(text), None]:
        if match is not None and run:
            gap = text[run[-1].end() : match.start()]
            word = match.group()
            joined = gap in ("", " ", "-") and (
                _is_name_word(word) or word[0].isdigit() or (gap == "" and word.isalpha())
            )
            if joined:
                run.append(match)
                continue
        if run:
            starts_sentence = not HAS_LETTER.search(text[: run[0].start()])
            fact = _run_fact(text, run, starts_sentence)
            if fact is not None:
                found.append((run[0].start(), run[-1].end(), fact))
            run = []
        if match is not None and _is_name_word(match.group()) and not _is_unit(text, match):
            run = [match]
    return found


def _is_unit(text: str, match: re.Match[str]) -> bool:
    """ "GB" in "128GB" or "128 GB" is the number's unit, not a name."""
    before = text[max(0, match.start() - 2) : match.start()].rstrip()
    return bool(before) and before[-1].isdigit() and match.group().lower() in _UNITS


def _run_fact(text: str, run: list[re.Match[str]], starts_sentence: bool) -> Fact | None:
    words = [match.group() for match in run]
    has_number = any(word[0].isdigit() for word in words)
    if len(words) == 1 and starts_sentence and words[0][1:].islower():
        return None  # "Satellite calling…": capitalised only because it starts the sentence
    written = text[run[0].start() : run[-1].end()]
    lowered = [word.lower() for word in words]
    if not has_number:
        # A name without a number may be worded in any order ("Vision Pro from Apple").
        return Fact(written, "", frozenset(tokens(written)))
    first_digit = next(i for i, word in enumerate(words) if word[0].isdigit())
    core_start = max(first_digit - 1, 0)
    phrase = " ".join(_NORM_TOKEN.findall(" ".join(lowered[core_start:])))
    extra = frozenset(token for word in words[:core_start] for token in tokens(word))
    return Fact(written, phrase, extra)
