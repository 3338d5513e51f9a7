"""Phrase credit: a query's neighbouring content words found side by side in a section.

Each pair of adjacent query terms (`Query.pairs`) found next to each other in a field
of a section adds `PHRASE_WEIGHT` of what BM25 gives a term that rare found that often:
the two words' inverse document frequencies in that field, times the phrase's
frequency saturated as BM25 saturates a term's (about what the sequential dependence
model gives ordered pairs). Field lengths are left out: the credit is a tie-breaker
between sections the terms already chose, and with or without them the development
questions ranked the same.

It is computed for the best sections only, from their stored text, after the engine
has chosen them by their terms: a phrase clause in the engine's query would be
evaluated in every section holding both words, which for a long pasted question (17
pairs in three fields) was two thirds of its time at 180,000 sections.

>>> idf = {("text", "lru"): 4.0, ("text", "cache"): 2.0}
>>> round(phrase_credit({"text": ["lru", "cache", "lru", "cache"]}, [("lru", "cache")], idf), 3)
0.825
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence

# About a tenth of a term's, as the sequential dependence model weighs ordered pairs
# (0.05 and 0.2 ranked no better on the development questions).
PHRASE_WEIGHT = 0.1
# BM25's term-frequency saturation, the engine's (tantivy's) own.
K1 = 1.2


def phrase_credit(
    fields: Mapping[str, Sequence[str]],
    pairs: Sequence[tuple[str, str]],
    idf: Mapping[tuple[str, str], float],
) -> float:
    """The phrase credit of a section whose fields hold `fields` (each its index terms
    in order, by field name) for the query `pairs`; `idf` by (field, term)."""
    wanted = set(pairs)
    credit = 0.0
    for name, terms in fields.items():
        found = Counter(filter(wanted.__contains__, itertools.pairwise(terms)))
        for (first, second), times in found.items():
            saturated = times * (K1 + 1) / (times + K1)
            credit += (idf.get((name, first), 0.0) + idf.get((name, second), 0.0)) * saturated
    return PHRASE_WEIGHT * credit
