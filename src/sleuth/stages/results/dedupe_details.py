"""Whether two texts that look alike are the same content: dedupe's word-by-word check
behind levels 2 and 3.

Templated pages (a phone in 128 GB and in 256 GB, the same flat in two districts, the
weather in two cities) are nearly the same text and different pages; copies of one
page (another URL and site name, a later snippet window, a cut, a date put in front)
can be further apart by SimHash than those. What users call a duplicate is the same
content, so two texts are aligned word by word (`difflib.SequenceMatcher`; Chinese
character by character) and compared:

- text one of them has and the other lacks at its start or end is a snippet window or
  a cut, not a difference ("Mar 3, 2025 — " in front, "..." at the end);
- any other difference that holds a detail makes them different pages: a token with
  a digit (5999, 128GB, 3.13, 2025-03-01); a Latin word with a capital letter that is
  not a common function word (Pro, Paris, Tuesday), or any Latin word in Chinese text
  (小米14 pro vs max); a Chinese character (without a dictionary a name cannot be told
  from other words, and Chinese copies of one page do not reword it);
- lower-case English words may differ ("newest" vs "latest"): they are counted as
  edited words, unless the same substitution comes back (in the title and again in
  the snippet, say: "guide by alpha" / "guide by beta", "alpha explains" / "beta
  explains"), which is a template's slot filled twice, not an edit.

Alignment is the costly part, so two exact tests come first: titles (where every
difference counts) that hold a number or a Chinese character a different number of
times differ in a detail however they align (`compare`), and a pair whose tokens in
common, counted as multisets, already fall short of the coverage asked for cannot
reach it aligned (`coverage_at_most`).

A title's trailing site name (" - Reuters", "_新浪财经") is set aside when it holds no
digit; titles are sent whole, so only a cut marked by an ellipsis may run shorter.
Full-width forms read as their ASCII ones (NFKC). Pure: no I/O.

>>> disagree("iPhone 15 128GB 5999 元", "iPhone 15 Pro 256GB 8999 元")
True
>>> disagree("Python 3.12 is the newest release.", "Python 3.12 is the latest release...")
False
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import repeat

from sleuth.text import CJK, language_of

__all__ = [
    "Comparison",
    "compare",
    "compare_items",
    "coverage_at_most",
    "disagree",
    "text_numbers",
    "title_numbers",
    "titles_disagree",
]

# Latin/digit words (3.13, 5,999, men's) or single Chinese characters.
_TOKEN_BODY = rf"[{CJK}]|[^\W_{CJK}]+(?:[.,'’:/-][^\W_{CJK}]+)*"
_TOKEN = re.compile(_TOKEN_BODY, re.UNICODE)
# The same tokens, each with what comes before it since the last: characters that
# start no token (not a word character, or "_"; an unassigned code point among the
# Chinese ones does start one), so the gap ends where the token begins.
_GAP_AND_TOKEN = re.compile(rf"((?:[^\w{CJK}]|_)*)({_TOKEN_BODY})", re.UNICODE)
# The same two in ASCII text, where NFKC changes nothing and [^\W_] is [A-Za-z0-9]:
# about twice as fast, and most results are ASCII.
_ASCII_WORD_PATTERN = r"[A-Za-z0-9]+(?:[.,':/-][A-Za-z0-9]+)*"
_ASCII_TOKEN = re.compile(_ASCII_WORD_PATTERN)
_ASCII_GAP_AND_TOKEN = re.compile(rf"([^A-Za-z0-9]*)({_ASCII_WORD_PATTERN})")
# After one of these a token opens a sentence.
_SENTENCE_OPENS = frozenset(".!?。！？…—:")
# The last separator of a title and what follows it: a site name when short.
# Chinese sites often glue it with a bare hyphen: "北京15天天气查询-天气网".
_SITE_SUFFIX = re.compile(rf"(?:\s[-–—|·]\s|[_｜|]|\s-\s?|(?<=[{CJK}])-)\s*([^-–—|·_｜]{{1,30}})$")
_SITE_SEPARATORS = "-–—|·_｜"
_CJK_CHAR = re.compile(f"[{CJK}]")
# Capitalised at the start of a sentence, not a name.
_FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "at",
        "by",
        "for",
        "from",
        "how",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "the",
        "this",
        "that",
        "to",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "with",
        "you",
        "your",
    ]
)


@dataclass(frozen=True)
class Comparison:
    """How two aligned texts differ."""

    #: A number, model, name or date differs away from the texts' ends.
    detail_differs: bool
    #: Lower-case words that differ away from the ends (an edited copy).
    edited_words: int
    #: Tokens the two share, and the token count of the shorter text.
    shared: int
    shorter: int
    #: Each lower-case substitution made away from the ends, as (old, new) words.
    substitutions: tuple[tuple[str, str], ...] = ()

    @property
    def distinct(self) -> bool:
        """Different pages: a detail differs, or one substitution is made twice."""
        return self.detail_differs or len(set(self.substitutions)) < len(self.substitutions)

    @property
    def coverage(self) -> float:
        """How much of the shorter text the longer one holds, 0..1."""
        return self.shared / self.shorter if self.shorter else 1.0

    def __add__(self, other: Comparison) -> Comparison:
        return Comparison(
            self.detail_differs or other.detail_differs,
            self.edited_words + other.edited_words,
            self.shared + other.shared,
            self.shorter + other.shorter,
            self.substitutions + other.substitutions,
        )


def compare(a: str, b: str, *, ends_may_differ: bool = True) -> Comparison:
    """Align `a` and `b` and say how they differ (see the module docstring). With
    `ends_may_differ` False only a cut marked by an ellipsis may run shorter."""
    first, second = _tokens(a), _tokens(b)
    shorter = min(len(first), len(second))
    if first == second:
        return Comparison(False, 0, shorter, shorter)
    # Where every difference counts, a number one has and the other lacks is a detail:
    # told apart without aligning them (edits and shared tokens are then not counted).
    cut_short = _ends_cut(a) or _ends_cut(b)
    if not ends_may_differ and not cut_short and _numbers(first) != _numbers(second):
        return Comparison(True, 0, 0, shorter)
    chinese = _chinese(a) or _chinese(b)
    folded_a, folded_b = _folded(first), _folded(second)
    # Likewise for any token that is a detail whatever its case (a number, a Chinese
    # character; in Chinese text every token): one a text has more often than the
    # other cannot all be aligned, and every unaligned token counts here.
    if (
        not ends_may_differ
        and not cut_short
        and _case_free_details(folded_a, chinese) != _case_free_details(folded_b, chinese)
    ):
        return Comparison(True, 0, 0, shorter)
    return _aligned(a, b, ends_may_differ=ends_may_differ)


def _aligned(a: str, b: str, *, ends_may_differ: bool) -> Comparison:
    """`compare` by the word-by-word alignment itself, no shortcut taken."""
    first, second = _tokens(a), _tokens(b)
    shorter = min(len(first), len(second))
    chinese = _chinese(a) or _chinese(b)
    folded_a, folded_b = _folded(first), _folded(second)
    matcher = SequenceMatcher(None, folded_a, folded_b, autojunk=False)
    detail = False
    edited = shared = 0
    substitutions: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            shared += i2 - i1
            continue
        at_start = i1 == 0 and j1 == 0 and ends_may_differ
        at_end = i2 == len(first) and j2 == len(second)
        cut = at_end and (ends_may_differ or _ends_cut(a if i1 == i2 else b))
        if (at_start or cut) and (i1 == i2 or j1 == j2):
            continue  # one side only runs longer: a window or a cut
        if cut and _cut_mid_word(folded_a[i1:i2], folded_b[j1:j2]):
            continue  # "... XD ..." for "XDR 显示屏"
        differing = (*first[i1:i2], *second[j1:j2])
        if any(_is_detail(token, chinese) for token in differing):
            detail = True
        if op == "replace":
            substitutions.append((" ".join(folded_a[i1:i2]), " ".join(folded_b[j1:j2])))
        edited += max(i2 - i1, j2 - j1)
    return Comparison(detail, edited, shared, shorter, tuple(substitutions))


def compare_items(title_a: str, snippet_a: str, title_b: str, snippet_b: str) -> Comparison:
    """Titles (site names aside) and snippets compared, summed; titles that disagree
    on a detail already make two pages, and the longer snippets are not aligned."""
    titles = compare(_without_site(title_a), _without_site(title_b), ends_may_differ=False)
    if titles.detail_differs:
        return titles
    return titles + compare(snippet_a, snippet_b)


def coverage_at_most(title_a: str, snippet_a: str, title_b: str, snippet_b: str) -> float:
    """An upper bound on `compare_items(...).coverage`, without aligning the texts: an
    alignment shares no more of a token than both texts hold. Where this is already
    below what a caller requires, the alignment cannot reach it either."""
    titles = _shared_at_most(_without_site(title_a), _without_site(title_b))
    snippets = _shared_at_most(snippet_a, snippet_b)
    shorter = titles[1] + snippets[1]
    return (titles[0] + snippets[0]) / shorter if shorter else 1.0


def title_numbers(title: str) -> tuple[str, ...] | None:
    """The numbers of a title (site name aside), or None when it is cut (ends with an
    ellipsis). Two uncut titles with different numbers are two pages by `compare_items`
    whatever their snippets: a check that costs nothing per pair."""
    core = _without_site(title)
    # Not through _numbers' cache: a new title's tokens are a new key, looked up in vain.
    return None if _ends_cut(core) else _numbers_of(_plain_tokens(core))


def text_numbers(text: str) -> frozenset[str]:
    """Every number in a text (a token with a digit: 5999, 128GB, 3.13, 07:05), for
    whole pages, which are not aligned word by word: two copies of one article state
    the same numbers, two pages of one template (a phone in two sizes, a flat in two
    districts) do not.

    >>> sorted(text_numbers("Leaves at 21:40, reaches Vienna at 07:05; from 59 euros."))
    ['07:05', '21:40', '59']
    """
    if text.isascii():
        found = _ASCII_TOKEN.findall(text)
    else:
        found = _TOKEN.findall(unicodedata.normalize("NFKC", text))
    return frozenset(token for token in found if any(ch.isdigit() for ch in token))


def disagree(a: str, b: str, *, ends_may_differ: bool = True) -> bool:
    """True when `a` and `b` differ, away from their ends, in a number, model, name or
    date, or make one substitution twice."""
    return compare(a, b, ends_may_differ=ends_may_differ).distinct


def titles_disagree(a: str, b: str) -> bool:
    """`disagree` for titles, with a trailing site name without digits set aside; a
    title that is longer by a word is another page ("iPhone 15" and "iPhone 15 Pro").

    >>> titles_disagree("小米14 Pro 评测_新浪科技", "小米14 Pro 评测 - 网易数码")
    False
    >>> titles_disagree("iPhone 15 - Apple", "iPhone 15 Pro - Apple")
    True
    """
    return disagree(_without_site(a), _without_site(b), ends_may_differ=False)


@lru_cache(maxsize=4096)
def _without_site(title: str) -> str:
    title = unicodedata.normalize("NFKC", title)
    # The suffix holds no separator: a match's separator is the title's last one, and
    # the match starts there or a space before it (a search from the start tries every
    # position in vain).
    last = max(map(title.rfind, _SITE_SEPARATORS))
    if last < 0:
        return title
    match = _SITE_SUFFIX.search(title, max(last - 1, 0))
    if match is None or any(ch.isdigit() for ch in match.group(1)):
        return title
    core = title[: match.start()].strip()
    return core if len(_plain_tokens(core)) >= 2 else title


@lru_cache(maxsize=4096)
def _numbers(tokens: tuple[str, ...]) -> tuple[str, ...]:
    return _numbers_of(tokens)


def _numbers_of(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The tokens that hold a digit, sorted, without a sentence's "\\n" mark."""
    # A word of letters only (most are) holds no digit.
    return tuple(
        sorted(
            token.lstrip("\n")
            for token in tokens
            if not token.isalpha() and any(map(str.isdigit, token))
        )
    )


