"""Rewrite: turn a query in the user's own words into search keywords, Chinese and English.

Owns keyword distillation and context carry. Distillation drops filler ("帮我找一下",
"please find the"), keeps entities, numbers with their units (5999元, 3.5%, 120Hz),
versions (3.12) and model names (iPhone 16 Pro), segments Chinese with jieba and
de-duplicates. Context carry completes an elliptical follow-up ("那明天呢",
"and tomorrow?") with the salient terms of the latest earlier turn, replacing a term
of the same slot (a time, or any slot configured) instead of adding a contradiction.

Everything is rule based and every word list is a setting (`rewrite:` in sleuth.yaml):
nothing is learned or fetched. The input is expected to have passed
`sleuth.stages.safety.guard`; policy and length are not checked here.

>>> rewrite("What is the capital of Australia?", [], RewriteSettings()).keywords
'capital Australia'
>>> rewrite("那明天呢", ["北京今天天气怎么样"], RewriteSettings()).keywords
'北京 明天 天气'
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sleuth.errors import InvalidRequest
from sleuth.text import is_cjk, language_of

# ---------------------------------------------------------------------------
# Default word lists. Multi-word entries match across tokens ("look up", "帮我找一下").
# fmt: off

_FILLER_ZH = (
    "帮我找一下", "帮我查一下", "帮我搜一下", "帮我找找", "帮我查查", "帮我搜搜", "请帮我",
    "帮我", "帮忙", "帮", "我查", "请问", "请", "我想知道", "我想了解", "我想问", "想知道",
    "告诉我", "告诉", "给我", "能不能", "能否", "可不可以", "可以", "一下", "找一下",
    "查一下", "搜一下", "找", "找找", "查", "查查", "查看", "搜", "搜搜", "搜索", "查询",
    "吗", "呢", "吧", "呀", "啊", "哦", "嘛", "的", "了", "地", "得", "是", "有", "在",
    "和", "与", "及", "或", "我", "你", "我们", "什么", "怎么样", "怎样", "如何", "哪些",
    "是不是", "有没有", "多少", "一些", "一个", "关于", "相关", "信息", "好的", "谢谢",
)
_FILLER_EN = (
    "please", "kindly", "find", "search for", "search the web for", "look up", "look for",
    "looking for", "tell me", "show me", "give me", "let me know", "can you", "could you",
    "would you", "will you", "i want to know", "i'd like to know", "i would like to know",
    "i want", "i need", "i'm looking for", "do you know", "what is", "what are", "what's",
    "whats", "what was", "what were", "what", "which", "how do i", "how can i", "is there",
    "are there", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does",
    "did", "i", "me", "my", "we", "our", "you", "your", "the", "a", "an", "of", "about",
    "in", "on", "at", "to", "for", "from", "by", "with", "into", "as", "or", "some", "any",
    "info", "information", "regarding", "something", "anything", "thanks", "thank you",
    "ok", "okay",
)
_ANAPHORA_ZH = (
    "那", "那么", "那个", "那些", "这", "这个", "这些", "它", "它的", "它们", "他", "她",
    "他们", "呢", "还有", "那里", "那儿", "这里",
)
_ANAPHORA_EN = (
    "what about", "how about", "and", "also", "it", "its", "it's", "that", "those", "them",
    "they", "there", "he", "she", "his", "her", "him", "this one", "the same",
)
_QUESTION_WORDS = (
    "how", "why", "who", "when", "where", "怎么", "为什么", "为何", "谁", "哪里", "哪儿",
    "什么时候", "多久",
)
_TIME_SLOT = (
    "今天", "明天", "昨天", "后天", "前天", "今晚", "明晚", "昨晚", "今年", "明年", "去年",
    "前年", "本周", "这周", "下周", "上周", "本月", "这个月", "下个月", "上个月", "周末",
    "现在", "目前", "当前", "最近", "最新", "早上", "上午", "中午", "下午", "晚上",
    "周一", "周二", "周三", "周四", "周五", "周六", "周日", "星期一", "星期二", "星期三",
    "星期四", "星期五", "星期六", "星期日", "星期天",
    "today", "tomorrow", "yesterday", "tonight", "now", "currently", "current", "latest",
    "recent", "this week", "next week", "last week", "this weekend", "next weekend",
    "this month", "next month", "last month", "this year", "next year", "last year",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
)
_UNITS_ZH = (
    "年", "月", "日", "号", "元", "块", "角", "万", "亿", "千", "百", "万元", "亿元", "美元",
    "欧元", "英镑", "日元", "港元", "港币", "人民币", "岁", "人", "个", "次", "倍", "度",
    "米", "厘米", "毫米", "公里", "千米", "公斤", "千克", "克", "斤", "吨", "升", "毫升",
    "小时", "分钟", "秒", "天", "周", "寸", "英寸", "核", "代", "期", "届", "层", "页",
)

#: Markers of a question about the present, for `is_time_sensitive`.
TIME_SENSITIVE_ZH = (
    "最新", "今天", "今日", "昨天", "明天", "今晚", "现在", "目前", "当前", "本周", "这周",
    "本月", "这个月", "今年", "最近", "近期", "实时", "刚刚",
)
SOURCE_REQUEST_ZH = ("来源", "出处", "链接", "网址", "引用", "原文", "参考资料")
SOURCE_REQUEST_EN = (
    "source", "sources", "link", "links", "url", "urls", "cite", "citation", "citations",
    "reference", "references",
)
TIME_SENSITIVE_EN = (
    "latest", "today", "tonight", "yesterday", "tomorrow", "now", "current", "currently",
    "recent", "recently", "this week", "this month", "this year", "breaking", "live",
    "newest", "up to date", "up-to-date",
)
# fmt: on

_TIME = "time"
_YEAR = re.compile(r"(?:19|20)\d{2}年?")
_NUMBER = re.compile(r"[$€£¥₹]?\d+(?:[.,]\d+)*")
# A Latin-script token: words, numbers, versions (3.12), model names (GPT-4o), C++, 3.5%,
# identifiers whole (max_connections, pg_cancel_backend, __init__): a search for
# "pg cancel backend" is a search for three words.
_WORD = re.compile(r"[$€£¥₹]?_*[^\W_]+(?:[_.'’\-/:]_*[^\W_]+)*_*(?:\+\+|[+#%‰])?")
#: Control and format characters: not words, dropped before tokenising.
_INVISIBLE = ("Cc", "Cf")
#: Longest run of tokens one word-list entry may span.
_MAX_SPAN = 8


class RewriteSettings(BaseModel):
    """The `rewrite:` section of sleuth.yaml. All matching is case-insensitive.

    >>> RewriteSettings().max_terms
    12
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    filler_zh: list[str] = Field(
        default_factory=lambda: list(_FILLER_ZH),
        description=(
            "Chinese words and phrases dropped from keywords: politeness, particles, "
            "verbs of asking."
        ),
    )
    filler_en: list[str] = Field(
        default_factory=lambda: list(_FILLER_EN),
        description=(
            "English words and phrases dropped from keywords: requests, stopwords. "
            "An all-capitals token such as 'IT' or 'US' is never treated as filler."
        ),
    )
    anaphora_zh: list[str] = Field(
        default_factory=lambda: list(_ANAPHORA_ZH),
        description=(
            "Chinese markers that a query leans on earlier turns (那, 它, 呢); "
            "dropped from keywords."
        ),
    )
    anaphora_en: list[str] = Field(
        default_factory=lambda: list(_ANAPHORA_EN),
        description=(
            "English markers that a query leans on earlier turns (what about, it, those); "
            "dropped from keywords. One standing between two content words ('Python and "
            "Java') is a conjunction, not a marker."
        ),
    )
    question_words: list[str] = Field(
        default_factory=lambda: list(_QUESTION_WORDS),
        description=(
            "Words that carry the kind of question (how, why, 为什么): kept in keywords, "
            "never carried from context."
        ),
    )
    slots: dict[str, list[str]] = Field(
        default_factory=lambda: {_TIME: list(_TIME_SLOT)},
        description=(
            "Named groups of mutually exclusive terms. A context term is not carried when the "
            "query has a term of the same slot ('明天' replaces '今天'). Years (2024, 2024年) "
            "always belong to the 'time' slot. Add e.g. a 'place' slot to swap cities."
        ),
    )
    units_zh: list[str] = Field(
        default_factory=lambda: list(_UNITS_ZH),
        description=(
            "Chinese units glued to a number written right before them (2024年, 5999元, 3天)."
        ),
    )
    mention_markers_en: list[str] = Field(
        default_factory=lambda: ["the", "a", "an"],
        description=(
            "Articles that make the filler word right after them a name when a content "
            "word follows: 'the with statement', 'the in operator', 'an if clause' keep "
            "'with', 'in', 'if'."
        ),
    )
    max_terms: int = Field(
        default=12, ge=1, description="Most terms in the keywords; carried terms are dropped first."
    )
    short_query_terms: int = Field(
        default=2,
        ge=0,
        description="A query with at most this many content terms is elliptical and takes context.",
    )


