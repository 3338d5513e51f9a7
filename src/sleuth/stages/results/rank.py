"""Rank stage: order the merged candidates and give each a relevance in 0..1.

Owns relevance only: BM25 of the query terms over each item's title and snippet
(IDF taken from the candidate set itself), fused by reciprocal rank fusion with
the order each back end returned (`ResultItem.ranks`). Trust and freshness are the
verify stage's business. Pure: no I/O, settings come from `rank:` in sleuth.yaml.

    fused(item) = bm25_weight / (rrf_k + bm25_rank) + Σ_provider 1 / (rrf_k + rank_provider)
    relevance   = fused / max(fused)

except when every item came from back ends that ranked their documents' full text
(`full_text`: the local knowledge base scores whole sections, by field, stemmed, with
phrase credit): BM25 over a title and a 300-character snippet knows less than that
order, so it is not fused in. On the labelled documentation questions fusing it changed
the first result of 20 of 60, 4 for the worse and 2 for the better.

>>> a = ResultItem(id="a", url=None, providers=["p"], ranks={"p": 1}, title="Rust book")
>>> b = ResultItem(id="b", url=None, providers=["p", "q"], ranks={"p": 2, "q": 1}, title="Python")
>>> [(item.id, round(item.relevance, 3)) for item in rank([a, b], ["python"], RankSettings())]
[('b', 1.0), ('a', 0.665)]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Sequence

from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import ResultItem
from sleuth.text import tokens

__all__ = ["RankSettings", "bm25_scores", "rank"]


class RankSettings(BaseModel):
    """The `rank:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rrf_k: int = Field(
        default=60,
        ge=0,
        description="Reciprocal rank fusion constant: larger flattens the gap between positions.",
    )
    bm25_k1: float = Field(default=1.2, ge=0, description="BM25 term-frequency saturation.")
    bm25_b: float = Field(
        default=0.75, ge=0, le=1, description="BM25 length normalisation (0 = none)."
    )
    title_weight: float = Field(
        default=2.0,
        ge=0,
        description="A query term in the title counts this many times one in the snippet.",
    )
    bm25_weight: float = Field(
        default=1.0,
        ge=0,
        description="Weight of the BM25 order in the fusion, relative to each provider's order.",
    )


def bm25_scores(
    items: Sequence[ResultItem], query_terms: Sequence[str], settings: RankSettings
) -> list[float]:
    """BM25 of each item's title (weighted) and snippet against the query terms.

    Query terms and texts are tokenised alike (`sleuth.text.tokens`: words, Chinese
    bigrams); a repeated query token counts once. IDF is log(1 + (N - df + 0.5) /
    (df + 0.5)), which stays positive even for a term every candidate contains.
    """
    query = list(dict.fromkeys(token for term in query_terms for token in tokens(term)))
    if not items or not query:
        return [0.0] * len(items)
    wanted = set(query)
    frequencies: list[dict[str, float]] = []
    lengths: list[float] = []
    document_frequency: Counter[str] = Counter()
    for item in items:
        title, snippet = tokens(item.title), tokens(item.snippet)
        frequency: dict[str, float] = {}
        # Only the query's words, in order (the sums are the same, term by term).
        for token in filter(wanted.__contains__, title):
            frequency[token] = frequency.get(token, 0.0) + settings.title_weight
        for token in filter(wanted.__contains__, snippet):
            frequency[token] = frequency.get(token, 0.0) + 1.0
        frequency = {token: tf for token, tf in frequency.items() if tf > 0}
        document_frequency.update(frequency.keys())
        frequencies.append(frequency)
        lengths.append(settings.title_weight * len(title) + len(snippet))

    count = len(items)
    average_length = sum(lengths) / count or 1.0
    idf = {
        token: math.log(1.0 + (count - df + 0.5) / (df + 0.5))
        for token, df in document_frequency.items()
    }
    k1, b = settings.bm25_k1, settings.bm25_b
    scores = []
    for frequency, length in zip(frequencies, lengths, strict=True):
        norm = k1 * (1.0 - b + b * length / average_length)
        scores.append(
            sum(idf[token] * tf * (k1 + 1.0) / (tf + norm) for token, tf in frequency.items())
        )
    return scores


def rank(
    items: Sequence[ResultItem],
    query_terms: Sequence[str],
    settings: RankSettings,
    *,
    limit: int | None = None,
    full_text: Collection[str] = (),
) -> list[ResultItem]:
    """Copies of `items`, best first, each with `relevance` set (the best is 1.0); with
    `limit`, only the first `limit` of them (all are scored: relevance is relative).
    `full_text` names the back ends whose order stands when they alone answered.

    The BM25 order puts positive scores first, highest first; items that do not
    match (score 0) follow in their providers' order (best position any back end
    gave them), then as first seen. Equal fused scores keep first-seen order.
    """
    if not items:
        return []
    ranked_whole = frozenset(full_text)
    own_order = bool(ranked_whole) and all(ranked_whole.issuperset(i.providers) for i in items)
    scores = [0.0] * len(items) if own_order else bm25_scores(items, query_terms, settings)
    best_position = [min(item.ranks.values(), default=math.inf) for item in items]
    bm25_order = sorted(
        range(len(items)), key=lambda index: (-scores[index], best_position[index], index)
    )
    bm25_rank = [0] * len(items)
    for position, index in enumerate(bm25_order, start=1):
        bm25_rank[index] = position

    k = settings.rrf_k
    fused = [
        settings.bm25_weight / (k + bm25_rank[index])
        + sum(1.0 / (k + max(position, 1)) for position in item.ranks.values())
        for index, item in enumerate(items)
    ]
    top = max(fused)
    order = sorted(range(len(items)), key=lambda index: -fused[index])[:limit]
    return [
        items[index].model_copy(update={"relevance": fused[index] / top if top > 0 else 0.0})
        for index in order
    ]