@lru_cache(maxsize=4096)
def _chinese(text: str) -> bool:
    return language_of(text) == "zh"  # asked once per pair: each text comes back often


@lru_cache(maxsize=4096)
def _plain_tokens(text: str) -> tuple[str, ...]:
    """The text's tokens as written, NFKC: full-width digits and letters (５９９９,
    ｉＰｈｏｎｅ) are the same detail."""
    if text.isascii():
        return tuple(_ASCII_TOKEN.findall(text))
    return tuple(_TOKEN.findall(unicodedata.normalize("NFKC", text)))


@lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[str, ...]:
    """`_plain_tokens`, those that open a sentence marked with a leading "\n" (its
    capital says nothing), which the comparison ignores."""
    # What precedes each token back to the one before cannot start a token: its last
    # character other than a space tells whether a sentence opens (none: the text
    # starts, or a space follows a token, which ends in a letter, a digit or Chinese).
    if text.isascii():
        pairs = _ASCII_GAP_AND_TOKEN.findall(text)
    else:
        pairs = _GAP_AND_TOKEN.findall(unicodedata.normalize("NFKC", text))
    out: list[str] = []
    for gap, token in pairs:
        left = gap.rstrip()
        opens = left[-1] in _SENTENCE_OPENS if left else not out
        out.append("\n" + token if opens else token)
    return tuple(out)


