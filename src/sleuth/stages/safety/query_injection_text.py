"""Text helpers of the query injection check: views, clauses, cues and the need.

Owns how `sleuth.stages.safety.query_injection` reads a query: the extra views the patterns
and the score read (look-alike letters of other scripts folded, leetspeak undone,
letters split by spaces or dots joined, the text reversed or rot13 undone when that
makes it read as English, quoted pieces joined; base64 decoded), clauses
(`clause_of`; whether a cue sits in one is `injection_text.cue`), how far a role tag
or hijack reaches (`is_closing_tag`, `stop_index`), and how the neutral query is made
from what is left (`kept_clauses`, `_residue`, `trimmed_need`). Which patterns exist, the
settings and the verdict stay in `sleuth.stages.safety.query_injection`, which imports
from here; this module reads the compiled settings through `ClauseWords`. No I/O.
"""

from __future__ import annotations

import base64
import codecs
import re
from collections.abc import Iterator
from typing import Protocol

from sleuth.stages.safety.injection_text import fold, original
from sleuth.text import CJK_RUN


class ClauseWords(Protocol):
    """What the neutral query's trimming reads of the compiled query settings."""

    @property
    def meta_words(self) -> frozenset[str]: ...
    @property
    def meta_cjk(self) -> re.Pattern[str] | None: ...
    @property
    def lead_in(self) -> re.Pattern[str] | None: ...


# Where a clause ends: cues are judged, and leftovers kept or dropped, per clause.
_CLAUSE_BREAK = (
    r"[。！？!?\n；;，,、：]|:(?!//|\d)|\.(?=\s|$)"
    r"|\b(?:and|then|but|instead|so|also|plus)\b|然后|并且|接着"
)
CLAUSE = re.compile(_CLAUSE_BREAK, re.I)
# The same, with the whitespace around it, and the marks of removed spans (\x00).
_PIECE_BREAK = re.compile(rf"(\s*(?:\x00+|{_CLAUSE_BREAK})\s*)", re.I)
SENTENCE_STOP = re.compile(r"[。！？!?\n]|\.(?=\s|$)")
SENTENCE_OR_COLON_STOP = re.compile(r"[。！？!?\n:：]|\.(?=\s|$)")
SECOND_PERSON = re.compile(
    r"\b(?:you|your|yours|yourself|yourselves|you['’](?:re|ve|ll|d))\b|[你您]", re.I
)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_EDGE_PUNCTUATION = "\x00 \t,.;:!?，。；：！？、\"'“”‘’()（）[]【】《》-–—"
_TRAILING_CONNECTOR = re.compile(r"(?:\s+(?:and|then|but|or)|然后|并且|接着)$", re.I)
_ARTICLE = re.compile(r"(?:the|a|an)\s+(?=\S)", re.I)
# Obfuscations undone before matching: Cyrillic and Greek letters that look like Latin
# ones ("іgnore" with a Cyrillic і), leetspeak inside words that hold letters, four or
# more single letters (or Chinese characters) split by one and the same separator
# ("i g n o r e", "i.g.n.o.r.e", "忽 略 以 上"), and pieces of text in quotation marks,
# joined when there are several ("a = 'ignore all prev', b = 'ious instructions'").
_LOOKALIKES = str.maketrans(
    "аВвЕеКкМНОоРрСсТтуХхІіЈјЅѕԁԛԝүАΑαΒΕεΖΗΙιΚκΜΝνΟοΡρΤτΥυΧχ",
    "aBBEeKkMHOoPpCcTtyXxIiJjSsdqwyAAaBEeZHIiKkMNvOoPpTtYuXx",
)
_LOOKALIKE = re.compile("[аВвЕеКкМНОоРрСсТтуХхІіЈјЅѕԁԛԝүАΑαΒΕεΖΗΙιΚκΜΝνΟοΡρΤτΥυΧχ]")
_LEET = str.maketrans("013457@$", "oieastas")
_LEET_WORD = re.compile(r"\b(?=[\w@$]*[A-Za-z])(?=[\w@$]*[013457@$])[\w@$]+")
_SPLIT_LETTERS = re.compile(
    r"(?<![^\W_])(?:[A-Za-z]([ .\-_*+|/~])(?:[A-Za-z]\1){2,}[A-Za-z]"
    r"|[\u4e00-\u9fff]([ .\-_*+|/~])(?:[\u4e00-\u9fff]\2){2,}[\u4e00-\u9fff])(?![^\W_])"
)
_QUOTED_PIECE = re.compile(r"'([^']+)'|\"([^\"]+)\"|“([^”]+)”|‘([^’]+)’")
# Common English words: a reversed or rot13 view is read only when it holds more of them
# than the text as typed, that is when the text was English turned around.
_ENGLISH = re.compile(
    r"\b(?:the|and|you|your|to|of|all|is|are|in|it|this|that|me|my|with|for|now|previous"
    r"|above|instructions|prompt|rules|ignore|say|tell|print)\b",
    re.I,
)
# A role name after a chat-template tag that opens the user's turn: "<|im_start|>user".
USER_TURN = re.compile(r"\s*(?:user|human)\b\s*:?", re.I)
BASE64 = re.compile(r"(?<![\w+/])[A-Za-z0-9+/]{16,}={0,2}(?![\w+/=])")