@dataclass(frozen=True)
class Rewritten:
    """The rewrite of one query. `keywords` is `terms` joined by spaces, never empty.

    >>> r = rewrite("and tomorrow?", ["What's the weather in Paris today?"], RewriteSettings())
    >>> r.keywords, r.carried
    ('weather Paris tomorrow', ('weather', 'Paris'))
    """

    original: str
    keywords: str
    terms: tuple[str, ...]
    carried: tuple[str, ...]
    language: str
    #: the question words among `terms` ("how", "为什么"): they say what kind of answer
    #: is wanted, not what it is about
    questions: tuple[str, ...] = ()

    @property
    def topic_terms(self) -> tuple[str, ...]:
        """`terms` without the question words (all of them when nothing else is left).

        >>> rewrite("How does sleuth remove duplicates?", [], RewriteSettings()).topic_terms
        ('sleuth', 'remove', 'duplicates')
        """
        topic = tuple(term for term in self.terms if term not in self.questions)
        return topic or self.terms


def rewrite(query: str, context: Sequence[str], settings: RewriteSettings) -> Rewritten:
    """Distil `query` into keywords; complete it from `context` (oldest first) if elliptical.

    Raises `InvalidRequest` for a query with no visible characters (the guard rejects
    those first).
    """
    text = _normalise(query)
    if not text:
        raise InvalidRequest(
            "query: nothing to rewrite; expected at least one visible character",
            field="query",
        )
    lexicon = _Lexicon.of(settings)
    own, leans = _distil(text, lexicon)
    merged = [(term, False) for term in own]
    if context and (leans or len(own) <= settings.short_query_terms):
        previous = _latest_salient_turn(context, lexicon)
        merged = _carry(own, previous)
    merged = _cap(_dedupe(merged), settings.max_terms)

    terms = tuple(term.text for term, _ in merged)
    carried = tuple(term.text for term, was_carried in merged if was_carried)
    questions = tuple(term.text for term, _ in merged if term.question)
    if not terms:
        terms = (text,)  # everything was filler: searching the words as given beats nothing
    return Rewritten(
        original=query,
        keywords=" ".join(terms),
        terms=terms,
        carried=carried,
        language=language_of(text),
        questions=questions,
    )