def _shared_at_most(a: str, b: str) -> tuple[int, int]:
    """Tokens of `a` and `b` in common as multisets, and the shorter one's length."""
    (first, first_total), (second, second_total) = _bag(a), _bag(b)
    if len(first) > len(second):
        first, second = second, first
    # min(count here, count there) for each token, summed in C.
    shared = sum(map(min, first.values(), map(second.get, first, repeat(0))))
    return shared, min(first_total, second_total)


@lru_cache(maxsize=4096)
def _bag(text: str) -> tuple[Counter[str], int]:
    """How often each folded token of `text` occurs, and how many tokens it has (not
    to be changed: cached, each text meets many)."""
    # In ASCII, casefold is lower and keeps every token's bounds: one call for the text.
    words = _ASCII_TOKEN.findall(text.lower()) if text.isascii() else _plain_tokens(text)
    bag = Counter(words if text.isascii() else map(str.casefold, words))
    return bag, bag.total()


@lru_cache(maxsize=4096)
def _case_free_details(folded: tuple[str, ...], chinese: bool) -> tuple[str, ...]:
    """The tokens that are details however they are written (`_is_detail` holds for
    every spelling that folds to them), sorted."""
    if chinese:
        return tuple(sorted(folded))
    return tuple(sorted(t for t in folded if _CJK_CHAR.match(t) or any(ch.isdigit() for ch in t)))