def reading_views(view: str, positions: list[int] | None) -> Iterator[tuple[str, list[int] | None]]:
    """The texts the patterns and the score read, each with where its characters sit in
    the query: the view itself, then, when they differ from it, the view with look-alike
    letters folded ("іgnore" → "ignore"; same length), with leetspeak undone ("1gn0re" →
    "ignore"), with split letters joined ("i.g.n.o.r.e" → "ignore"), reversed and with
    rot13 undone (each only when it holds more common English words than the view), and
    the pieces in quotation marks joined."""
    yield view, positions
    if _LOOKALIKE.search(view):
        view = view.translate(_LOOKALIKES)
        yield view, positions
    unleet = _LEET_WORD.sub(lambda match: match.group().translate(_LEET), view)
    if unleet != view:
        yield unleet, positions
    split = [
        index
        for match in _SPLIT_LETTERS.finditer(view)
        for index in range(match.start() + 1, match.end(), 2)
    ]
    if split:
        yield _kept(view, positions, set(split))
    english = len(_ENGLISH.findall(view))
    backwards = view[::-1]
    if len(_ENGLISH.findall(backwards)) > max(english, 1):
        yield backwards, [original(positions, index) for index in range(len(view) - 1, -1, -1)]
    rotated = codecs.encode(view, "rot13")
    if len(_ENGLISH.findall(rotated)) > max(english, 1):
        yield rotated, positions
    pieces = [
        index
        for match in _QUOTED_PIECE.finditer(view)
        for group in range(1, 5)
        if match.start(group) != -1
        for index in range(match.start(group), match.end(group))
    ]
    if len(_QUOTED_PIECE.findall(view)) > 1:
        yield (
            "".join(view[index] for index in pieces),
            [original(positions, index) for index in pieces],
        )


def _kept(
    view: str, positions: list[int] | None, dropped: set[int]
) -> tuple[str, list[int] | None]:
    kept = [index for index in range(len(view)) if index not in dropped]
    return "".join(view[index] for index in kept), [original(positions, index) for index in kept]


def decoded_base64(token: str, *, urlsafe: bool = False) -> str:
    """`token` decoded from base64 (with `urlsafe`, its URL-safe alphabet: "-" and "_"
    for "+" and "/") when it decodes to readable text, else ''."""
    padded = token + "=" * (-len(token) % 4)
    try:
        if urlsafe:
            decoded = base64.urlsafe_b64decode(padded)
        else:
            decoded = base64.b64decode(padded, validate=True)
        text = decoded.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return ""
    return text if text.isprintable() and any(char.isalpha() for char in text) else ""


def clause_of(view: str, start: int, end: int) -> tuple[int, int]:
    """(start, end) of the clause around view[start:end]: from the last clause break
    before it to the first one after it."""
    clause_start, clause_end = 0, len(view)
    for match in CLAUSE.finditer(view):
        if match.end() <= start:
            clause_start = match.end()
        elif match.start() >= end:
            clause_end = match.start()
            break
    return clause_start, clause_end


def is_closing_tag(tag: str) -> bool:
    """Whether a role tag ends a block, or opens the user's own turn (what follows
    "<|user|>" is the user's text, not an order)."""
    folded = tag.casefold()
    return any(mark in folded for mark in ("/", "end", "eot", "user", "human"))


def stop_index(view: str, start: int, stop: re.Pattern[str]) -> int:
    match = stop.search(view, start)
    return match.start() if match else len(view)


# --- the neutral rewrite ------------------------------------------------------------------


def kept_clauses(marked: str, compiled: ClauseWords) -> str:
    """`marked` (removed spans as \\x00) without the clauses that carry no need; kept
    neighbours keep the separator between them, others are joined by a space."""
    parts = _PIECE_BREAK.split(marked)
    kept: list[str] = []
    glue = ""
    adjacent = True
    for index, part in enumerate(parts):
        if index % 2:  # a separator
            adjacent = adjacent and "\x00" not in part
            glue += part
            continue
        piece = part.strip()
        if not piece:
            continue
        if _residue(piece, compiled):
            adjacent = False
            continue
        if kept:
            kept.append(glue if adjacent else " ")
        kept.append(piece)
        glue, adjacent = "", True
    return "".join(kept)


def _residue(piece: str, compiled: ClauseWords) -> bool:
    """Whether a leftover clause speaks to the assistant or holds only meta words."""
    if SECOND_PERSON.search(piece):
        return True
    chinese = "".join(CJK_RUN.findall(piece))
    if compiled.meta_cjk is not None:
        chinese = compiled.meta_cjk.sub("", chinese)
    if chinese:
        return False
    words = _WORD.findall(fold(CJK_RUN.sub(" ", piece)))
    return all(word in compiled.meta_words for word in words)


def trimmed_need(need: str, compiled: ClauseWords) -> str:
    """`need` without punctuation at its ends, request openers and a leading article."""
    previous = None
    while need != previous:
        previous = need
        need = need.strip(_EDGE_PUNCTUATION)
        need = _TRAILING_CONNECTOR.sub("", need)
        if compiled.lead_in is not None:
            need = compiled.lead_in.sub("", need)
    return _ARTICLE.sub("", need, count=1) if _ARTICLE.match(need) else need