def is_time_sensitive(query: str, *, current_year: int | None = None) -> bool:
    """Whether the query asks about the present (最新, 今天, latest, this week, now, ...).

    Chinese markers match anywhere, English ones as whole words; with `current_year`
    a mention of that year or a later one counts too. Used to ask for `published_at`.

    >>> is_time_sensitive("最新的Python版本"), is_time_sensitive("known issues")
    (True, False)
    """
    text = _normalise(query).casefold()
    if _mentions(text, TIME_SENSITIVE_ZH, TIME_SENSITIVE_EN):
        return True
    if current_year is not None:
        years = (int(year) for year in re.findall(r"(?<!\d)((?:19|20)\d{2})(?!\d)", text))
        return any(year >= current_year for year in years)
    return False


def asks_for_sources(query: str) -> bool:
    """Whether the query asks where the answer comes from (来源, 出处, sources, cite, ...).

    Used to bring `url` into the projection.

    >>> asks_for_sources("给出来源：长城有多长"), asks_for_sources("resource limits")
    (True, False)
    """
    return _mentions(_normalise(query).casefold(), SOURCE_REQUEST_ZH, SOURCE_REQUEST_EN)


def _mentions(text: str, zh: Sequence[str], en: Sequence[str]) -> bool:
    """Chinese markers anywhere; English ones as whole words."""
    if any(marker in text for marker in zh):
        return True
    words = "|".join(re.escape(marker) for marker in en)
    return re.search(rf"(?<![^\W_])(?:{words})(?![^\W_])", text) is not None