def _ends_cut(text: str) -> bool:
    """Whether `text` ends with an ellipsis ("..." or "…"), white space after it aside:
    what a regex ending in \\s*$ finds, without trying it at every character."""
    return text.rstrip().endswith(("...", "…"))


def _cut_mid_word(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether one side's last differing part is one word the other's first starts with."""
    if len(a) == 1 and b:
        return b[0].startswith(a[0])
    return len(b) == 1 and bool(a) and a[0].startswith(b[0])


@lru_cache(maxsize=4096)
def _folded(tokens: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(token.removeprefix("\n").casefold() for token in tokens)


@lru_cache(maxsize=16384)
def _is_detail(token: str, chinese: bool) -> bool:
    """Whether a differing token is a detail (see the module docstring). Cached: the
    same words come back in pair after pair of one search."""
    opens, token = token.startswith("\n"), token.removeprefix("\n")
    if any(ch.isdigit() for ch in token):
        return True
    if chinese or _CJK_CHAR.match(token):
        return True  # a Chinese character, or a Latin word amid Chinese text
    # A sentence's first word is capitalised anyway; a capital inside it (iPhone) counts.
    letters = token[1:] if opens else token
    return any(ch.isupper() for ch in letters) and token.casefold() not in _FUNCTION_WORDS
