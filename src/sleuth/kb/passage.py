"""Choosing the snippet: the passage of a section that best answers the query.

A passage is one to three consecutive whole sentences of one block (paragraph,
list item, code block) of the section's plain text, at most `MAX_CHARS` long; a
single sentence longer than that is a passage on its own, never cut. Headings are
not in the text (they are the result's title), so a heading never stands in for
the paragraph under it.

The best passage covers the most of the query (each distinct term found counts its
length, so particles and overlapping short words weigh little; in code, half of
that, so prose that answers beats an example that merely mentions the words), then
starts with a matching sentence, then fits the limit, then has the most term
occurrences, then is the longest (more context), then comes first (prose before
code). With no term found, the opening passage of the prose is used (of the code,
when the section has no prose).

>>> best_passage("Intro here. Caches keep hot data. They expire.\\n\\nOther.", ("cache",))
'Caches keep hot data. They expire.'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sleuth.text import sentence_spans

MAX_CHARS = 300
MAX_SENTENCES = 3
# How much a query term found in code counts against one found in prose.
CODE_FACTOR = 0.5

_BLANK_LINES = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class _Sentence:
    start: int
    end: int
    found: frozenset[str]
    hits: int


def best_passage(body: str, terms: Sequence[str], code: str = "") -> str:
    """The best passage of the prose `body` and the `code` blocks for `terms`."""
    best_key: tuple[float, ...] | None = None
    best = ("", 0, 0)  # the passage as its block's text, start and end
    order = 0
    blocks = [(block, 1.0) for block in _BLANK_LINES.split(body)]
    blocks += [(block, CODE_FACTOR) for block in _BLANK_LINES.split(code)]
    opening = True
    for block, factor in blocks:
        text = " ".join(block.split())
        if not text:
            continue
        lowered = text.lower()
        present = [term for term in terms if term in lowered]
        if not opening and not present:
            continue  # no term: only the opening block can matter (the no-match fallback)
        opening = False
        sentences = _sentences(text, present)
        for i, first in enumerate(sentences):
            # The windows of one to three sentences from this one, each the last grown
            # by a sentence: what they found and hit is summed as they grow.
            found: set[str] = set()
            hits = 0
            for j in range(i, min(i + MAX_SENTENCES, len(sentences))):
                end = sentences[j].end
                fits = end - first.start <= MAX_CHARS
                if j > i and not fits:
                    break
                found |= sentences[j].found
                hits += sentences[j].hits
                key = (
                    (
                        factor * sum(map(len, found)),
                        bool(first.found),
                        fits,
                        hits,
                        end - first.start,
                        -order,
                    )
                    if found
                    else (0, False, -order, fits, end - first.start)  # no match: the opening
                )
                if best_key is None or key > best_key:
                    best_key, best = key, (text, first.start, end)
            order += 1
    text, start, end = best
    return text[start:end]


def _sentences(text: str, terms: Sequence[str]) -> list[_Sentence]:
    """The sentences of a block, with the `terms` (those in the block) each holds."""
    out: list[_Sentence] = []
    for start, end in sentence_spans(text):
        lowered = text[start:end].lower()
        found = frozenset(term for term in terms if term in lowered)
        out.append(_Sentence(start, end, found, sum(lowered.count(t) for t in found)))
    return out