# ---------------------------------------------------------------------------
# Internals

_Kind = Literal["filler", "marker", "question", "slot"]


@dataclass(frozen=True)
class _Term:
    text: str
    slot: str | None = None
    question: bool = False

    @property
    def key(self) -> str:
        return _key(self.text)

    @property
    def salient(self) -> bool:
        """Worth carrying into another query: not a question word, not a lone Chinese character."""
        return not self.question and not (len(self.text) == 1 and is_cjk(self.text))


@dataclass(frozen=True)
class _Lexicon:
    """The word lists of one `RewriteSettings`, keyed for matching."""

    entries: dict[str, tuple[_Kind, str | None]]
    cjk_slot_words: tuple[tuple[str, str], ...]  # (word, slot), longest first
    units: tuple[str, ...]  # longest first
    mention_markers: frozenset[str] = frozenset()
    #: Every beginning of an entry: a run of tokens that is none cannot grow into one.
    beginnings: frozenset[str] = frozenset()

    @classmethod
    def of(cls, settings: RewriteSettings) -> _Lexicon:
        """The lexicon of `settings`' word lists, built once per distinct lists: every
        search asks, and building it (some 300 words keyed) costs more than the rewrite."""
        return _lexicon_of(
            tuple(settings.filler_zh) + tuple(settings.filler_en),
            tuple(settings.anaphora_zh) + tuple(settings.anaphora_en),
            tuple(settings.question_words),
            tuple((slot, tuple(words)) for slot, words in settings.slots.items()),
            tuple(settings.units_zh),
            tuple(settings.mention_markers_en),
        )

    @classmethod
    def build(
        cls,
        fillers: tuple[str, ...],
        anaphora: tuple[str, ...],
        question_words: tuple[str, ...],
        slots: tuple[tuple[str, tuple[str, ...]], ...],
        units_zh: tuple[str, ...],
        mention_markers: tuple[str, ...] = (),
    ) -> _Lexicon:
        entries: dict[str, tuple[_Kind, str | None]] = {}
        # Later lists win a tie: "呢" is both filler and a marker; "这个月" is a time.
        for word in fillers:
            entries[_key(word)] = ("filler", None)
        for word in anaphora:
            entries[_key(word)] = ("marker", None)
        for word in question_words:
            entries[_key(word)] = ("question", None)
        slot_words: list[tuple[str, str]] = []
        for slot, words in slots:
            for word in words:
                entries[_key(word)] = ("slot", slot)
                if any(is_cjk(ch) for ch in word):
                    slot_words.append((word, slot))
        entries.pop("", None)
        return cls(
            entries=entries,
            cjk_slot_words=tuple(sorted(slot_words, key=lambda pair: -len(pair[0]))),
            units=tuple(sorted(units_zh, key=len, reverse=True)),
            mention_markers=frozenset(_key(word) for word in mention_markers),
            beginnings=frozenset(key[:end] for key in entries for end in range(1, len(key) + 1)),
        )


