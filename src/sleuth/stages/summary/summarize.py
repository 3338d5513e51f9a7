"""Summarize stage: a short, query-focused summary made of whole cited sentences.

Owns the response's `summary`. Every sentence is copied verbatim from ONE result's
snippet and carries exactly one `Citation` whose span is where it sits there, so
`results[c.result].snippet[c.start:c.end] == sentence.text` always holds and a sentence
never joins fragments of two sources. It does not rewrite, translate or shorten text,
it reads no titles (a title is not a sentence), and it does no I/O; settings come from
`summary:` in sleuth.yaml.

How sentences are chosen:

1. Candidates are the whole sentences of each snippet (as `sleuth.text.split_sentences`
   cuts them,
   Chinese 。！？ and English .!?), skipping fragments a back end cut ("Oct 2, 2024 ...",
   a trailing piece with no closing punctuation, a piece that starts mid-sentence;
   a back end named in `uncut`, the local knowledge base, sends its documents' own
   whole sentences, which may start as a man page's do: `kill -9 -1 …`, `--vacuum-size=`),
   sentences shorter than `min_sentence_tokens`, and results that must not be quoted
   (`skip_flags`, e.g. suspected injections; or a `degraded` item whose `snippet` is
   missing, since its snippet is only its title).
2. Each candidate scores

       relevance = coverage × 1/(1 + rank_decay × result_index)
                            × 1/(1 + position_decay × sentence_position)
                            × (1 if in the query's language else other_language_weight)

   where coverage is the share of the query's tokens (`sleuth.text.tokens`: words,
   Chinese bigrams) the sentence contains, each weighted by its inverse frequency
   among the candidate sentences (a token most of them share tells little about which
   one answers); a sentence with fewer than `min_query_tokens` of them is not a
   candidate.
3. Of the sentences at least `min_relevance` times as relevant as the best, maximal
   marginal relevance picks up to `max_sentences` within `max_chars`:
   `mmr_lambda × relevance/max_relevance − (1 − mmr_lambda) × similarity`, similarity
   being the Jaccard overlap of token sets with the sentences already chosen; a
   sentence more similar than `max_similarity` to a chosen one is never taken (the same
   sentence syndicated by two sites is said once), and at most `max_per_result`
   sentences come from one result.
4. A first result from a back end named in `uncut` (the knowledge base) is quoted when
   it has a candidate: if none of its sentences was picked, the pick is made again
   with its most relevant one first. The knowledge base ranked it first on the
   whole section (title, headings, text), which the summary does not see; on a web
   result rank and summary read the same title and snippet, and the summary's choice
   stands. Where that result has no candidate, what may lead instead is, in this
   order, a line of its passage that reads as prose (`_reads_as_prose`: a man page's
   `tar -xjf foo.tar.bz2 -C bar/ 把用 bzip 压缩的文件 … 提取到 bar 目录`, which ends
   without a stop), then its first whole sentence, though it holds no query token:
   an API entry asked by name (`asyncio.Queue.get_nowait`) is found by its heading,
   and its text ("Return an item if one is immediately available, else raise
   QueueEmpty.") does not repeat the name. These are never taken otherwise, nor from
   another result, and they weigh no query token.
5. The chosen sentences are ordered by (result rank, position in the snippet), not by
   score: the summary reads in the order the results are listed, sentences of one
   snippet keep their order, and each citation index only grows.

>>> items = [
...     ResultItem(id="a", url=None, providers=["p"], title="Python 3.13",
...                snippet="Oct 2, 2024 ... Python 3.13 adds a JIT compiler. Read more"),
...     ResultItem(id="b", url=None, providers=["p"], title="Python 3.13 news",
...                snippet="Python 3.13 adds an experimental JIT compiler."),
... ]
>>> [(s.text, s.citations[0]) for s in summarize(items, ["python", "3.13", "jit"], "en")]
[('Python 3.13 adds a JIT compiler.', Citation(result=0, start=16, end=48))]
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Collection, Sequence
from functools import lru_cache
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import Citation, ResultItem, SummarySentence
from sleuth.text import CJK_RUN, sentence_spans, tokens

__all__ = ["SummarySettings", "summarize"]

# A whole sentence ends with one of these, maybe followed by closing quotes or brackets;
# a cut one ends with "..." / "…" or with no punctuation at all, or starts with an
# ellipsis, a continuation mark or a lower-case letter (the tail of a cut sentence).
_ENDS = "。！？!?."
_CLOSING = "\"'”’)]）」』"
_CONTINUATION = "…,;:，；：、)]）"
# A sentence's first colon, with something after it.
_COLON = re.compile(r"(?<=\S)(?::\s+|：\s*)(?=\S)")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# Besides a letter or a digit, what a whole sentence may start with.
_OPENING = "\"'“‘(（[【《「『¿¡$€£¥#"
_ASCII_NON_LETTERS = bytes(code for code in range(128) if not chr(code).isalpha())
# The least a query token weighs, however many sentences hold it.
_MIN_WEIGHT = 0.1
# What a line of prose without a stop has and a table row or a command line has not
# (`_reads_as_prose`).
_HAN_CLAUSE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{4}")
_PROMPTS = "#$>%"
# A term (a few words at most), a dash with spaces around it, and what the term is.
_DEFINITION = re.compile(r"[^\s—–-][^—–]{0,60}?\s[—–-]\s+(\S.*)")


class SummarySettings(BaseModel):
    """The `summary:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_sentences: int = Field(
        default=3, ge=0, description="At most this many sentences (0 turns the summary off)."
    )
    max_chars: int = Field(
        default=400,
        ge=1,
        description=(
            "Character budget of all sentences together; the first sentence chosen is kept "
            "even when longer, so a long relevant sentence is never cut."
        ),
    )
    mmr_lambda: float = Field(
        default=0.7,
        ge=0,
        le=1,
        description="Maximal marginal relevance trade-off: 1 = relevance only, 0 = novelty only.",
    )
    max_similarity: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description=(
            "A sentence whose token-set Jaccard similarity to a chosen one exceeds this is a "
            "near-repeat and is never taken."
        ),
    )
    rank_decay: float = Field(
        default=0.15,
        ge=0,
        description="Source rank prior: a sentence of result i weighs 1 / (1 + rank_decay × i).",
    )
    position_decay: float = Field(
        default=0.1,
        ge=0,
        description="Position prior: the j-th sentence of a snippet weighs 1 / (1 + decay × j).",
    )
    other_language_weight: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Weight of a sentence not in the query's language (0 = never take one).",
    )
    min_query_tokens: int = Field(
        default=1,
        ge=0,
        description="A sentence must contain at least this many distinct query tokens.",
    )
    min_sentence_tokens: int = Field(
        default=4,
        ge=1,
        description="Shorter sentences (in words or Chinese bigrams) are too thin to quote.",
    )
    max_per_result: int = Field(
        default=2, ge=1, description="At most this many sentences from one result."
    )
    max_results: int = Field(
        default=10,
        ge=1,
        description="Only the first this many results are read: the summary speaks for the top.",
    )
    min_relevance: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description=(
            "A sentence is taken only if its relevance is at least this share of the best "
            "sentence's (0 = fill up to max_sentences whatever they say)."
        ),
    )
    mmr_pool: int = Field(
        default=20,
        ge=1,
        description="Maximal marginal relevance chooses among this many most relevant sentences.",
    )
    skip_flags: list[str] = Field(
        default_factory=lambda: ["suspected_injection", "ad"],
        description="Results carrying any of these flags are never quoted.",
    )


class _Candidate(NamedTuple):  # a tuple: one is built per sentence of every snippet
    result: int
    start: int
    end: int
    text: str
    words: frozenset[str]
    relevance: float
    # The first result's line without a stop, or sentence without a query token: only
    # ever its lead (item 4 above).
    lead_only: bool = False


def summarize(
    results: Sequence[ResultItem],
    query_terms: Sequence[str],
    language: str,
    settings: SummarySettings | None = None,
    *,
    uncut: Collection[str] = (),
) -> list[SummarySentence]:
    """Up to `max_sentences` whole snippet sentences, each citing its one source.

    `results` are the final ranked items in response order (citation `result` indexes
    point into it); `language` is the query's ('zh' or 'en', `sleuth.text.language_of`);
    `uncut` names the back ends whose snippets are never cut mid-sentence.
    """
    settings = settings or SummarySettings()
    if settings.max_sentences == 0:
        return []
    query = frozenset(_stem(token) for term in query_terms for token in tokens(term))
    leads = bool(results) and bool(uncut) and set(uncut).issuperset(results[0].providers)
    found = _candidates(results, query, language, settings, frozenset(uncut), lead=leads)
    candidates = [c for c in found if not c.lead_only]
    chosen = _select(candidates, settings)
    if leads and all(c.result != 0 for c in chosen):
        firsts = [c for c in candidates if c.result == 0]
        if not firsts:  # a line with query tokens first, else the first sentence
            firsts = [c for c in found if c.lead_only]
        if firsts:
            lead = max(firsts, key=lambda c: c.relevance)  # the earliest of equals
            pool = [*candidates, lead] if lead.lead_only else candidates
            chosen = _select(pool, settings, lead=lead)
    chosen.sort(key=lambda c: (c.result, c.start))
    return [
        SummarySentence(
            text=c.text, citations=[Citation(result=c.result, start=c.start, end=c.end)]
        )
        for c in chosen
    ]


def _quotable(item: ResultItem, skip_flags: Sequence[str]) -> bool:
    if not item.snippet or any(flag in item.flags for flag in skip_flags):
        return False
    return not (item.degraded and "snippet" in item.missing)


def _is_whole(sentence: str, *, uncut: bool = False) -> bool:
    """Ends with 。！？ . ! or ? (not an ellipsis), maybe closed by a quote or bracket, and
    does not start mid-sentence (an ellipsis, a continuation mark, a lower-case word),
    which an `uncut` text's sentence cannot; an `uncut` text's introduction and what
    its colon introduces is whole however it ends (`_introduces`)."""
    body = sentence.rstrip(_CLOSING)
    if not body or body.endswith(("..", "…")):
        return False
    if body[-1] not in _ENDS:
        # An uncut text's intro and the example it introduces, as the knowledge base
        # gives them ("To stop the server, use: $ pg_ctl stop"), is whole too.
        return uncut and _introduces(sentence)
    if uncut:
        return True
    if sentence.startswith("..") or sentence[0] in _CONTINUATION:
        return False
    if unicodedata.category(sentence[0])[0] not in "LN" and sentence[0] not in _OPENING:
        return False  # "/ 暂时无法检索……": the tail of something cut before it
    first_word = sentence.split(None, 1)[0]
    return not (first_word.isascii() and first_word.islower())  # "iPhone 15 …" is whole


def _introduces(sentence: str) -> bool:
    """A clause (three words, or four Chinese characters, at least), a colon and what
    it introduces: not a table's "name: value" row."""
    colon = _COLON.search(sentence)
    if colon is None:
        return False
    head = sentence[: colon.start()]
    return len(head.split()) >= 3 or len(_HAN.findall(head)) >= 4


def _candidates(
    results: Sequence[ResultItem],
    query: frozenset[str],
    language: str,
    settings: SummarySettings,
    uncut: frozenset[str],
    *,
    lead: bool = False,
) -> list[_Candidate]:
    """The candidate sentences of `results`; with `lead`, also those the first result
    may lead with and nothing else (`lead_only`: item 4 above). They are left out of
    the query tokens' weights, which are the same with `lead` as without."""
    needed = settings.min_query_tokens if query else 0
    sentences: list[tuple[int, int, int, int, str, frozenset[str], bool]] = []
    for index, item in enumerate(results[: settings.max_results]):
        snippet = item.snippet
        if not _quotable(item, settings.skip_flags):
            continue
        whole = bool(uncut) and uncut.issuperset(item.providers)
        leading = lead and index == 0
        # The rank stage tokenised this snippet already (tokens are cached): a snippet
        # without enough query tokens has no sentence with them either.
        holds = not needed or _holds(query, tokens(snippet), needed)
        if not holds and not leading:
            continue
        for position, (start, end) in enumerate(sentence_spans(snippet)):
            text = snippet[start:end]
            lead_only = not holds
            if not _is_whole(text, uncut=whole):
                if not (leading and _reads_as_prose(text)):
                    continue
                lead_only = True
            sentence_tokens = tokens(text)
            if len(sentence_tokens) < settings.min_sentence_tokens:
                continue
            words = frozenset(map(_stem, sentence_tokens))
            sentences.append((index, position, start, end, text, words, lead_only))
    weight = _query_weights(query, [s[5] for s in sentences if not s[6]])
    total = sum(weight.values())
    found: list[_Candidate] = []
    for index, position, start, end, text, words, lead_only in sentences:
        shared = query & words
        if len(shared) < needed:
            if not (lead and index == 0):
                continue
            lead_only = True
        coverage = sum(weight[token] for token in shared) / total if query else 1.0
        relevance = coverage / (1.0 + settings.rank_decay * index)
        relevance /= 1.0 + settings.position_decay * position
        if _language(text) != language:
            relevance *= settings.other_language_weight
        if relevance > 0 or lead_only:
            found.append(_Candidate(index, start, end, text, words, relevance, lead_only))
    return found


def _reads_as_prose(line: str) -> bool:
    """Whether a knowledge-base line without a closing stop says something in words:
    a Chinese clause (four Han characters in a row), or a term and what it is, on
    either side of a dash (`ls - list directory contents`, `SET CONSTRAINTS — set
    constraint check timing for the current transaction`). Not a table's row
    ("DENSE_RANK reserved reserved"), a shell prompt's command (`# systemctl enable
    foo.service`), nor an English sentence that goes on in a code block after it
    ("… returns a command tag of the form"), which reads as whole but is not."""
    if line[:1] in _PROMPTS:
        return False
    if _HAN_CLAUSE.search(line):
        return True
    defined = _DEFINITION.match(line)
    if defined is None:
        return False
    words = defined.group(1).split()
    return len(words) >= 3 and any(word.isalpha() and word.islower() for word in words)


def _holds(query: frozenset[str], words: Sequence[str], needed: int) -> bool:
    """Whether `words`, stemmed, hold `needed` distinct query tokens; the scan stops at
    the last one needed (most snippets hold one in their first words).

    >>> _holds(frozenset({"jit", "python"}), ("python", "adds", "a", "jit"), 2)
    True
    """
    found: set[str] = set()
    for word in words:
        stem = _stem(word)
        if stem in query and stem not in found:
            found.add(stem)
            if len(found) >= needed:
                return True
    return False


def _query_weights(query: frozenset[str], sentences: Sequence[frozenset[str]]) -> dict[str, float]:
    """Each query token's weight, its inverse document frequency among the sentences:
    a token in most of them ("sleuth" in sleuth's own docs) tells little about which
    one answers; one in few ("duplicate") tells much.

    >>> sentences = [frozenset({"a"})] * 3 + [frozenset({"a", "b"})]
    >>> weights = _query_weights(frozenset({"a", "b"}), sentences)
    >>> weights["a"] < weights["b"]
    True
    """
    count = len(sentences)
    frequency = dict.fromkeys(query, 0)
    for words in sentences:
        for token in query & words:
            frequency[token] += 1
    # BM25's inverse document frequency, kept above a floor so that a token in most
    # sentences still counts a little
    return {
        token: max(math.log((count - seen + 0.5) / (seen + 0.5)), _MIN_WEIGHT)
        for token, seen in frequency.items()
    }


@lru_cache(maxsize=65536)  # the same words recur in every snippet
def _stem(token: str) -> str:
    """An English plural or third-person "s" taken off (Harman's S-stemmer), so that
    "removes" meets "remove" and "duplicates" meets "duplicate"; other tokens as given.

    >>> [_stem(word) for word in ("removes", "queries", "class", "status", "is", "发布")]
    ['remove', 'query', 'class', 'status', 'is', '发布']
    """
    if len(token) <= 3 or not token.isascii() or token.endswith(("ss", "us", "is")):
        return token
    if token.endswith("ies") and not token.endswith(("eies", "aies")):
        return token[:-3] + "y"
    if token.endswith("es") and not token.endswith(("aes", "ees", "oes")):
        return token[:-1]
    return token[:-1] if token.endswith("s") else token


def _language(text: str) -> str:
    """The rule of `sleuth.text.language_of` ('zh' when Chinese characters are at least
    30% of the letters), counted with C-level string operations instead of a loop over
    characters; letters outside ASCII and Chinese (é, ß) are not counted."""
    chinese = sum(map(len, CJK_RUN.findall(text)))  # one scan, no text built
    if not chinese:
        return "en"
    latin = len(text.encode("ascii", "ignore").translate(None, _ASCII_NON_LETTERS))
    return "zh" if chinese / (chinese + latin) >= 0.3 else "en"


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    shared = len(a & b)
    union = len(a) + len(b) - shared  # counted, not built
    return shared / union if union else 0.0


def _select(
    candidates: list[_Candidate], settings: SummarySettings, lead: _Candidate | None = None
) -> list[_Candidate]:
    """Maximal marginal relevance under the sentence, character and per-result limits;
    `lead`, one of `candidates`, picked first whatever its relevance."""
    if not candidates:
        return []
    top = max(c.relevance for c in candidates)
    # Highest relevance first, then rank and position: ties resolve the same way every run.
    pool = sorted(candidates, key=lambda c: (-c.relevance, c.result, c.start))
    # a sentence far less relevant than the best costs the caller context for little
    pool = [
        c
        for c in pool[: settings.mmr_pool]
        if c.relevance >= settings.min_relevance * top and c is not lead
    ]
    similarity = [0.0] * len(pool)  # to the closest sentence chosen so far
    alive = [True] * len(pool)
    chosen: list[_Candidate] = []
    per_result: dict[int, int] = {}
    used = 0
    lam = settings.mmr_lambda
    while len(chosen) < settings.max_sentences:
        if lead is not None:
            picked, lead = lead, None
        else:
            best = -1
            best_score = float("-inf")
            for i, candidate in enumerate(pool):
                if not alive[i] or per_result.get(candidate.result, 0) >= settings.max_per_result:
                    continue
                if chosen and used + len(candidate.text) > settings.max_chars:
                    continue
                score = lam * candidate.relevance / top - (1.0 - lam) * similarity[i]
                if score > best_score:
                    best, best_score = i, score
            if best < 0:
                break
            picked = pool[best]
            alive[best] = False
        chosen.append(picked)
        per_result[picked.result] = per_result.get(picked.result, 0) + 1
        used += len(picked.text)
        for i, candidate in enumerate(pool):
            if alive[i]:
                similarity[i] = max(similarity[i], _jaccard(candidate.words, picked.words))
                if similarity[i] > settings.max_similarity:
                    alive[i] = False  # a near-repeat of a chosen sentence: gone for good
    return chosen
