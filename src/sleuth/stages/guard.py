"""Guard: the first stage. Owns what a query may contain before anything else reads it.

It removes control and invisible characters (the tricks used to hide, join or reorder
text: zero-width characters, bidi overrides, BOM, soft hyphens, Unicode tags),
normalises compatibility forms with NFKC (full-width Latin and digits become ASCII,
Chinese stays Chinese), collapses whitespace, and then enforces the length limit and
the configured block list. It does not change wording (that is
`sleuth.stages.rewrite`), decides nothing about results, and does no I/O.

>>> guard("  ｐｙｔｈｏｎ\u200b ３.１２\t", GuardSettings()).text
'python 3.12'
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import QUERY_MAX_CHARS
from sleuth.errors import InvalidRequest, PolicyViolation
from sleuth.text import is_cjk

#: Categories dropped outright: format characters (zero-width space and joiners, bidi
#: embeddings, overrides and isolates, BOM, soft hyphen, tags), private use, and lone
#: surrogates (which would also break UTF-8 encoding further down).
_DROPPED_CATEGORIES = frozenset({"Cf", "Co", "Cs"})
#: Letters and symbols that render as nothing: Hangul fillers and the blank braille cell.
_BLANK_LOOKALIKES = frozenset("\u115f\u1160\u3164\uffa0\u2800")
#: How many distinct removed code points a note lists before it stops.
_LISTED_CODE_POINTS = 5


class GuardSettings(BaseModel):
    """The `guard:` section of sleuth.yaml.

    >>> GuardSettings(block_list=["炸弹", "bomb"]).max_chars
    400
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_chars: int = Field(
        default=QUERY_MAX_CHARS,
        ge=1,
        description="Longest query accepted, counted in characters after cleaning.",
    )
    block_list: list[str] = Field(
        default_factory=list,
        description=(
            "Terms that make the guard refuse a query, case-insensitively: a term with "
            "Chinese characters matches anywhere (substring); a Latin-script term matches "
            "whole words only, so 'ass' does not match 'class'."
        ),
    )


@dataclass(frozen=True)
class GuardedQuery:
    """A query the guard let through.

    `removed` counts the control and invisible characters deleted (tabs and newlines
    turned into spaces are not counted); `notes` says in words what was changed.

    >>> guard("a\u202eb", GuardSettings())
    GuardedQuery(text='ab', removed=1, notes=('removed 1 control or invisible character: U+202E',))
    """

    text: str
    removed: int
    notes: tuple[str, ...] = ()


def guard(query: str, settings: GuardSettings) -> GuardedQuery:
    """Clean `query` and check it against the limits and the block list.

    Raises `InvalidRequest` (field `query`) when nothing searchable remains or the
    cleaned text is longer than `settings.max_chars`, and `PolicyViolation` when a
    block-list term occurs. Neither error repeats the query.
    """
    notes: list[str] = []
    visible, removed_chars, spaced = _strip_invisible(query)
    if removed_chars:
        listed = list(dict.fromkeys(f"U+{ord(ch):04X}" for ch in removed_chars))
        shown = ", ".join(listed[:_LISTED_CODE_POINTS])
        if len(listed) > _LISTED_CODE_POINTS:
            shown += ", ..."
        plural = "s" if len(removed_chars) != 1 else ""
        notes.append(
            f"removed {len(removed_chars)} control or invisible character{plural}: {shown}"
        )
    if spaced:
        plural = "s" if spaced != 1 else ""
        notes.append(f"turned {spaced} tab or line break{plural} into spaces")

    normalised = unicodedata.normalize("NFKC", visible)
    if normalised != visible:
        notes.append("normalised compatibility forms (NFKC), e.g. full-width letters and digits")
    text = " ".join(normalised.split())
    if text != normalised:
        notes.append("collapsed and trimmed whitespace")

    allowed = [f"1..{settings.max_chars} characters"]
    if not text:
        raise InvalidRequest(
            "query: nothing searchable remains after removing control and invisible "
            f"characters; expected 1..{settings.max_chars} visible characters",
            field="query",
            allowed=allowed,
        )
    if not any(unicodedata.category(ch)[0] in "LNS" for ch in text):
        raise InvalidRequest(
            "query: only punctuation remains after cleaning; expected at least one "
            "letter, digit or symbol",
            field="query",
            allowed=allowed,
        )
    if len(text) > settings.max_chars:
        raise InvalidRequest(
            f"query: too long: {len(text)} characters after cleaning, the limit is "
            f"{settings.max_chars}; expected 1..{settings.max_chars} characters",
            field="query",
            allowed=allowed,
        )

    hit = _block_list_hit(text, settings.block_list)
    if hit is not None:
        index, kind = hit
        raise PolicyViolation(
            f"query: refused by the content policy: it contains block_list entry "
            f"#{index + 1} ({kind})",
            field="query",
        )
    return GuardedQuery(text=text, removed=len(removed_chars), notes=tuple(notes))


def _strip_invisible(text: str) -> tuple[str, str, int]:
    """The text without control and invisible characters, what was removed, and how
    many whitespace controls (tab, newline, ...) became spaces."""
    kept: list[str] = []
    removed: list[str] = []
    spaced = 0
    for ch in text:
        category = unicodedata.category(ch)
        if category == "Cc" and ch.isspace():
            kept.append(" ")
            spaced += 1
        elif category == "Cc" or category in _DROPPED_CATEGORIES or ch in _BLANK_LOOKALIKES:
            removed.append(ch)
        else:
            kept.append(ch)
    return "".join(kept), "".join(removed), spaced


def _block_list_hit(text: str, block_list: list[str]) -> tuple[int, str] | None:
    """The index of the first block-list term found in `text` and what kind of term it is."""
    folded = text.casefold()
    for index, raw in enumerate(block_list):
        term = " ".join(unicodedata.normalize("NFKC", raw).split())
        if not term:
            continue
        if any(is_cjk(ch) for ch in term):
            if term.casefold() in folded:
                return index, "a Chinese term, matched anywhere"
            continue
        for match in re.finditer(re.escape(term), text, re.IGNORECASE):
            if not _is_word_char(text, match.start() - 1) and not _is_word_char(text, match.end()):
                return index, "a Latin-script word, matched as a whole word"
    return None


def _is_word_char(text: str, index: int) -> bool:
    """Whether `text[index]` continues a Latin-script word (Chinese characters do not)."""
    if not 0 <= index < len(text):
        return False
    ch = text[index]
    return ch.isalnum() and not is_cjk(ch)
