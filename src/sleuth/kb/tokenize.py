"""The two ways the knowledge base tokenises text, for indexing and for queries.

`jieba`: Chinese runs are pre-segmented with `jieba.cut_for_search` (which also emits
the shorter words inside long ones), everything is lower-cased and joined with
spaces, and FTS5's `unicode61` tokenizer indexes the result, wrapped in `porter` so
English words match across inflections (caches ~ cache; Chinese words pass through
unchanged). Any query word of any length can be matched.

`trigram`: the raw text goes to FTS5's `trigram` tokenizer, which matches substrings
of three or more characters. Shorter terms ("缓存", "AI") cannot use that index: they
are matched with `instr()` over the stored text instead (a full scan, ranked by a
simple tf-idf rather than BM25). Chinese runs of five or more characters are broken
into overlapping trigrams so a sentence-like query still matches.

Every query term is double-quoted in the MATCH expression, so FTS5 syntax in a user's
query (AND, NEAR, *, -, parentheses, quotes) is only ever text.

>>> build_query('"Cache" AND (缓存', "trigram").match
'"cache" OR "and"'
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

# FTS5 `tokenize=` argument per tokenizer.
FTS5_TOKENIZE: dict[Tokenizer, str] = {
    "jieba": "porter unicode61 remove_diacritics 2",
    "trigram": "trigram",
}

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
# A Chinese run, or a word of other letters and digits that may hold . ' ’ - inside.
_TERM = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+(?:[.'’-][^\W_{_CJK}]+)*")
_LONG_CJK = 5
# A rough English stem for choosing snippets, since porter matches "caches" to "cache".
_SUFFIX = re.compile(r"(?<=[a-z]{3})(?:ing|ed|es|s)$")


@dataclass(frozen=True)
class Query:
    """A user query prepared for one tokenizer.

    `match` is the FTS5 MATCH expression (None when no term can use the index),
    `short_terms` the trigram-mode terms searched with instr(), and `terms` every
    lower-cased term (in jieba mode also rough English stems), to choose the snippet.
    """

    match: str | None
    short_terms: tuple[str, ...]
    terms: tuple[str, ...]


def index_form(text: str, tokenizer: Tokenizer) -> str:
    """The text handed to FTS5 for indexing."""
    return segment(text) if tokenizer == "jieba" else text


def segment(text: str) -> str:
    """Lower-cased text with every Chinese run split into space-separated jieba words."""
    if not _CJK_RUN.search(text):
        return text.lower()
    cut = _jieba().cut_for_search
    return _CJK_RUN.sub(lambda run: " " + " ".join(cut(run.group())) + " ", text).lower()


def build_query(text: str, tokenizer: Tokenizer) -> Query:
    if tokenizer == "jieba":
        terms = _unique(_TERM.findall(segment(text)))
        stems = [_SUFFIX.sub("", term) for term in terms if term.isascii()]
        return Query(_or_of(terms), (), _unique([*terms, *stems]))
    words: list[str] = []
    for word in _TERM.findall(text.lower()):
        if _CJK_RUN.fullmatch(word) and len(word) >= _LONG_CJK:
            words.extend(word[i : i + TRIGRAM_MIN] for i in range(len(word) - TRIGRAM_MIN + 1))
        else:
            words.append(word)
    terms = _unique(words)
    long_terms = tuple(term for term in terms if len(term) >= TRIGRAM_MIN)
    short_terms = tuple(term for term in terms if len(term) < TRIGRAM_MIN)
    return Query(_or_of(long_terms), short_terms, terms)


def _or_of(terms: tuple[str, ...]) -> str | None:
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms) or None


def _unique(words: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(words))


@functools.cache
def _jieba() -> Any:
    """Import jieba on first use (about a second with its dictionary), silenced."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba
