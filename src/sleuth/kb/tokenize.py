"""How the knowledge base turns text into index terms, the same way for the indexed
sections and for a query.

`jieba` (the default): Chinese runs are segmented with `jieba.cut_for_search` (which
also emits the shorter words inside long ones); any other text is split into words of
letters and digits (every other character separates, so `lru_cache` and
`pg_hba.conf` are found by their parts), lower-cased, and each English word is
reduced to its Snowball stem (PyStemmer), so "indexes", "indexing" and "index" are
one term.

`trigram`: no dictionary. Words are indexed whole (stemmed) and, when three
characters or longer, also as their overlapping character trigrams, so a query
finds substrings of three or more characters; a Chinese run is indexed as its
overlapping character bigrams and trigrams, so two-character words such as 缓存 are
found inside longer runs, across word boundaries too.

A query is only ever a list of terms: nothing in it is syntax.

>>> analyze("Indexes of 分布式缓存", "jieba")
['index', 'of', '分布', '布式', '分布式', '缓存']
>>> build_query("The CACHE caches", "jieba").terms
('the', 'cach')
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from typing import Any, Literal

Tokenizer = Literal["jieba", "trigram"]
TOKENIZERS: tuple[Tokenizer, ...] = ("jieba", "trigram")
TRIGRAM_MIN = 3

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
# A Chinese run, or a word of other letters and digits.
_TERM = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
# Words the stemmer is for: Latin letters only (not numbers, versions or Chinese).
_ENGLISH = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Query:
    """A user query prepared for one tokenizer.

    `terms` are the index terms to look up (unique, in query order); `words` the
    lower-cased words of the query and their stems, to choose the snippet with.
    """

    terms: tuple[str, ...]
    words: tuple[str, ...]


def analyze(text: str, tokenizer: Tokenizer) -> list[str]:
    """The index terms of `text`, in order (repeats kept: they are term frequency)."""
    terms: list[str] = []
    for word in _TERM.findall(text.lower()):
        if _CJK_RUN.fullmatch(word):
            terms.extend(_jieba().cut_for_search(word) if tokenizer == "jieba" else _grams(word))
        else:
            terms.append(_stem(word))
            if tokenizer == "trigram" and len(word) > TRIGRAM_MIN:
                terms.extend(word[i : i + TRIGRAM_MIN] for i in range(len(word) - TRIGRAM_MIN + 1))
    return [term for term in terms if term.strip()]


def index_form(text: str, tokenizer: Tokenizer) -> str:
    """The text handed to the engine for indexing: its terms joined by spaces."""
    return " ".join(analyze(text, tokenizer))


def segment(text: str) -> str:
    """Lower-cased text with every Chinese run split into space-separated jieba words."""
    if not _CJK_RUN.search(text):
        return text.lower()
    cut = _jieba().cut_for_search
    return _CJK_RUN.sub(lambda run: " " + " ".join(cut(run.group())) + " ", text).lower()


def build_query(text: str, tokenizer: Tokenizer) -> Query:
    terms = _unique(analyze(text, tokenizer))
    words = [word for word in _TERM.findall(segment(text)) if not _CJK_RUN.fullmatch(word)]
    words += [word for word in segment(text).split() if _CJK_RUN.fullmatch(word)]
    stems = [_stem(word) for word in words]
    return Query(terms, _unique([*words, *stems]))


def _grams(run: str) -> list[str]:
    if len(run) < 2:
        return [run]
    return [run[i : i + n] for n in (2, TRIGRAM_MIN) for i in range(len(run) - n + 1)]


def _stem(word: str) -> str:
    return _stemmer().stemWord(word) if _ENGLISH.fullmatch(word) else word


def _unique(words: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(words))


@functools.cache
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


@functools.cache
def _jieba() -> Any:
    """Import jieba on first use (about a second with its dictionary), silenced."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba
