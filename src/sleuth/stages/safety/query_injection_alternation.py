"""A long alternation of regular expressions that fails fast: the same matches as
``re.compile("|".join(f"(?:{e})" for e in expressions), flags)``, found by trying at
each position only the expressions that can start with the character there.

Python's `re` tries every alternative at every position of the text: for the guard's
hundreds of act and topic expressions that is most of its time, on queries where
nothing matches. Here each expression's possible first characters are read from its
parse; the text is scanned for those characters only, and at each one the
alternatives that can start with it are tried, in their order, so the match found is
the one the plain alternation finds (leftmost, then first alternative). A character
that only expressions opening with ``\\b`` start with is looked for at word
boundaries only: in English text that is one try a word, not one a letter. An
expression whose first character cannot be known (``.``, ``\\w``, an optional start)
leaves the plain alternation in charge.

>>> fast = Alternation([r"\\bignore\\b", r"\\bforget\\b", "忽略"], re.I)
>>> fast.search("Please FORGET it").span()
(7, 13)
>>> [m.group() for m in fast.finditer("忽略 and ignore, not ignored")]
['忽略', 'ignore']
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["Alternation"]

# `re`'s own parser (public as sre_parse before 3.11, deprecated since): the parse is
# what `re` compiles, so the first characters read from it are the ones it matches.
sre_parse: Any = importlib.import_module("re._parser")
sre: Any = importlib.import_module("re._constants")

#: A range of characters larger than this is not worth listing as first characters.
_MAX_RANGE = 512
#: Distinct first characters remembered, each with the alternation of what may start there.
_MAX_DISPATCH = 4096
_ZERO_WIDTH = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


class Alternation:
    """`search` and `finditer` of the alternation of `expressions` (see the module)."""

    def __init__(self, expressions: Sequence[str], flags: int = 0, *, checked: bool = True) -> None:
        self.expressions = [expression for expression in expressions if expression]
        self.flags = flags
        self.pattern = "|".join(f"(?:{e})" for e in self.expressions)
        self._plain: re.Pattern[str] | None = None
        starts = [_start(expression, flags) for expression in self.expressions]
        known = [start for start in starts if start is not None]
        self._firsts: list[frozenset[str]] = [first for first, _ in known]
        self._scan: re.Pattern[str] | None = None
        if self.expressions and len(known) == len(starts):
            anywhere = set().union(*(first for first, bounded in known if not bounded))
            at_boundary = set().union(*(first for first, bounded in known if bounded))
            at_boundary -= anywhere  # also started without `\b`: tried everywhere
            scan = [f"[{_class_escape(''.join(sorted(anywhere)))}]"] if anywhere else []
            if at_boundary:
                scan.append(f"\\b[{_class_escape(''.join(sorted(at_boundary)))}]")
            # Folded whatever the flags (a scoped (?i:...) folds its literals): more
            # positions tried than needed is safe, fewer is not. `\b` is the one the
            # expressions open with: the same flags give it the same meaning.
            self._scan = re.compile("|".join(scan), flags | re.I)
        self._dispatch: dict[str, re.Pattern[str] | None] = {}
        if checked or self._scan is None:
            # Compiled now, so that expressions that compile alone but not together (a
            # group name used twice) are refused here. `checked=False` is for tables
            # known to compile (the defaults): on the fast way the plain alternation,
            # most of the time of building one, may never be needed.
            _ = self.plain

    @property
    def plain(self) -> re.Pattern[str]:
        """The plain alternation: what this must match, and the fallback."""
        if self._plain is None:
            self._plain = re.compile(self.pattern, self.flags)
        return self._plain

    @property
    def fast(self) -> bool:
        """Whether every expression's first characters are known (else: the plain way)."""
        return self._scan is not None

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> re.Match[str] | None:
        """The first match in text[pos:endpos], as the plain alternation finds it."""
        end = len(text) if endpos is None else endpos
        if self._scan is None:
            return self.plain.search(text, pos, end)
        dispatch = self._dispatch
        for candidate in self._scan.finditer(text, pos, end):
            at = candidate.start()
            char = text[at]
            regex = dispatch[char] if char in dispatch else self._starting_with(char)
            if regex is not None:
                found = regex.match(text, at, end)
                if found is not None:
                    return found
        return None

    def finditer(
        self, text: str, pos: int = 0, endpos: int | None = None
    ) -> Iterator[re.Match[str]]:
        """Every match in text[pos:endpos], as the plain alternation's `finditer`: none
        is empty (each expression starts with a character), so each next search starts
        where the last match ended."""
        end = len(text) if endpos is None else endpos
        if self._scan is None:
            yield from self.plain.finditer(text, pos, end)
            return
        found = self.search(text, pos, end)
        while found is not None:
            yield found
            found = self.search(text, found.end(), end)

    def _starting_with(self, char: str) -> re.Pattern[str] | None:
        if char in self._dispatch:
            return self._dispatch[char]
        # Each expression's first characters tested with `re` itself, folded, so no
        # character that the plain alternation's case folding lets in is left out.
        starting = [
            expression
            for expression, first in zip(self.expressions, self._firsts, strict=True)
            if re.fullmatch(f"[{_class_escape(''.join(sorted(first)))}]", char, self.flags | re.I)
        ]
        regex = re.compile("|".join(f"(?:{e})" for e in starting), self.flags) if starting else None
        if len(self._dispatch) >= _MAX_DISPATCH:
            self._dispatch.clear()
        self._dispatch[char] = regex
        return regex


