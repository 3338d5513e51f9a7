"""Grounding check: does one result actually say what a summary sentence says?

Owns `verify_summary(text, results)`, run on sleuth's own extractive summary, on a
summary a caller brings and on one a language model writes (`llm_summary`). It
splits the text into sentences and judges each against every result's title and
snippet, on its own. Pure: no I/O, no model, no clock; settings come from
`grounding:` in sleuth.yaml.

A sentence has **key facts** and **claim words**:

- key facts: numbers with their unit or currency, and names (`sleuth.stages.facts.grounding_facts`);
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
from sleuth.stages.facts.grounding_facts import (
    HAS_LETTER,
    MODEL_SUFFIXES,
    Fact,
    facts_of,
    normalised,
    number_matches,
)
from sleuth.text import ABBREVIATIONS, tokens

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


@dataclass(frozen=True)
class _Source:
    """What one result says, read lazily: most sentences need only the words."""

    text: str
    words: frozenset[str]  # sleuth.text tokens

    @cached_property
    def norm(self) -> str:
        """Lower-case words, digit groups and single Chinese characters: " iphone 15 售 价 " """
        return normalised(self.text)

    @cached_property
    def stems(self) -> frozenset[str]:
        return frozenset(_stem(word) for word in self.words)

    @cached_property
    def numbers(self) -> tuple[tuple[float, str | None], ...]:
        return tuple((value, unit) for _, _, value, unit in number_matches(self.text))


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
    if stripped and HAS_LETTER.search(_MARKERS.sub("", stripped)):
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
    return [fact.text for fact in facts_of(text, names)]


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
    facts = facts_of(body, names)
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
    facts: Sequence[Fact],
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


def _holds(source: _Source, fact: Fact) -> bool:
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
        if after not in MODEL_SUFFIXES:
            return True
        position = source.norm.find(needle, position + 1)
    return False


def _source(item: ResultItem, use_title: bool) -> _Source:
    # The rank stage tokenised title and snippet already; `tokens` caches them.
    if not use_title:
        return _Source(item.snippet, frozenset(tokens(item.snippet)))
    words = frozenset(tokens(item.title)).union(tokens(item.snippet))
    return _Source(f"{item.title}\n{item.snippet}", words)
