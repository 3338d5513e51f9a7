"""Grounding check: does one result actually say what a summary sentence says?

Owns `verify_summary(text, results)`, run on sleuth's own extractive summary, on a
summary a caller brings and on one a language model writes (`llm_summary`). It
splits the text into sentences and judges each against every result's title and
snippet, on its own. Pure: no I/O, no model, no clock; settings come from
`grounding:` in sleuth.yaml.

A sentence has **key facts** and **claim words**:

- key facts: numbers, with their unit or currency when they have one (5999 元, $799,
  120 Hz, 3.5%, 1.2 million; "5,999" = "5999", "$799" = "799 美元", "120万" = 1 200 000),
  and names: runs of capitalised or mixed-case words with their model numbers
  (iPhone 15, Mate 60 Pro, Galaxy S24 Ultra, GPT-4o, Python 3.13), Chinese names
  next to a model number (小米14), names in 《》「」“” quotes, organisations ending in
  大学 / 银行 / 集团 …, and the Chinese names listed in `names` (华为, 苹果, 腾讯 …);
- claim words: its other content tokens (`sleuth.text.tokens`: words, Chinese
  bigrams), stop words and bigrams straddling a function word (的, 是 …) left out,
  English words crudely stemmed ("supports" = "supported").

Then, per sentence:

- `supported` by result r when r holds ALL its key facts and at least
  `min_coverage` of its claim words. A name counts only as a whole: "iPhone 15"
  is not found in "iPhone 15 Pro" (another model), a number only with a compatible
  unit ("5999 美元" is not "5999 元"; a number without a unit matches either).
- `mixed` when no single result supports it, yet every key fact is found in some
  result, and either the facts are split over different results or a result
  states the claim (`min_coverage` of its claim words) about something else. That
  is the classic error: A says "iPhone 15 售价 5999 元", B says "Mate 60 Pro 支持卫星通话",
  the summary says "iPhone 15 支持卫星通话". `supported_by` lists the results the
  pieces came from and `reasons` names which piece is in which.
- `unsupported` otherwise; `reasons` says what no result holds.

A sentence that cites results with [n] or 【n】 markers (1-based, as the
`llm_summary` prompt numbers them) reports them in `cited` (0-based) and gets a
reason when none of the cited results is one that supports it.

>>> a = ResultItem(id="a", url=None, providers=["p"], title="iPhone 15 价格",
...                snippet="iPhone 15 售价 5999 元。")
>>> b = ResultItem(id="b", url=None, providers=["p"], title="华为 Mate 60 Pro",
...                snippet="Mate 60 Pro 支持卫星通话。")
>>> [(c.status, c.supported_by) for c in verify_summary(
...     "iPhone 15 售价 5999 元。iPhone 15 支持卫星通话。", [a, b])]
[('supported', (0,)), ('mixed', (0, 1))]
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import ResultItem
from sleuth.text import ABBREVIATIONS, CJK, tokens

__all__ = [
    "GroundingSettings",
    "SentenceCheck",
    "SentenceStatus",
    "key_facts",
    "split_claims",
    "verify_summary",
]

SentenceStatus = Literal["supported", "unsupported", "mixed"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- sentences ------------------------------------------------------------------------

# A sentence ends at 。！？ or at . ! ? before space, a quote, a bracket, a citation
# marker or the end ("3.5" does not end one), or at a line break (list items);
# closing quotes and the citation markers right after the end belong to it.
_MARKER = r"(?:\[\s*\d+(?:\s*[,，、]\s*\d+)*\s*\]|【\s*\d+(?:\s*[,，、]\s*\d+)*\s*】)"
_SENTENCE_END = re.compile(
    rf"(?:[。！？]+|[.!?]+(?=[\s\"'”’)\]）」』\[【]|$))[\"'”’)\]）」』]*(?:[ \t]*{_MARKER})*"
    r"|\n+"
)
_MARKERS = re.compile(_MARKER)
_MARKER_NUMBER = re.compile(r"\d+")
_BULLET = re.compile(r"^(?:[-*•·]\s+|\d{1,2}[.)、]\s+)")
_PUNCTUATION = "。！？.!?，,；;：:、\"'“”‘’()（）[]【】「」"
_HAS_LETTER = re.compile(rf"[^\W\d_]|[{CJK}]")

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
_MODEL_SUFFIXES = _words("pro max plus ultra mini lite se air fe neo turbo")
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

# --- words ----------------------------------------------------------------------------

_STOPWORDS = _words(
    """a an the this that these those it its is are was were be been being am do does did
    done has have had having will would shall should can could may might must of in on at
    for with and but or if as by from to into over after before about under than then so
    also too very just only not no nor any some all each both more most other such own same
    he she they we you i me my our your their his her them us there here what when where
    which who whom whose why how up down out off again further once s t don said says"""
)
# A Chinese bigram holding one of these straddles a function word ("的售", "价为") and
# says nothing a paraphrase must repeat.
_CHINESE_STOP_CHARS = frozenset("的了着是为在和与及或也都就被把将个吗呢吧啊")
_SUFFIXES = ("ing", "ed", "es", "s", "e")
_NORM_TOKEN = re.compile(rf"[a-z]+|\d+(?:\.\d+)*|[{CJK}]")


# Chinese names capitalisation cannot find: companies and brands, places (`names`).
_DEFAULT_NAMES = (
    "华为 苹果 小米 三星 荣耀 魅族 联想 中兴 腾讯 阿里巴巴 阿里云 百度 "
    "京东 字节跳动 抖音 微信 网易 美团 拼多多 特斯拉 比亚迪 蔚来 小鹏 "
    "谷歌 微软 英伟达 英特尔 高通 亚马逊 索尼 北京 上海 广州 深圳 杭州 "
    "香港 台湾 美国 中国 日本 韩国 英国 欧盟"
)


class GroundingSettings(BaseModel):
    """The `grounding:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_coverage: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description=(
            "Share of a sentence's claim words (its content words outside its key facts) "
            "that one result must contain to support it."
        ),
    )
    names: list[str] = Field(
        default_factory=lambda: _DEFAULT_NAMES.split(),
        description=(
            "Chinese proper nouns to treat as names (capitalisation finds English ones): a "
            "sentence naming one is supported only by a result that names it too."
        ),
    )
    use_titles: bool = Field(
        default=True, description="Count a result's title as part of what it says."
    )


@dataclass(frozen=True, slots=True)
class SentenceCheck:
    """The verdict on one sentence of the checked text.

    `span` is where the sentence is in that text; `supported_by` are indexes into
    `results` (for `mixed`: the results its pieces came from); `cited` are the
    results its [n] markers point at, 0-based.
    """

    sentence: str
    span: tuple[int, int]
    supported_by: tuple[int, ...]
    status: SentenceStatus
    reasons: tuple[str, ...] = ()
    cited: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class _Fact:
    text: str  # as written in the sentence
    phrase: str  # normalised ("iphone 15"), for names; "" for numbers
    extra_words: frozenset[str]  # name words that need only appear somewhere in the result
    value: float | None = None  # for numbers
    unit: str | None = None


@dataclass(frozen=True)
class _Source:
    """What one result says, read lazily: most sentences need only the words."""

    text: str
    words: frozenset[str]  # sleuth.text tokens

    @cached_property
    def norm(self) -> str:
        """Lower-case words, digit groups and single Chinese characters: " iphone 15 售 价 " """
        return _norm(self.text)

    @cached_property
    def stems(self) -> frozenset[str]:
        return frozenset(_stem(word) for word in self.words)

    @cached_property
    def numbers(self) -> tuple[tuple[float, str | None], ...]:
        return tuple((value, unit) for _, _, value, unit in _number_matches(self.text))


def split_claims(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence in `text`; list items and citation markers handled.

    >>> text = "iPhone 15 costs $799.[1] It ships in 3.5 weeks [2].\\n- Satellite calling"
    >>> [text[start:end] for start, end in split_claims(text)]
    ['iPhone 15 costs $799.[1]', 'It ships in 3.5 weeks [2].', '- Satellite calling']
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        piece = text[start:end]
        last_word = piece.rsplit(None, 1)[-1].lower() if piece.split() else ""
        if last_word in ABBREVIATIONS and match.group().startswith("."):
            continue  # "e.g. a pair" runs on
        _add_span(text, start, end, spans)
        start = end
    _add_span(text, start, len(text), spans)
    return spans


def _add_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if stripped and _HAS_LETTER.search(_MARKERS.sub("", stripped)):
        offset = start + piece.index(stripped)
        spans.append((offset, offset + len(stripped)))


def key_facts(text: str, settings: GroundingSettings | None = None) -> list[str]:
    """The numbers and names in `text` that a supporting result must hold, as written.

    >>> key_facts("iPhone 15 售价 5999 元，比 Mate 60 Pro 便宜 10%。")
    ['iPhone 15', 'Mate 60 Pro', '5999 元', '10%']
    >>> key_facts("Apple says Python 3.13 was released on October 7, 2024.")
    ['Python 3.13', '7', '2024']
    """
    names = tuple((settings or GroundingSettings()).names)
    return [fact.text for fact in _facts(text, names)]


def verify_summary(
    text: str, results: Sequence[ResultItem], settings: GroundingSettings | None = None
) -> list[SentenceCheck]:
    """Judge each sentence of `text` against the results (indexes as in `results`)."""
    settings = settings or GroundingSettings()
    names = tuple(settings.names)
    sources = [_source(item, settings.use_titles) for item in results]
    checks = []
    for start, end in split_claims(text):
        sentence = text[start:end]
        checks.append(_check(sentence, (start, end), sources, names, settings.min_coverage))
    return checks


# --- judging one sentence -------------------------------------------------------------


def _check(
    sentence: str,
    span: tuple[int, int],
    sources: Sequence[_Source],
    names: tuple[str, ...],
    min_coverage: float,
) -> SentenceCheck:
    cited = _cited(sentence)
    body = _BULLET.sub("", _MARKERS.sub(" ", sentence).strip())
    facts = _facts(body, names)
    fact_tokens = {token for fact in facts for token in tokens(fact.text)}
    claim = frozenset(_stem(token) for token in _content_tokens(body) if token not in fact_tokens)
    if not facts and not claim:
        return SentenceCheck(
            sentence,
            span,
            (),
            "unsupported",
            ("nothing in it to check against the results",),
            cited,
        )
    coverage = [len(claim & source.stems) / len(claim) if claim else 1.0 for source in sources]
    # Facts are checked only where the words already match: the cheap test first.
    supporters = tuple(
        index
        for index, source in enumerate(sources)
        if coverage[index] >= min_coverage and all(_holds(source, fact) for fact in facts)
    )
    if supporters:
        reasons: tuple[str, ...] = ()
        if cited and not set(cited) & set(supporters):
            reasons = (f"cites {_numbers(cited)} but only {_numbers(supporters)} states it",)
        return SentenceCheck(sentence, span, supporters, "supported", reasons, cited)

    holds = [[_holds(source, fact) for fact in facts] for source in sources]
    found_in = [
        tuple(index for index in range(len(sources)) if holds[index][k]) for k in range(len(facts))
    ]
    # Mixed: every key fact is stated somewhere, but the facts are split over results,
    # or one result states the claim about something else (it lacks a fact, or it
    # would support the sentence).
    some_holds_all = any(all(row) for row in holds)
    states_claim = [
        index for index in range(len(sources)) if claim and coverage[index] >= min_coverage
    ]
    if facts and all(found_in) and (not some_holds_all or states_claim):
        return _mixed(sentence, body, span, facts, found_in, claim, coverage, states_claim, cited)

    reasons_list = [
        f"'{fact.text}' is in no result"
        for fact, where in zip(facts, found_in, strict=True)
        if not where
    ]
    if claim:
        best = max(range(len(sources)), key=lambda i: coverage[i], default=None)
        if best is None:
            reasons_list.append("there are no results to check against")
        elif coverage[best] < min_coverage:
            reasons_list.append(
                f"at most {coverage[best]:.0%} of its words are in one result "
                f"({_numbers((best,))}); {min_coverage:.0%} needed"
            )
    if not reasons_list:  # every piece exists, but the facts were never stated together
        reasons_list.append("no single result states its facts together with its claim")
    return SentenceCheck(sentence, span, (), "unsupported", tuple(reasons_list), cited)


def _mixed(
    sentence: str,
    body: str,
    span: tuple[int, int],
    facts: Sequence[_Fact],
    found_in: Sequence[tuple[int, ...]],
    claim: frozenset[str],
    coverage: Sequence[float],
    states_claim: Sequence[int],
    cited: tuple[int, ...],
) -> SentenceCheck:
    reasons = [
        f"'{fact.text}' is in {_numbers(where)}"
        for fact, where in zip(facts, found_in, strict=True)
    ]
    contributors = {index for where in found_in for index in where}
    rest = body
    for fact in facts:
        rest = rest.replace(fact.text, " ")
    rest = " ".join(
        word for word in rest.strip(_PUNCTUATION + " ").split() if word.lower() not in _STOPWORDS
    )
    if states_claim:
        contributors.update(states_claim)
        reasons.append(f"the rest ('{rest}') is in {_numbers(states_claim)}")
    elif claim:
        best = max(range(len(coverage)), key=coverage.__getitem__)
        if coverage[best] == 0:
            reasons.append(f"the rest ('{rest}') is in no result")
        else:
            share = f"{coverage[best]:.0%}"
            reasons.append(f"the rest ('{rest}') is at most {share} in {_numbers((best,))}")
    reasons.append("no single result states them together: facts joined from different sources")
    return SentenceCheck(
        sentence, span, tuple(sorted(contributors)), "mixed", tuple(reasons), cited
    )


def _numbers(indexes: Sequence[int], shown: int = 4) -> str:
    named = ", ".join(f"[{index}]" for index in indexes[:shown])
    more = len(indexes) - shown
    return f"results {named}" + (f" and {more} more" if more > 0 else "")


def _cited(sentence: str) -> tuple[int, ...]:
    found = [
        int(number) - 1
        for marker in _MARKERS.findall(sentence)
        for number in _MARKER_NUMBER.findall(marker)
    ]
    return tuple(dict.fromkeys(index for index in found if index >= 0))


@lru_cache(maxsize=16384)
def _stem(token: str) -> str:
    """A crude English stem, so "supports" meets "supported": a common suffix off a word
    of four letters or more, keeping at least three; anything else is left alone.

    >>> [_stem(word) for word in ["supports", "supported", "calling", "released", "release"]]
    ['support', 'support', 'call', 'releas', 'releas']
    """
    if len(token) >= 4 and token.isascii() and token.isalpha():
        for suffix in _SUFFIXES:
            if token.endswith(suffix) and len(token) - len(suffix) >= 3:
                return token[: -len(suffix)]
    return token


def _content_tokens(text: str) -> tuple[str, ...]:
    return tuple(
        token
        for token in tokens(text)
        if token not in _STOPWORDS and not (_CHINESE_STOP_CHARS & set(token))
    )


def _holds(source: _Source, fact: _Fact) -> bool:
    if fact.value is not None:
        return any(
            math.isclose(value, fact.value, rel_tol=1e-6)
            and (unit is None or fact.unit is None or unit == fact.unit)
            for value, unit in source.numbers
        )
    if not fact.extra_words <= source.words:
        return False
    if not fact.phrase:
        return True
    needle = f" {fact.phrase} "
    position = source.norm.find(needle)
    while position >= 0:
        after = source.norm[position + len(needle) :].split(" ", 1)[0]
        if after not in _MODEL_SUFFIXES:
            return True
        position = source.norm.find(needle, position + 1)
    return False


# --- reading facts --------------------------------------------------------------------


def _norm(text: str) -> str:
    return " " + " ".join(_NORM_TOKEN.findall(text.lower())) + " "


def _source(item: ResultItem, use_title: bool) -> _Source:
    # The rank stage tokenised title and snippet already; `tokens` caches them.
    if not use_title:
        return _Source(item.snippet, frozenset(tokens(item.snippet)))
    words = frozenset(tokens(item.title)).union(tokens(item.snippet))
    return _Source(f"{item.title}\n{item.snippet}", words)


def _number_matches(text: str) -> list[tuple[int, int, float, str | None]]:
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
def _facts(text: str, names: tuple[str, ...]) -> tuple[_Fact, ...]:
    """Names first (in order of appearance), then the numbers not inside a name."""
    name_facts: list[tuple[int, int, _Fact]] = []
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
    numbers = _number_matches(text)
    # A currency sign belongs to its number: "US$1,299" names no "US".
    signed = [(start, end) for start, end, _, _ in numbers if not text[start].isdigit()]
    name_facts = [
        fact for fact in _without_overlaps(name_facts) if not _overlaps(fact[0], fact[1], signed)
    ]
    taken = [(start, end) for start, end, _ in name_facts]
    number_facts = [
        (start, end, _Fact(text[start:end].strip(), "", frozenset(), value, unit))
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


def _name(text: str) -> _Fact:
    return _Fact(text.strip(), " ".join(_NORM_TOKEN.findall(text.lower())), frozenset())


def _without_overlaps(found: list[tuple[int, int, _Fact]]) -> list[tuple[int, int, _Fact]]:
    """Longest first wins; the survivors in order of appearance."""
    kept: list[tuple[int, int, _Fact]] = []
    for start, end, fact in sorted(found, key=lambda f: (-(f[1] - f[0]), f[0])):
        if all(end <= k_start or k_end <= start for k_start, k_end, _ in kept):
            kept.append((start, end, fact))
    return sorted(kept, key=lambda f: f[0])


def _is_name_word(word: str) -> bool:
    return word[0].isalpha() and any(ch.isupper() for ch in word) and word.lower() not in _NOT_NAMES


def _latin_names(text: str) -> list[tuple[int, int, _Fact]]:
    """Runs of name words with their model numbers: "Apple iPhone 15 Pro", "GPT-4o"."""
    found: list[tuple[int, int, _Fact]] = []
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
            starts_sentence = not _HAS_LETTER.search(text[: run[0].start()])
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


def _run_fact(text: str, run: list[re.Match[str]], starts_sentence: bool) -> _Fact | None:
    words = [match.group() for match in run]
    has_number = any(word[0].isdigit() for word in words)
    if len(words) == 1 and starts_sentence and words[0][1:].islower():
        return None  # "Satellite calling…": capitalised only because it starts the sentence
    written = text[run[0].start() : run[-1].end()]
    lowered = [word.lower() for word in words]
    if not has_number:
        # A name without a number may be worded in any order ("Vision Pro from Apple").
        return _Fact(written, "", frozenset(tokens(written)))
    first_digit = next(i for i, word in enumerate(words) if word[0].isdigit())
    core_start = max(first_digit - 1, 0)
    phrase = " ".join(_NORM_TOKEN.findall(" ".join(lowered[core_start:])))
    extra = frozenset(token for word in words[:core_start] for token in tokens(word))
    return _Fact(written, phrase, extra)
