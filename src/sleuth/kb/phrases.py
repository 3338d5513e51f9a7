"""Phrase credit: a query's neighbouring content words found side by side in a section.

Each pair of adjacent query terms (`Query.pairs`) found next to each other in a field
of a section adds `PHRASE_WEIGHT` of what BM25 gives the phrase there, as the
engine scores a phrase query: the two words' inverse document frequencies in that
field, times the phrase's frequency saturated and normalised by the field's length
as BM25 does a term's (about what the sequential dependence model gives ordered
pairs).

It is the credit the engine gives a phrase clause, computed for the best sections
only, from their stored text, after the engine has chosen them by their terms: a
phrase clause in the engine's query is evaluated in every section holding both words,
which for a long pasted question (17 pairs in three fields) was two thirds of its
time at 180,000 sections; reading and splitting 20 sections' text costs about 2 ms,
more than the clauses of a short question, so `sleuth.kb.search` does this only for
questions of many pairs.

>>> idf = {("text", "lru"): 4.0, ("text", "cache"): 2.0}
>>> stats = Statistics(idf, {"text": 4.0})  # the field as long as the average
>>> round(phrase_credit({"text": ["lru", "cache", "lru", "cache"]}, [("lru", "cache")], stats), 3)
0.825
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence

from sleuth.kb.engine import PHRASE_WEIGHT, Statistics, field_norm

# BM25's term-frequency saturation and length normalisation, the engine's (tantivy's).
K1 = 1.2
B = 0.75


def phrase_credit(
    fields: Mapping[str, Sequence[str]],
    pairs: Sequence[tuple[str, str]],
    statistics: Statistics,
    lengths: Mapping[str, int] | None = None,
) -> float:
    """The phrase credit of a section whose fields hold `fields` (each its terms in
    order, by field name) for the query `pairs`; `lengths`, each field's length as
    indexed, when it is not the number of its `fields` terms."""
    wanted = set(pairs)
    idf = statistics.idf
    credit = 0.0
    for name, terms in fields.items():
        found = Counter(filter(wanted.__contains__, itertools.pairwise(terms)))
        if not found:
            continue
        length = field_norm(len(terms) if lengths is None else lengths.get(name, len(terms)))
        average = statistics.average_length.get(name) or length or 1
        norm = K1 * (1 - B + B * length / average)
        for (first, second), times in found.items():
            rarity = idf.get((name, first), 0.0) + idf.get((name, second), 0.0)
            credit += rarity * (K1 + 1) * times / (times + norm)
    return PHRASE_WEIGHT * credit
