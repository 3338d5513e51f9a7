"""Small language helpers shared by the stages: language guess, tokens, sentence ends.

Pure functions, Chinese and English alike. Word segmentation for Chinese (jieba) is
loaded lazily by the callers that need words; here Chinese is tokenised into
character bigrams, which is fast and language-agnostic enough for ranking.

>>> tokens("Python 3.12 发布说明")
('python', '3.12', '发布', '布说', '说明')
>>> split_sentences("第一句。第二句！Third one. Fourth? The www. prefix, e.g. this.")
['第一句。', '第二句！', 'Third one.', 'Fourth?', 'The www. prefix, e.g. this.']
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain

#: The Chinese characters (CJK unified ideographs, extension A, compatibility ones), as
#: a character-class body for regular expressions: f"[{CJK}]".
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: A run of Chinese characters.
CJK_RUN = re.compile(f"[{CJK}]+")
# A text split at its Chinese runs (kept, at odd places); a Latin/digit word (3.12,
# don't, covid-19) never swallows an adjacent Chinese run ("Python发布" is two tokens).
_CJK_SPLIT = re.compile(f"([{CJK}]+)")
# A Latin/digit word, in a text or a part of one without Chinese.
_WORD = re.compile(r"[^\W_]+(?:[.'’-][^\W_]+)*", re.UNICODE)
# ... and in ASCII text, where [^\W_] is [a-z0-9] once lower-cased: a third faster.
_ASCII_WORD = re.compile(r"[a-z0-9]+(?:[.'-][a-z0-9]+)*", re.ASCII)
# A sentence ends at Chinese 。！？ (no space needed), at ! or ? followed by space or the
# end, and at "." followed by the end or by space and a word that does not start in
# lower case: "3.5", "the www. prefix" and "e.g. this" do not end a sentence. Closing
# quotes and brackets after the mark stay with the sentence.
_END_MARK = re.compile(r"[。！？!?.][\"”’)\]]*")
_NEXT_WORD = re.compile(r"\s+(\S)?")
# "1. " / "2. " at the start or after a space: a numbered list's marker, when the list
# has a neighbouring number too (so "it costs 12. Then" stays a sentence end).
_LIST_MARKER = re.compile(r"(?:^|(?<=\s))(\d{1,2})\.(?=\s)")
# A digit, a dot and a space, written to start with the dot: the regex engine then
# jumps from dot to dot; one that starts with a digit class tries every character, 20x
# slower on a snippet.
_DIGIT_DOT_SPACE = re.compile(r"\.(?<=\d\.)\s")


def is_cjk(char: str) -> bool:
    return bool(CJK_RUN.fullmatch(char))


def language_of(text: str) -> str:
    """'zh' when Chinese makes up a fair share of the letters (product names are often
    Latin: "iPhone 16 价格" is a Chinese query), else 'en'."""
    cjk = sum(map(len, CJK_RUN.findall(text)))
    if cjk < 2:
        return "en"  # no need to count the letters
    letters = sum(map(str.isalpha, text))
    # Unassigned code points among the Chinese ones are no letters: none may be left.
    return "zh" if letters and cjk / letters >= 0.2 else "en"


@lru_cache(maxsize=8192)
def tokens(text: str) -> tuple[str, ...]:
    """Lower-cased words for Latin script, overlapping bigrams for Chinese runs.

    Cached: dedupe and rank tokenise the same titles and snippets in one search.
    """
    lowered = text.lower()
    if lowered.isascii():
        return tuple(_ASCII_WORD.findall(lowered))
    # No token holds white space, so a text's tokens are its words' in turn; a word
    # recurs across texts and searches where a text does not (lower-cased whole first:
    # a final sigma is lower-cased by what follows it).
    return tuple(chain.from_iterable(map(_word_tokens, lowered.split())))


@lru_cache(maxsize=16384)
def _word_tokens(word: str) -> tuple[str, ...]:
    """`tokens` of one lower-cased word without white space (a regex scan of text with
    Chinese in it costs several times one of ASCII text: done once a word)."""
    if word.isascii():
        return tuple(_ASCII_WORD.findall(word))
    # Runs of Chinese and what lies between them, in turn: a word never crosses a run.
    out: list[str] = []
    for index, part in enumerate(_CJK_SPLIT.split(word)):
        if index % 2 == 0:
            if part:
                out += (_ASCII_WORD if part.isascii() else _WORD).findall(part)
        elif len(part) < 3:
            out.append(part)
        else:
            out += map(part.__getitem__, _bigram_slices(len(part)))
    return tuple(out)


@lru_cache(maxsize=256)
def _bigram_slices(length: int) -> tuple[slice, ...]:
    """Where the overlapping bigrams of a Chinese run of `length` characters are."""
    return tuple(slice(start, start + 2) for start in range(length - 1))


#: Abbreviations after which a capitalised word does not start a new sentence.
ABBREVIATIONS = frozenset(
    {"e.g.", "i.e.", "vs.", "cf.", "mr.", "mrs.", "ms.", "dr.", "prof.", "fig.", "approx.", "no."}
)
_OPENING = "([{\"'“‘（【"


# The spans of texts cut after a sentence (`sentence_prefix`), taken from the whole
# text's: `sentence_spans` uses them instead of splitting the cut text again. A hint,
# bounded by emptying it when full.
_PREFIX_SPANS: dict[str, tuple[tuple[int, int], ...]] = {}
_PREFIX_SPANS_MAX = 1024


@lru_cache(maxsize=4096)
def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """(start, end) of each sentence in `text`, closing punctuation in, spaces out.
    Cached: clean, summarize and the model summary split the same snippets.

    >>> text = "One. Two! Ask Dr. Smith."
    >>> [text[a:b] for a, b in sentence_spans(text)]
    ['One.', 'Two!', 'Ask Dr. Smith.']
    """
    known = _PREFIX_SPANS.pop(text, None)
    return _spans(text) if known is None else known


def sentence_prefix(text: str, end: int) -> str:
    """`text[:end]`, `end` being where one of its sentences ends (a span's end), its
    sentences remembered for `sentence_spans`: they are the whole text's that end by
    `end`. Not when `text` may hold a numbered list, whose markers are read by their
    neighbours: a cut can take a marker's neighbour away.

    >>> sentence_spans(sentence_prefix("One. Two! Three.", 9))
    ((0, 4), (5, 9))
    """
    prefix = text[:end]
    if end < len(text) and not _has_digit_dot_space(text):
        if len(_PREFIX_SPANS) >= _PREFIX_SPANS_MAX:
            _PREFIX_SPANS.clear()
        _PREFIX_SPANS[prefix] = tuple(span for span in sentence_spans(text) if span[1] <= end)
    return prefix


def _spans(text: str) -> tuple[tuple[int, int], ...]:
    """What `sentence_spans` returns, found anew."""
    spans = []
    start = 0
    open_start: int | None = None
    for end in [*_sentence_ends(text), len(text)]:
        piece = text[start:end]
        stripped = piece.strip()
        if stripped:
            left = start + (len(piece) - len(piece.lstrip()))
            open_start = left if open_start is None else open_start
            last_word = stripped.rsplit(None, 1)[-1].lstrip(_OPENING).lower()
            if last_word not in ABBREVIATIONS or end == len(text):
                spans.append((open_start, left + len(stripped)))
                open_start = None
        start = end
    return tuple(spans)


def _sentence_ends(text: str) -> list[int]:
    """Where sentences end, by the rule above (a plain scan: this runs on every snippet)."""
    ends: list[int] = []
    markers = _list_markers(text)
    length = len(text)
    for mark in _END_MARK.finditer(text):
        start, end = mark.span()
        if markers and start in markers:
            # "2." of a numbered list opens an item: the sentence before ends before it.
            before = text[: markers[start]].rstrip()
            # "Steps: 1. ..." keeps its introduction with the first item.
            if before and before[-1] not in ":：" and (not ends or ends[-1] < len(before)):
                ends.append(len(before))
            continue
        kind = text[start]
        if kind in "。！？" or end == length:
            ends.append(end)
        elif text[end].isspace():
            # ! and ? end before any space; "." only before a word not in lower case.
            word = text[end + 1 : end + 2]  # the next word's first letter, most often
            if word.isspace():
                following = _NEXT_WORD.match(text, end)
                word = (following.group(1) if following else None) or ""
            if kind != "." or not word.islower():
                ends.append(end)
    return ends


def _list_markers(text: str) -> dict[int, int]:
    """The offsets of the dots of numbered-list markers, each with its number's start."""
    # Every marker is a digit, a dot and a space: a quick scan for that rules most
    # texts out.
    if not _has_digit_dot_space(text):
        return {}
    found = [(int(m.group(1)), m.start(1), m.end(1)) for m in _LIST_MARKER.finditer(text)]
    numbers = {number for number, _, _ in found}
    return {
        dot: start for number, start, dot in found if number - 1 in numbers or number + 1 in numbers
    }


def _has_digit_dot_space(text: str) -> bool:
    """Whether `text` holds a decimal digit, a dot and a white-space character in a row
    (what the pattern \\d\\.\\s finds), looked for from the dots (`_DIGIT_DOT_SPACE`)."""
    return _DIGIT_DOT_SPACE.search(text) is not None


def split_sentences(text: str) -> list[str]:
    """Sentences with their closing punctuation, surrounding space trimmed."""
    return [text[start:end] for start, end in sentence_spans(text)]
