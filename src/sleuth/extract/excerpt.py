"""The passages of a page nearest a query, within a character budget: what
`include: ["content"]` puts in a search result.

A passage is one block of the page's text (a paragraph, a list, a table; a heading
travels with the block under it). Each query word weighs by how few passages hold
it (inverse document frequency within the page), so a word on every line counts
for little; passages are taken best first until the budget is spent and returned
in page order, joined by blank lines. A page where no query word appears gives its
opening.

>>> text = ("Tickets are sold online.\\n\\nThe night train reaches Vienna at 07:05.\\n\\n"
...         "Food is served.")
>>> excerpt(text, ["night", "train", "Vienna"], 60)
'The night train reaches Vienna at 07:05.'
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from sleuth.text import tokens

__all__ = ["cut_text", "excerpt", "passages"]

_BLOCKS = re.compile(r"\n\s*\n")


def cut_text(text: str, max_chars: int) -> tuple[str, bool]:
    """`text` cut to `max_chars` at the last block (else line, else space) boundary."""
    if len(text) <= max_chars:
        return text, False
    head = text[:max_chars]
    for boundary in ("\n\n", "\n", " "):
        at = head.rfind(boundary)
        if at > max_chars // 2:
            return head[:at].rstrip(), True
    return head, True


def _stem(token: str) -> str:
    # plurals and third persons meet their stem ("reaches" / "reach", "trains" / "train")
    if len(token) > 4 and token.endswith("es"):
        return token[:-2]
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def _terms(text: str) -> set[str]:
    return {_stem(token) for token in tokens(text)}


def passages(text: str) -> list[str]:
    """The page's blocks, a heading joined to the block under it."""
    blocks = [block.strip() for block in _BLOCKS.split(text) if block.strip()]
    joined: list[str] = []
    for block in blocks:
        if joined and joined[-1].startswith("#") and "\n" not in joined[-1]:
            joined[-1] = f"{joined[-1]}\n{block}"
        else:
            joined.append(block)
    return joined


def excerpt(text: str, query_terms: Iterable[str], budget: int) -> str:
    """The passages of `text` that best match `query_terms`, at most `budget` characters."""
    blocks = passages(text)
    if not blocks:
        return ""
    wanted = set().union(*(_terms(term) for term in query_terms))
    held = [_terms(block) & wanted for block in blocks]
    frequency = {term: sum(term in found for found in held) for term in wanted}
    weight = {t: math.log(1 + len(blocks) / n) for t, n in frequency.items() if n}
    scores = [sum(weight.get(term, 0.0) for term in found) for found in held]
    matched = any(scores)
    order: Sequence[int] = (
        sorted(range(len(blocks)), key=lambda i: (-scores[i], i)) if matched else range(len(blocks))
    )
    chosen: list[int] = []
    spent = 0
    for index in order:
        if matched and scores[index] == 0:
            break
        cost = len(blocks[index]) + (2 if chosen else 0)
        if spent + cost > budget:
            if not chosen:  # the best passage alone is too long: its head
                return cut_text(blocks[index], budget)[0]
            continue
        chosen.append(index)
        spent += cost
    return "\n\n".join(blocks[i] for i in sorted(chosen))
