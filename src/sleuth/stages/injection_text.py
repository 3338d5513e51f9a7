"""Text helpers of the injection screen: folding, sentences, quotes, hidden text.

Owns how `sleuth.stages.injection` reads a text: the matching view with full-width
characters folded and invisible ones removed (`_matching_view`, `_fold`, `_original`),
the sentence holding a hit (`_sentence_of`), whether a hit is a mention (`_quoted`,
`_introduced`) or discussed (`_discussed`, `_cue`), where hidden text is (`_hidden`,
`_tag_runs`) and the merging of spans (`_merge`); `query_injection` reads queries with
the same helpers. Which rules exist, the settings and the verdict stay in
`sleuth.stages.injection`, which imports from here (this module imports it back for
types only). No I/O.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from sleuth.stages import injection_patterns as tables

if TYPE_CHECKING:
    from sleuth.stages.injection import InjectionSettings, _Compiled


def _fold(text: str) -> str:
    """`text` case-folded as `re.I` compares it ("İ" and "ı" are "i" to it), with the one
    mark that folds to a letter made a space, so that no two words become one."""
    return text.replace("İ", "i").replace("ı", "i").replace("\u0345", " ").casefold()


def _matching_view(text: str) -> tuple[str, list[int] | None]:
    """The text the rules read, and where each of its characters sits in `text`
    (None when nothing was removed and offsets are the same)."""
    if text.isascii():
        return text, None
    view = text.translate(tables.FOLD) if tables.FULL_WIDTH.search(text) else text
    if not tables.INVISIBLE.search(view):
        return view, None
    positions = [index for index, char in enumerate(view) if not tables.INVISIBLE.match(char)]
    return "".join(view[index] for index in positions), positions


def _original(positions: list[int] | None, index: int) -> int:
    return index if positions is None else positions[index]


def _discussed(view: str, sentence: tuple[int, int], compiled: _Compiled) -> bool:
    """Whether the sentence carries a discussion cue outside its links and addresses
    ("send it to https://help.example" is no example)."""
    start, end = sentence
    links = [match.span() for match in tables.LINK.finditer(view, start, end)]
    return _cue(view, compiled.cues, start, end, links)


def _cue(
    view: str,
    cues: re.Pattern[str] | None,
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


def _sentence_of(view: str, ends: list[int], index: int) -> tuple[int, int]:
    """(start, end) of the sentence holding `index`, surrounding whitespace trimmed."""
    position = bisect.bisect_right(ends, index)
    start = ends[position - 1] if position else 0
    end = ends[position] if position < len(ends) else len(view)
    while start < end and view[start].isspace():
        start += 1
    while end > start and view[end - 1].isspace():
        end -= 1
    return start, end


def _quoted(view: str, start: int, end: int) -> bool:
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


def _introduced(view: str, sentence_start: int, start: int, compiled: _Compiled) -> bool:
    """Whether the hit follows a verb of saying or a word like "phrase" in its sentence."""
    lead_in = compiled.lead_in
    return lead_in is not None and lead_in.search(view, sentence_start, start) is not None


def _hidden(
    text: str, invisible: bool, compiled: _Compiled, settings: InjectionSettings
) -> list[tuple[int, int, str]]:
    """Spans of hidden text in the original `text`, with the check that found each;
    `invisible`: whether `text` has invisible characters at all."""
    found: list[tuple[int, int, str]] = []
    if invisible:
        found.extend(
            (match.start(), match.end(), "hidden_text:invisible_run")
            for match in compiled.invisible_run.finditer(text)
        )
        in_words = list(tables.ZERO_WIDTH_IN_WORD.finditer(text))
        if len(in_words) >= settings.min_zero_width_in_words:
            found.extend((m.start(), m.end(), "hidden_text:zero_width_in_word") for m in in_words)
        found.extend(
            (m.start(), m.end(), "hidden_text:bidi_override")
            for m in tables.BIDI_OVERRIDE.finditer(text)
        )
        found.extend((m.start(), m.end(), "hidden_text:tag_characters") for m in _tag_runs(text))
    # a long run of whitespace has two spaces in a row or a tab, a line break, ...
    if not text.isascii() or "  " in text or not text.isprintable():
        for match in compiled.whitespace_run.finditer(text):
            ends = [m.end() for m in tables.SENTENCE_END.finditer(text, match.end())]
            found.append(
                (match.start(), ends[0] if ends else len(text), "hidden_text:whitespace_run")
            )
    if "<!--" in text:
        found.extend(
            (m.start(), m.end(), "hidden_text:html_comment")
            for m in tables.HTML_COMMENT.finditer(text)
        )
    return found


def _tag_runs(text: str) -> Iterator[re.Match[str]]:
    """Runs of Unicode tag characters in `text`, except a flag emoji's (🏴 + tags)."""
    for match in tables.TAG_RUN.finditer(text):
        if not (match.start() and text[match.start() - 1] == tables.BLACK_FLAG):
            yield match


def _merge(spans: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)