_lexicon_of = functools.lru_cache(maxsize=16)(_Lexicon.build)


@dataclass(frozen=True)
class _Piece:
    """One token or matched phrase of a query, classified."""

    text: str
    kind: _Kind | Literal["term"]
    slot: str | None = None


def _key(text: str) -> str:
    return "".join(text.split()).casefold().replace("’", "'")


def _normalise(text: str) -> str:
    """NFKC (full-width to ASCII), invisible characters out, whitespace collapsed."""
    # Control and format characters are unprintable: a printable text has none to drop.
    if not text.isprintable():
        text = "".join(
            ch for ch in text if ch.isspace() or unicodedata.category(ch) not in _INVISIBLE
        )
    return " ".join(unicodedata.normalize("NFKC", text).split())


def warm_up() -> None:
    """Load the Chinese segmenter's dictionary now (about a second), so that the first
    Chinese query does not spend its deadline on it."""
    _jieba_cut()("预热")


@functools.cache
def _jieba_cut() -> Callable[[str], list[str]]:
    import jieba  # lazy: loading the dictionary takes about a second

    jieba.setLogLevel(logging.WARNING)
    cut: Callable[[str], list[str]] = jieba.lcut
    return cut


def _tokens(text: str, lexicon: _Lexicon) -> list[str]:
    """Latin-script tokens kept whole, Chinese runs segmented by jieba, numbers glued to units."""
    out: list[str] = []
    ends_in_number = False
    for chinese, chars in groupby(text, key=is_cjk):
        run = "".join(chars)
        if chinese:
            unit = next((u for u in lexicon.units if run.startswith(u)), None)
            if unit and ends_in_number:
                out[-1] += unit
                run = run[len(unit) :]
            for token in _jieba_cut()(run) if run else []:
                out.extend(_split_slot_affix(token, lexicon))
            ends_in_number = False
        else:
            words = list(_WORD.finditer(run))
            out.extend(match.group() for match in words)
            ends_in_number = (
                bool(words)
                and words[-1].end() == len(run)
                and bool(_NUMBER.fullmatch(words[-1].group()))
            )
    return out


def _split_slot_affix(token: str, lexicon: _Lexicon) -> list[str]:
    """Split a slot word off a longer jieba word: 今天天气 → 今天, 天气."""
    if len(token) < 3 or _key(token) in lexicon.entries:
        return [token]
    for word, _slot in lexicon.cjk_slot_words:
        if token.startswith(word):
            return [word, token[len(word) :]]
        if token.endswith(word):
            return [token[: -len(word)], word]
    return [token]


def _classify(tokens: list[str], lexicon: _Lexicon) -> list[_Piece]:
    """Match word-list entries, longest first, over runs of tokens."""
    shouting = not any(ch.islower() for token in tokens for ch in token)
    keys = [_key(token) for token in tokens]
    pieces: list[_Piece] = []
    i = 0
    while i < len(tokens):
        end = _longest_entry(keys, i, lexicon)
        acronym = len(tokens[i]) > 1 and tokens[i].isupper() and not shouting
        if end is None or (end == i + 1 and acronym):
            slot = _TIME if _YEAR.fullmatch(tokens[i]) else None
            pieces.append(_Piece(tokens[i], "term", slot))
            i += 1
            continue
        kind, slot = lexicon.entries["".join(keys[i:end])]
        pieces.append(_Piece(_join(tokens[i:end]), kind, slot))
        i = end
    return pieces


