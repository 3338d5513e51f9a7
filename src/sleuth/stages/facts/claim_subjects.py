"""Subject words: what a numeric claim is about, from the words around it.

Owns the word matching of `sleuth.stages.facts.claims` (prefix-shared alternations
`trie`, offset-keeping `lower`, `word_pattern`) and the search for a claim's
attribute: query terms in the claim's own clause, then in earlier clauses of its
sentence, then in the result's title, with variant and change words appended; else
the nearest content words (`attribute_of`, `_nearby_words`). The rules are told in
the `sleuth.stages.facts.claims` docstring. It reads strings only; number reading, the
settings and `subject_key` stay in `sleuth.stages.facts.claims`, which imports from here
(this module reads them through `SubjectRules`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Protocol

from sleuth.stages.facts import claim_units as tables
from sleuth.text import CJK


class SubjectRules(Protocol):
    """What the subject search reads of the compiled claim settings (built by
    `sleuth.stages.facts.claims`, which this module does not import)."""

    window: int
    stopwords: frozenset[str]
    variants: re.Pattern[str]
    changes: re.Pattern[str]


# Sentence ends (。！？!? and a dot before a space) and clause breaks (，,；;：: and
# brackets, a spaced dash, while/but/而/但). Each pattern starts with a character class,
# so the regex engine skips ahead to where one can start.
_SENTENCE_END = re.compile(r"[。！？!?\n.](?:(?<=\.)(?=\s|$)|(?<!\.))")
_CLAUSE_BREAK = re.compile(
    r"[，,；;：:、|（）()【】\[\]\s而但]"
    r"(?:(?<=\s)(?:[-–—]|while|whereas|but|although)\s|(?<=[^\s])[，,；;：:、|（）()【】\[\]]*)"
)
_CONTENT_WORD = re.compile(rf"[A-Za-z][A-Za-z'’-]+|[{CJK}]+")


def trie(words: Mapping[str, str], *, lead: Mapping[str, str] | None = None) -> str:
    """Words (each with a regex that must follow it) as one prefix-shared alternation.

    Sharing prefixes makes a miss cost a few character tests instead of one test per
    word; longer words are tried first, so "万亿" wins over "万" and "kWh" over "kW".
    `lead` maps a first character to a check placed right after it (a look-behind
    of width two, so the alternation still starts with plain characters, which lets
    the regex engine skip ahead to where a word can start).

    >>> trie({"GB": "", "GHz": "", "G": "(?!x)"})
    'G(?:B|Hz|(?!x))'
    """
    root: dict[str, Any] = {}
    for word, tail in words.items():
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = tail

    def build(node: dict[str, Any], checks: Mapping[str, str]) -> str:
        branches = [
            (r"\s" if char == " " else re.escape(char)) + checks.get(char, "") + build(child, {})
            for char, child in sorted(node.items())
            if char
        ]
        if "" in node:
            branches.append(node[""])
        if len(branches) == 1:
            return branches[0]
        return "(?:" + "|".join(branches) + ")"

    return build(root, lead or {}) if root else "(?!)"


#: After the first character of a word: a letter must not follow a letter or digit,
#: a digit must not follow a digit or a dot ("16" is not found in "2016" or "3.16").
_WORD_START = {
    **dict.fromkeys("abcdefghijklmnopqrstuvwxyz", "(?<![a-z0-9].)"),
    **dict.fromkeys("0123456789", "(?<![0-9.].)"),
}


def lower(text: str) -> str:
    """Lower-cased text of the same length (a character whose lower case is longer,
    such as "İ", is left as it is), so offsets stay valid."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def word_pattern(words: Iterable[str]) -> re.Pattern[str]:
    """Lower-cased words as one pattern over lower-cased text; Latin words whole only.

    >>> word_pattern(["off", "直降"]).findall("save $100 off today, 直降 500 元, offline")
    ['off', '直降']
    """
    tails = {
        word.lower(): "(?![a-z0-9])" if word[-1].isascii() and word[-1].isalnum() else ""
        for word in words
        if word
    }
    return re.compile(trie(tails, lead=_WORD_START))