def _class_escape(chars: str) -> str:
    return "".join("\\" + c if c in "\\]^-[" else c for c in chars)


def _start(expression: str, flags: int) -> tuple[frozenset[str], bool] | None:
    """The characters a match of `expression` can start with, and whether it opens
    with `\\b` (so that it can only start at a word boundary); None when its first
    characters are not known (it may match nothing, or start with a class too wide to
    list)."""
    try:
        items = list(sre_parse.parse(expression, flags))
    except re.error:
        return None
    first = _sequence_first(items)
    if first is None:
        return None
    return first, bool(items) and items[0] == (sre.AT, sre.AT_BOUNDARY)


def _sequence_first(items: list[tuple[Any, Any]]) -> frozenset[str] | None:
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue  # consumes nothing: the next item starts the match
        return _item_first(op, av)
    return None  # matches the empty string


def _item_first(op: Any, av: Any) -> frozenset[str] | None:
    if op is sre.LITERAL:
        return frozenset(chr(av))
    if op is sre.IN:
        return _set_first(av)
    if op is sre.BRANCH:
        found: set[str] = set()
        for branch in av[1]:
            first = _sequence_first(list(branch))
            if first is None:
                return None
            found |= first
        return frozenset(found)
    if op is sre.SUBPATTERN:
        return _sequence_first(list(av[-1]))
    if op is sre.ATOMIC_GROUP:
        return _sequence_first(list(av))
    if op in _REPEATS:
        low, _, item = av
        return _sequence_first(list(item)) if low >= 1 else None
    return None  # any character, a back reference, a conditional: not known


def _set_first(items: list[tuple[Any, Any]]) -> frozenset[str] | None:
    found: set[str] = set()
    for op, av in items:
        if op is sre.LITERAL:
            found.add(chr(av))
        elif op is sre.RANGE and av[1] - av[0] <= _MAX_RANGE:
            found.update(map(chr, range(av[0], av[1] + 1)))
        else:  # a negated set, a category (\w, \s), a wide range
            return None
    return frozenset(found)


class KeywordIndex:
    """Which of many keyword sets have a keyword in a text, without testing every
    keyword: a keyword can only be in the text if its first two characters are.

    >>> index = KeywordIndex([("ignore", "forget"), ("system",), ()])
    >>> index.selected("please forget the rules")
    [0, 2]
    """

    def __init__(self, keyword_sets: Sequence[Sequence[str]]) -> None:
        #: Sets that run whatever the text (no keyword, or an empty one).
        self._always = [i for i, words in enumerate(keyword_sets) if not words or not all(words)]
        #: A keyword's first two characters (its only one) -> the keyword -> its sets.
        self._by_start: dict[str, dict[str, list[int]]] = {}
        for i, keywords in enumerate(keyword_sets):
            for keyword in filter(None, keywords):
                start = self._by_start.setdefault(keyword[:2], {})
                start.setdefault(keyword, []).append(i)

    def selected(self, text: str) -> list[int]:
        """The indices of the sets with a keyword in `text`, and those that always run,
        in order."""
        found = set(self._always)
        starts = {text[i : i + 2] for i in range(len(text) - 1)} | set(text)
        by_start = self._by_start
        for start in starts & by_start.keys():  # most pairs of a text start no keyword
            for keyword, sets in by_start[start].items():
                if keyword in text:
                    found.update(sets)
        return sorted(found)
