"""How the knowledge base turns text into index terms, the same way for the indexed
sections and for a query.

`jieba` (the default): Chinese runs are segmented with jieba's search mode (which
also emits the shorter words inside long ones; through rjieba, the Rust port with the
same dictionary and the same cuts, about 17 times faster to index with); any other
text is split into words of letters and digits (every other character separates, so
`lru_cache` and `pg_hba.conf` are found by their parts), lower-cased, and each English
word is reduced to its Snowball stem (PyStemmer), so "indexes", "indexing" and
"index" are one term.

An identifier (words joined by `_` or `.`: `auto_increment`, `lru_cache`,
`pg_hba.conf`) is also indexed whole, lower-cased and unstemmed, after the text's
words (`index_form`), and a query looks it up whole besides its parts: "mysql
AUTO_INCREMENT" then finds the section that names `AUTO_INCREMENT` rather than those
about "auto" something (`auto_explain`) and increments.

`trigram`: no dictionary. Words are indexed whole (stemmed) and, when three
characters or longer, also as their overlapping character trigrams, so a query
finds substrings of three or more characters; a Chinese run is indexed as its
overlapping character bigrams and trigrams, so two-character words such as 缓存 are
found inside longer runs, across word boundaries too.

A query is only ever a list of terms: nothing in it is syntax. Its function words
(`STOP_WORDS`: "what", "is", "the", 的, 怎么…) are not looked up, since they match
nearly every section and would let a title such as "What Is PostgreSQL?" outrank the
page about the question's subject (and a phrase with one is costly to find); but a
function word that an article names before a content word is a name ("the with
statement", "the in operator") and is a term like any other.

>>> analyze("Indexes of 分布式缓存", "jieba")
['index', 'of', '分布', '布式', '分布式', '缓存']
>>> build_query("The CACHE caches", "jieba").terms
('cach',)
>>> index_form("lru_cache(maxsize)", "jieba")
'lru cach maxsiz lru_cache'
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass
from typing import Any, Literal

Tokenizer = Literal["jieba", "trigram"]
TOKENIZERS: tuple[Tokenizer, ...] = ("jieba", "trigram")
#: How text becomes index terms, besides the tokenizer: a full-text index built by
#: another version is rebuilt from the stored text (2: identifiers indexed whole too;
#: 3: and the dotted ones' tails).
ANALYSIS_VERSION = "3"
TRIGRAM_MIN = 3

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
# What a Chinese run is among `phrase_terms`: no index term (a space is never one).
_CJK_PLACEHOLDER = " "
# A Chinese run, or a word of other letters and digits.
_TERM = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
# The same, the Chinese run or the word in a group of its own (one scan, no re-check).
_TERM_KIND = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")
# Every ASCII character but letters and digits separates words, `_` too (as in `_TERM`).
_ASCII_SEPARATORS = str.maketrans(
    dict.fromkeys((c for c in map(chr, range(128)) if not c.isalnum()), " ")
)
# A letter or digit that is not ASCII (one that is part of a word, as `_TERM` reads it).
_NON_ASCII_LETTER = re.compile(r"[^\W\x00-\x7f]")
# Words the stemmer is for: Latin letters only (not numbers, versions or Chinese).
_ENGLISH = re.compile(r"[a-z]+")
# An identifier in lower-cased text: a word that starts with a letter and joins more
# words with `_` or `.` (not a number such as 10.0.3.7, nor a sentence's full stop).
_IDENTIFIER = re.compile(r"[a-z][a-z0-9]*+(?:[._][a-z0-9]++)+")
# Where one may be: a `_` or `.` before a letter or digit. Looking for these first and
# reading the identifier around each is four times faster than matching every word.
# One pattern for each, since a pattern that opens with one literal character is
# searched by a plain comparison loop, and `[._]` by a set test at every character.
_DOT_JOINT = re.compile(r"\.(?=[a-z0-9])")
_UNDERSCORE_JOINT = re.compile(r"_(?=[a-z0-9])")
_RUN = re.compile(r"[a-z0-9._]+")
_RUN_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._")

#: Function words of questions, in English and Chinese: not query terms on their own.
# fmt: off
STOP_WORDS = frozenset(
    {
        "a", "an", "the", "and", "or", "but", "if", "then", "so", "of", "to", "in", "on", "at",
        "by", "for", "from", "with", "into", "onto", "as", "about", "than", "that", "this",
        "these", "those", "there", "here", "it", "its", "is", "are", "was", "were", "be",
        "been", "being", "am", "do", "does", "did", "done", "doing", "have", "has", "had",
        "i", "me", "my", "we", "our", "you", "your", "he", "she", "they", "them", "their",
        "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "can",
        "could", "should", "would", "will", "shall", "may", "might", "must", "not", "no",
        "any", "some", "all", "each", "every", "one", "other", "also", "just", "only",
        "very", "too", "get", "got", "want", "need", "way", "s", "t",
        "的", "了", "是", "在", "我", "你", "他", "她", "它", "我们", "你们", "他们", "这", "那",
        "这个", "那个", "一个", "一下", "怎么", "怎样", "怎么样", "如何", "什么", "哪个", "哪些",
        "为什么", "吗", "呢", "吧", "啊", "和", "与", "或", "及", "把", "被", "让", "给", "用",
        "要", "想", "能", "会", "可以", "应该", "该", "就", "也", "都", "还", "又", "很", "有",
        "没有", "不", "个", "里", "上", "下", "中", "时", "后", "之后", "以后", "所有", "一直",
    }
)
# fmt: on
_ARTICLES = frozenset({"the", "a", "an"})


@dataclass(frozen=True)
class Query:
    """A user query prepared for one tokenizer.

    `terms` are the index terms to look up (unique, in query order, function words
    left out unless nothing else is left, then the query's identifiers whole); `pairs`
    the adjacent content terms of the query, for phrase credit; `words` the lower-cased
    words of the query and their stems, to choose the snippet with.
    """

    terms: tuple[str, ...]
    words: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...] = ()


def analyze(text: str, tokenizer: Tokenizer) -> list[str]:
    """The index terms of `text`, in order (repeats kept: they are term frequency)."""
    return _analyzed(text.lower(), tokenizer)


def _analyzed(lowered: str, tokenizer: Tokenizer) -> list[str]:
    if tokenizer == "jieba":
        return _jieba_terms(lowered)
    terms: list[str] = []
    for run, word in _TERM_KIND.findall(lowered):
        if run:
            terms.extend(_grams(run))
        else:
            terms.append(_stem(word))
            if len(word) > TRIGRAM_MIN:
                terms.extend(word[i : i + TRIGRAM_MIN] for i in range(len(word) - TRIGRAM_MIN + 1))
    return terms


def _jieba_terms(lowered: str) -> list[str]:
    # Most text has no Chinese: one pass (ASCII text is not even searched for any).
    if lowered.isascii():
        return list(map(_STEMS.__getitem__, lowered.translate(_ASCII_SEPARATORS).split()))
    if not _NON_ASCII_LETTER.search(lowered):
        # Its other characters separate words (→, §, “, —: most English text that is not
        # ASCII), as `?` does: read as ASCII, twice as fast as by `_TERM`.
        ascii_ = lowered.encode("ascii", "replace").decode("ascii")
        return list(map(_STEMS.__getitem__, ascii_.translate(_ASCII_SEPARATORS).split()))
    if not _CJK_RUN.search(lowered):
        return list(map(_STEMS.__getitem__, _TERM.findall(lowered)))
    import rjieba  # here: loading its dictionary takes 0.2 s, which English text never needs

    terms: list[str] = []
    for run, word in _TERM_KIND.findall(lowered):
        if run:
            terms += rjieba.cut_for_search(run)  # a list already: no copy of it
        else:
            terms.append(_stem(word))
    return terms


def phrase_terms(text: str, tokenizer: Tokenizer) -> list[str]:
    """The terms of `text` in which a query's pairs (`Query.pairs`) are looked for: those
    of `analyze`, in order, but with jieba each Chinese run one placeholder. A query's
    pairs are never Chinese, so a run only keeps the words on either side of it apart,
    as its own terms do in the index, and cutting it (jieba is most of the time of
    analysing Chinese text) would find nothing more."""
    if tokenizer != "jieba":
        return analyze(text, tokenizer)
    lowered = text.lower()
    if not _CJK_RUN.search(lowered):
        return list(map(_STEMS.__getitem__, _words(lowered)))
    return [_stem(word) if word else _CJK_PLACEHOLDER for _run, word in _TERM_KIND.findall(lowered)]


def _words(lowered: str) -> list[str]:
    """The words of lower-cased text without Chinese, as `_TERM` finds them; ASCII text
    (most documentation) by a translation and a split, which is 30 % faster."""
    if lowered.isascii():
        return lowered.translate(_ASCII_SEPARATORS).split()
    return _TERM.findall(lowered)


def index_form(text: str, tokenizer: Tokenizer) -> str:
    """The text handed to the engine for indexing: its terms joined by spaces, then its
    identifiers whole and the tails of the dotted ones (`functools.lru_cache` also as
    `lru_cache`, so the entry is found by the name a caller writes; after the text, so
    that no phrase of its words is broken)."""
    if not text:
        return ""  # a third of the fields indexed: most sections have no code
    lowered = text.lower()  # once for the words and the identifiers
    terms = _analyzed(lowered, tokenizer)
    after = _whole_names(lowered)
    return " ".join(terms + after if after else terms)


def whole_names(text: str) -> list[str]:
    """What `index_form` adds after the words of `text`: its identifiers whole, then
    the tails of the dotted ones."""
    return _whole_names(text.lower())


def _whole_names(lowered: str) -> list[str]:
    whole = _identifiers(lowered)
    return whole + [tail for name in whole for tail in _tails(name)] if whole else whole


def _tails(identifier: str) -> list[str]:
    """The ends of a dotted identifier that are identifiers still: `os.path.join` gives
    `path.join` (`join` is a word, indexed already); `inspect.Signature.bind_partial`
    gives `signature.bind_partial` and `bind_partial`."""
    parts = identifier.split(".")
    tails = (".".join(parts[start:]) for start in range(1, len(parts)))
    return [tail for tail in tails if "." in tail or "_" in tail]


def identifiers(text: str) -> list[str]:
    """The identifiers of `text`, lower-cased, in order: `pg_hba.conf`, `lru_cache`."""
    return _identifiers(text.lower())


def _identifiers(lowered: str) -> list[str]:
    found: list[str] = []
    end = 0
    for start in _joints(lowered):
        if start < end:  # inside the identifier just read
            continue
        while start and lowered[start - 1] in _RUN_CHARACTERS:
            start -= 1
        run = _RUN.match(lowered, start)
        if run is not None:
            end = run.end()
            found += _IDENTIFIER.findall(run.group())
    return found


def _joints(lowered: str) -> list[int]:
    """Where a `.` or `_` stands before a letter or digit, in order."""
    dots = [m.start() for m in _DOT_JOINT.finditer(lowered)] if "." in lowered else []
    if "_" not in lowered:
        return dots
    underscores = [m.start() for m in _UNDERSCORE_JOINT.finditer(lowered)]
    return sorted(dots + underscores) if dots else underscores


def segment(text: str) -> str:
    """Lower-cased text with every Chinese run split into space-separated jieba words."""
    if not _CJK_RUN.search(text):
        return text.lower()
    return _CJK_RUN.sub(lambda run: " " + " ".join(_cut(run.group())) + " ", text).lower()


def build_query(text: str, tokenizer: Tokenizer) -> Query:
    sequence = analyze(text, tokenizer)
    kept = _content(sequence)
    content = [term for term, keep in zip(sequence, kept, strict=True) if keep]
    terms = _unique([*(content or sequence), *identifiers(text)])
    # Neighbours in the query, function words left out ("create an index" pairs nothing),
    # and Chinese left out: jieba's search mode gives a word's pieces beside the word
    # (服务 务器 服务器), and pairing them counted one word three times over.
    marked = list(zip(sequence, kept, strict=True))
    pairs = tuple(
        (a, b)
        for (a, keep_a), (b, keep_b) in dict.fromkeys(itertools.pairwise(marked))
        if keep_a and keep_b and a != b and not _CJK_RUN.search(a + b)
    )
    words = [word for word in _TERM.findall(segment(text)) if not _CJK_RUN.fullmatch(word)]
    words += [word for word in segment(text).split() if _CJK_RUN.fullmatch(word)]
    words = [word for word in words if not _is_stop(word)] or words
    stems = [_stem(word) for word in words]
    return Query(terms, _unique([*words, *stems]), pairs)


@functools.cache
def _stemmed_stop_words() -> frozenset[str]:
    return frozenset(_stem(word) for word in STOP_WORDS) | STOP_WORDS


def _content(sequence: list[str]) -> list[bool]:
    """Which terms of a query are content: not function words, except one named by an
    article before a content word ("the with statement")."""
    kept = [not _is_stop(term) for term in sequence]
    for i in range(1, len(sequence) - 1):
        if sequence[i - 1] in _ARTICLES and not kept[i] and not _is_stop(sequence[i + 1]):
            kept[i] = True
    return kept


def _is_stop(term: str) -> bool:
    return term in _stemmed_stop_words()


def _grams(run: str) -> list[str]:
    if len(run) < 2:
        return [run]
    return [run[i : i + n] for n in (2, TRIGRAM_MIN) for i in range(len(run) - n + 1)]


class _Stems(dict[str, str]):
    """Words and their stems, remembered: documentation repeats its words, and indexing
    asks for every one (a dictionary lookup is the cheapest call there is)."""

    def __missing__(self, word: str) -> str:
        if len(self) >= _STEMS_KEPT:
            self.clear()
        stem = str(_stemmer().stemWord(word)) if _ENGLISH.fullmatch(word) else word
        self[word] = stem
        return stem


_STEMS_KEPT = 500_000
_STEMS = _Stems()
_stem = _STEMS.__getitem__


def _unique(words: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(words))


@functools.cache
def _stemmer() -> Any:
    import Stemmer

    # No cache of its own (its default keeps 10,000 words): `_STEMS` remembers every
    # word, and PyStemmer's cache made stemming a new word two to three times slower.
    return Stemmer.Stemmer("english", 0)


def _cut(run: str) -> list[str]:
    import rjieba  # here: see _jieba_terms

    return list(rjieba.cut_for_search(run))