def terms_key(query_terms: Sequence[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for term in query_terms:
        word = " ".join(term.lower().split())
        if any(char.isalnum() for char in word):
            seen.setdefault(word, None)
    return tuple(seen)


@lru_cache(maxsize=256)
def term_matcher(terms: tuple[str, ...]) -> _TermMatcher | None:
    """Query terms (lower-cased) as one matcher over lower-cased text: "16" is not found
    in "2016" or "16.1"; "iphone" and "16" are both found in "iphone16"."""
    return _TermMatcher(terms) if terms else None


_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")
_ASCII_DIGITS = frozenset("0123456789")


class _TermMatcher:
    """Finds query terms as `trie` patterns would, without compiling one: the terms
    change with every query, and compiling their pattern cost ~0.5 ms a search.

    At each place, left to right and never overlapping, the longest term that fits
    wins: a space in a term is any one whitespace character; a term starting with a
    Latin letter (digit) needs no letter or digit (no digit or dot) just before it;
    one ending in a Latin letter needs no letter after it, one ending in a digit no
    digit and no ".digit" after it.

    >>> _TermMatcher(("iphone", "16", "disk usage")).hits("iphone16 vs 2016, 16.1, disk\tusage")
    [(0, 6, 'iphone'), (6, 8, '16'), (24, 34, 'disk usage')]
    """

    def __init__(self, terms: tuple[str, ...]) -> None:
        # Longest first: at one place the first that fits wins. Each with its first
        # word (what `str.find` looks for), the characters that may not stand just
        # before it, how its end is checked, and, for a term of several words, the
        # term itself (walked character by character); the edge rules are read once
        # here, not at every place a term's first word is found.
        self._terms = [
            (
                rank,
                term,
                term.split(" ", 1)[0],
                _refused_before(term[0]),
                _end_rule(term[-1]),
                len(term),
                " " in term,
            )
            for rank, term in enumerate(sorted(terms, key=len, reverse=True))
        ]

    def hits(self, text: str) -> list[tuple[int, int, str]]:
        fits: list[tuple[int, int, int, str, bool]] = []  # (start, rank, end, term, spaced)
        size = len(text)
        for rank, term, first, refused, end_rule, length, spaced in self._terms:
            at = text.find(first)
            while at != -1:
                if not (at and text[at - 1] in refused):
                    # A one-word term was found whole by `find`: only its end is checked.
                    end = _spaced_end(text, at, term) if spaced else at + length
                    if end is not None and (
                        end >= size
                        or not end_rule
                        or (
                            text[end] not in _ASCII_LETTERS
                            if end_rule == _LETTER
                            else text[end] not in _ASCII_DIGITS
                            and not (
                                text[end] == "."
                                and end + 1 < size
                                and text[end + 1] in _ASCII_DIGITS
                            )
                        )
                    ):
                        fits.append((at, rank, end, term, spaced))
                at = text.find(first, at + 1)
        if len(fits) > 1:
            fits.sort()
        found: list[tuple[int, int, str]] = []
        free = 0  # matches never overlap
        for start, _, end, term, spaced in fits:
            if start >= free:
                found.append((start, end, " ".join(text[start:end].split()) if spaced else term))
                free = end
        return found


#: How a term's end is checked: no rule, no letter after it, no digit (nor ".digit").
_LETTER, _DIGIT_END = 1, 2
_NOT_BEFORE_LETTER = _ASCII_LETTERS | _ASCII_DIGITS
_NOT_BEFORE_DIGIT = _ASCII_DIGITS | {"."}


def _refused_before(first: str) -> frozenset[str]:
    """What may not stand just before a term: a letter or digit before a Latin letter,
    a digit or a dot before a digit ("16" is not found in "2016" or "3.16")."""
    if first in _ASCII_LETTERS:
        return _NOT_BEFORE_LETTER
    return _NOT_BEFORE_DIGIT if first in _ASCII_DIGITS else frozenset()


def _end_rule(last: str) -> int:
    if last.isascii() and last.isalpha():
        return _LETTER
    return _DIGIT_END if last.isdigit() else 0


def _spaced_end(text: str, start: int, term: str) -> int | None:
    """Where a term of several words ends when it is found at `start` (a space in it
    is any one whitespace character), or None; its edges are checked by the caller."""
    at = start
    for char in term:
        if at >= len(text):
            return None
        if (char == " " and not text[at].isspace()) or (char != " " and text[at] != char):
            return None
        at += 1
    return at


class Found:
    """Where, in one masked snippet, the sentence ends, clause breaks (claims included),
    query terms, variant words and change words are: found once, used for each claim."""

    __slots__ = (
        "_lowered",
        "_variant_words",
        "_variants",
        "breaks",
        "changes",
        "starts",
        "terms",
        "text",
    )

    def __init__(
        self,
        masked: str,
        claims: list[tuple[int, int]],
        matcher: _TermMatcher | None,
        compiled: SubjectRules,
    ) -> None:
        self.text = masked
        # where each sentence starts (its last one ends just before)
        self.starts = [end.end() for end in _SENTENCE_END.finditer(masked)]
        self.breaks = sorted([*(m.span() for m in _CLAUSE_BREAK.finditer(masked)), *claims])
        self._lowered = lowered = lower(masked)
        self.terms = _hits(matcher, lowered)
        self._variant_words = compiled.variants
        self._variants: list[tuple[int, int, str]] | None = None
        self.changes = _hits(compiled.changes, lowered)

    @property
    def variants(self) -> list[tuple[int, int, str]]:
        """Variant words, looked for only once a claim has query terms in its clause."""
        if self._variants is None:
            self._variants = _hits(self._variant_words, self._lowered)
        return self._variants


def _hits(pattern: re.Pattern[str] | _TermMatcher | None, text: str) -> list[tuple[int, int, str]]:
    if pattern is None:
        return []
    if isinstance(pattern, _TermMatcher):
        return pattern.hits(text)
    return [(m.start(), m.end(), " ".join(m.group().split())) for m in pattern.finditer(text)]


def _within(hits: list[tuple[int, int, str]], start: int, end: int) -> list[str]:
    """The words of the hits lying inside [start, end); a snippet has few, so a plain
    scan beats a binary search."""
    words = []
    for hit_start, hit_end, word in hits:
        if hit_start >= end:
            break
        if hit_start >= start and hit_end <= end:
            words.append(word)
    return words


def title_terms(
    title: str, terms: tuple[str, ...], matcher: _TermMatcher | None, compiled: SubjectRules
) -> list[str]:
    """Query terms and variant words in the title, for claims with none nearby."""
    if not title or matcher is None:
        return []
    hits = {word for _, _, word in _hits(matcher, title)}
    words = [term for term in terms if term in hits]
    if words:
        for _, _, variant in _hits(compiled.variants, title):
            if variant not in words:
                words.append(variant)
    return words


def attribute_of(
    span: tuple[int, int],
    found: Found,
    order: dict[str, int],
    in_title: Callable[[], list[str]],
    compiled: SubjectRules,
) -> tuple[str, bool]:
    """The subject words of one claim, and whether they are query terms."""
    start, end = span
    low = max(0, start - compiled.window)
    high = min(len(found.text), end + compiled.window)
    for sentence_start in found.starts:  # never across a sentence end
        if sentence_start > start:
            break
        low = max(low, sentence_start)
    for sentence_start in found.starts:
        if sentence_start > end:  # the sentence ends at sentence_start - 1
            high = min(high, sentence_start - 1)
            break
    # the claim is a clause break of its own; the clauses on either side are its own
    breaks = found.breaks
    k = bisect_left(breaks, span)  # the claim's own place: no clause break is masked text
    own_start = max(low, breaks[k - 1][1] if k else 0)
    own_end = min(high, breaks[k + 1][0] if k + 1 < len(breaks) else high)
    change = _change_word(found.changes, own_start, start, end, own_end) if found.changes else None
    extra = [change] if change else []
    if found.terms:
        # the claim's own clause first, then earlier clauses of the sentence, nearest first
        hits = _within(found.terms, own_start, own_end)
        region = (own_start, own_end)
        while not hits and k > 0 and breaks[k - 1][0] > low:
            k -= 1
            region = (max(low, breaks[k - 1][1] if k else 0), breaks[k][0])
            hits = _within(found.terms, *region)
        if hits:
            words = sorted(set(hits), key=order.__getitem__)
            for variant in _within(found.variants, *region):
                if variant not in words:
                    words.append(variant)
            return " ".join(words + extra), True
    if title_words := in_title():  # read from the title only when a claim needs it
        return " ".join(title_words + extra), True
    nearby = _nearby_words(found.text[own_start:start], found.text[end:own_end], compiled)
    return " ".join(nearby + [word for word in extra if word not in "".join(nearby)]), False


def _change_word(
    changes: list[tuple[int, int, str]], own_start: int, start: int, end: int, own_end: int
) -> str | None:
    """A change word in the 12 characters before the number, else in the 12 after it,
    within its clause ("直降 1000 元", "$100 off")."""
    before = _within(changes, max(own_start, start - 12), start)
    if before:
        return before[-1]
    after = _within(changes, end, min(own_end, end + 12))
    return after[0] if after else None


def _nearby_words(left: str, right: str, compiled: SubjectRules) -> list[str]:
    """Up to two content words next to the number: before it, else after it. A Chinese
    run counts as one word (its last four characters before, first four after)."""
    for text, before in ((left, True), (right, False)):
        words = []
        for match in _CONTENT_WORD.finditer(text):
            word = match.group()
            if word[0].isascii():
                word = word.lower()
                words.append("" if word in compiled.stopwords else word)
            else:
                word = word.strip(tables.FALLBACK_TRIM)
                words.append(word[-4:] if before else word[:4])
        picked: list[str] = []
        for word in reversed(words) if before else words:
            if word:
                picked.append(word)
                if len(picked) == 2 or not word.isascii():
                    break
            elif picked:
                break
        if picked:
            return picked[::-1] if before else picked
    return []
