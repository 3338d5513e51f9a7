"""How the injection screens read a text: folding, sentences, quotes, spans.

Shared by the result screen (`sleuth.stages.safety.injection`) and the query screen
(`query_injection`): the matching view with full-width characters folded and
invisible ones removed (`matching_view`, `fold`, `original`), the sentence holding a
hit (`sentence_of`), whether a hit is quoted (`quoted`) or near a discussion cue
(`cue`), runs of tag characters (`tag_runs`) and the merging of spans (`merge`). It
knows no settings: the screens pass in the patterns they compiled. No I/O.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from sleuth.stages.safety import injection_patterns as tables


def fold(text: str) -> str:
    """`text` case-folded as `re.I` compares it ("İ" and "ı" are "i" to it), with the one
    mark that folds to a letter made a space, so that no two words become one."""
    return text.replace("İ", "i").replace("ı", "i").replace("\u0345", " ").casefold()


# Either kind of character the view changes: most texts have none, found in one scan.
_CHANGED_IN_VIEW = re.compile(
    f"[{tables.FULL_WIDTH.pattern[1:-1]}{tables.INVISIBLE.pattern[1:-1]}]"
)


def matching_view(text: str) -> tuple[str, list[int] | None]:
    """The text the rules read, and where each of its characters sits in `text`
    (None when nothing was removed and offsets are the same)."""
    if text.isascii() or not _CHANGED_IN_VIEW.search(text):
        return text, None
    view = text.translate(tables.FOLD) if tables.FULL_WIDTH.search(text) else text
    if not tables.INVISIBLE.search(view):
        return view, None
    positions = [index for index, char in enumerate(view) if not tables.INVISIBLE.match(char)]
    return "".join(view[index] for index in positions), positions


def original(positions: list[int] | None, index: int) -> int:
    return index if positions is None else positions[index]


class Cues(Protocol):
    """A compiled pattern, or anything that finds its matches as one does (the
    query guard's `Alternation`)."""

    def finditer(
        self, string: str, pos: int = ..., endpos: int = ..., /
    ) -> Iterator[re.Match[str]]: ...


def cue(
    view: str,
    cues: Cues | None,
    start: int,
    end: int,
    links: Sequence[tuple[int, int]],
) -> bool:
    """Whether a cue occurs in view[start:end] outside links ("evil.example" is no example)."""
    if cues is None or start >= end:
        return False
    return any(
        not any(a <= match.start() < b for a, b in links)
        for match in cues.finditer(view, start, end)
    )


def sentence_of(view: str, ends: list[int], index: int) -> tuple[int, int]:
    """(start, end) of the sentence holding `index`, surrounding whitespace trimmed."""
    position = bisect.bisect_right(ends, index)
    start = ends[position - 1] if position else 0
    end = ends[position] if position < len(ends) else len(view)
    while start < end and view[start].isspace():
        start += 1
    while end > start and view[end - 1].isspace():
        end -= 1
    return start, end


def quoted(view: str, start: int, end: int) -> bool:
    """Whether view[start:end] sits inside quotation marks that sit inside a longer text:
    'tell a model to "ignore previous instructions"', not a whole text in quotes."""
    opened: str | None = None
    opened_at = 0
    for mark in tables.QUOTE_MARK.finditer(view, 0, start):
        char, index = mark.group(), mark.start()
        if opened is None:
            if char in tables.QUOTES and not (char == "'" and _is_apostrophe(view, index)):
                opened, opened_at = char, index
        elif char == tables.QUOTES[opened] and not (char == "'" and _is_apostrophe(view, index)):
            opened = None
    if opened is None:
        return False
    closer = tables.QUOTES[opened]
    close_at = view.find(closer, end)
    while close_at != -1 and closer == "'" and _is_apostrophe(view, close_at):
        close_at = view.find(closer, close_at + 1)
    if close_at == -1:
        return False
    framed_before = tables.WORD_CHAR.search(view, 0, opened_at) is not None
    framed_after = tables.WORD_CHAR.search(view, close_at + 1) is not None
    return framed_before or framed_after


def _is_apostrophe(view: str, index: int) -> bool:
    before = view[index - 1] if index else " "
    after = view[index + 1] if index + 1 < len(view) else " "
    return before.isalnum() and after.isalnum()


def tag_runs(text: str) -> Iterator[re.Match[str]]:
    """Runs of Unicode tag characters in `text`, except a flag emoji's (🏴 + tags)."""
    for match in tables.TAG_RUN.finditer(text):
        if not (match.start() and text[match.start() - 1] == tables.BLACK_FLAG):
            yield match


def merge(spans: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)