def _longest_entry(keys: list[str], i: int, lexicon: _Lexicon) -> int | None:
    """The end of the longest run of at most `_MAX_SPAN` tokens from `i` whose keys
    joined are an entry, None when there is none. The run grows one token at a time and
    stops once it is no entry's beginning: most tokens begin none."""
    end = None
    joined = ""
    for j in range(i + 1, min(len(keys), i + _MAX_SPAN) + 1):
        joined += keys[j - 1]
        if joined and joined not in lexicon.beginnings:
            break  # (an empty key, were there one, joins nothing: the run goes on)
        if joined in lexicon.entries:
            end = j
    return end


def _join(parts: list[str]) -> str:
    """Tokens back into text: a space between Latin-script neighbours only."""
    text = parts[0]
    for part in parts[1:]:
        text += part if is_cjk(text[-1]) or is_cjk(part[0]) else " " + part
    return text


def _distil(text: str, lexicon: _Lexicon) -> tuple[list[_Term], bool]:
    """The content terms of one text and whether it leans on an earlier turn."""
    pieces = _named_fillers(_classify(_tokens(text, lexicon), lexicon), lexicon)
    leans = False
    for i, piece in enumerate(pieces):
        if piece.kind != "marker":
            continue
        before = pieces[i - 1].kind if i > 0 else None
        after = pieces[i + 1].kind if i + 1 < len(pieces) else None
        content = ("term", "slot", "question")
        if not (before in content and after in content):  # else a conjunction: "Python and Java"
            leans = True
    terms = [
        _Term(piece.text, piece.slot, question=piece.kind == "question")
        for piece in pieces
        if piece.kind in ("term", "slot", "question")
    ]
    return [term for term, _ in _dedupe([(term, False) for term in terms])], leans


def _named_fillers(pieces: list[_Piece], lexicon: _Lexicon) -> list[_Piece]:
    """A filler word between an article and a content word is the name of a thing, as
    keywords and operators are named in documentation ("the with statement"): a term."""
    out = list(pieces)
    for i in range(1, len(pieces) - 1):
        before, piece, after = pieces[i - 1], pieces[i], pieces[i + 1]
        if (
            piece.kind == "filler"
            and " " not in piece.text
            and _key(before.text) in lexicon.mention_markers
            and after.kind == "term"
        ):
            out[i] = _Piece(piece.text, "term")
    return out


def _latest_salient_turn(context: Sequence[str], lexicon: _Lexicon) -> list[_Term]:
    """The terms of the most recent earlier turn that has any worth carrying."""
    for turn in reversed(context):
        terms, _ = _distil(_normalise(turn), lexicon)
        if any(term.salient for term in terms):
            return terms
    return []


def _carry(own: list[_Term], previous: list[_Term]) -> list[tuple[_Term, bool]]:
    """Earlier terms in their order, a query term taking the place of one of its slot,
    then the rest of the query's terms. The flag marks a carried term."""
    own_slots: dict[str, _Term] = {}
    for term in own:
        if term.slot:
            own_slots.setdefault(term.slot, term)
    own_keys = {term.key for term in own}
    merged: list[tuple[_Term, bool]] = []
    for term in previous:
        if term.slot in own_slots:
            merged.append((own_slots[term.slot], False))
        elif term.key in own_keys:
            merged.append((term, False))
        elif term.salient:
            merged.append((term, True))
    merged.extend((term, False) for term in own)
    return merged


def _dedupe(terms: list[tuple[_Term, bool]]) -> list[tuple[_Term, bool]]:
    """First occurrence wins, compared case-insensitively."""
    seen: set[str] = set()
    out = []
    for term, carried in terms:
        if term.key not in seen:
            seen.add(term.key)
            out.append((term, carried))
    return out


def _cap(terms: list[tuple[_Term, bool]], max_terms: int) -> list[tuple[_Term, bool]]:
    """At most `max_terms`, dropping carried terms (latest first) before the query's own."""
    terms = list(terms)
    while len(terms) > max_terms and any(carried for _, carried in terms):
        last = max(i for i, (_, carried) in enumerate(terms) if carried)
        del terms[last]
    return terms[:max_terms]
