"""Clean stage: turn what back ends send into plain, short, ad-free text.

Owns three rules and nothing else: HTML out of titles and snippets (`strip_html`,
reused by other stages), advertisements out of the result list, and snippets cut
to a length budget at a sentence end, never mid-sentence. It does not touch URLs,
dates or scores, and it does no I/O; settings come from `clean:` in sleuth.yaml.

>>> item = ResultItem(id="1", url=None, providers=["p"], title="<em>Python</em> &amp; you")
>>> clean([item], CleanSettings())[0].title
'Python & you'
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from functools import lru_cache, partial

import nh3
from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import ResultItem
from sleuth.text import CJK_RUN, sentence_prefix, sentence_spans

__all__ = ["AD_FLAG", "CleanSettings", "clean", "cut_snippet", "strip_html"]

#: Flag set on an advertisement that is kept because `drop_ads` is off.
AD_FLAG = "ad"

# Tags that separate words on a rendered page; nh3 removes them without leaving a
# space, which would glue "para</p><p>two" into "paratwo".
_WORD_BREAK_TAG = re.compile(
    r"<\s*/?\s*(?:br|p|div|li|tr|td|th|h[1-6]|ul|ol|table|blockquote|section|article)\b[^>]*>",
    re.IGNORECASE,
)
# After a Latin marker, a dash separates only with a space before it: "Ad - shop" is
# an ad, "Ad-free browsing" is not.
_AD_SEPARATOR = r"\s*[·•|｜:：»]|\s+[-–—]|\s*$"
_AD_OPEN = r"\[【(（「〔<《"
_AD_CLOSE = r"\]】)）」〕>》"
# The tags search back ends mark a query's words with, exactly as they send them; a text
# whose only markup they are needs no HTML parser (see `_without_highlighting`).
_HIGHLIGHT_TAG = re.compile(r'<(?:/?(?:em|b|strong|i|mark|span)|span class="searchmatch")>')
# Built once: `nh3.clean` builds its sanitiser anew on every call, which costs about as
# much as the cleaning itself (nh3 >= 0.3 has `Cleaner`; older versions fall back).
_strip_tags: Callable[[str], str] = (
    nh3.Cleaner(tags=set()).clean if hasattr(nh3, "Cleaner") else partial(nh3.clean, tags=set())
)


# Characters that show nothing and are not spaces, so `str.split` keeps them: a byte
# order mark (U+FEFF) pasted into a page, zero-width spaces and joiners, word joiners,
# soft hyphens. Bidirectional marks stay: they order right-to-left text.
_INVISIBLE = re.compile("[\ufeff\u200b\u200c\u200d\u2060\u00ad\u180e]")


class CleanSettings(BaseModel):
    """The `clean:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_snippet_chars: int = Field(
        default=300,
        ge=1,
        description=(
            "Snippets longer than this are cut after the last whole sentence that fits; "
            "a first sentence longer than this is kept whole, never cut mid-sentence."
        ),
    )
    ad_markers: list[str] = Field(
        default_factory=lambda: ["广告", "推广", "赞助", "Ad", "Ads", "Sponsored", "Promoted"],
        description=(
            "Labels that mark a result as an advertisement when a title or snippet starts "
            "with one as a standalone marker ('Ad · ...', '[Sponsored] ...', '推广：...'); "
            "matched case-insensitively, so 'Adobe' or 'Ad hoc networks' are not ads."
        ),
    )
    drop_ads: bool = Field(
        default=True,
        description=f"Drop advertisements; when false they are kept with the flag {AD_FLAG!r}.",
    )


def strip_html(text: str) -> str:
    """Plain text from an HTML fragment: tags out, entities decoded, whitespace collapsed.

    Tags such as <em> or <span class="searchmatch"> go and their text stays; script
    and style go with their content; invisible characters (U+FEFF, zero-width
    spaces) go too. The result is text, not HTML: escape it again
    before putting it into a page.

    >>> strip_html('<b>Tom</b> &amp; <span class="searchmatch">Jerry</span><script>x()</script>')
    'Tom & Jerry'
    """
    # Unprintable characters are all that nh3 or the invisible-character scan would
    # change besides tags and entities, and every white space but " " is one of them.
    printable = text.isprintable()
    if "<" in text or "&" in text:
        highlighted = _without_highlighting(text) if printable else None
        text = _strip_markup(text) if highlighted is None else highlighted
        printable = highlighted is not None or text.isprintable()
    # A scan finds none in most texts; str.translate with a mapping cost 50 us a snippet.
    # They are all format characters, which are unprintable: most texts need no scan.
    if not printable and _INVISIBLE.search(text):
        text = _INVISIBLE.sub("", text)
    elif printable and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text  # already collapsed: split and join would give it back
    return " ".join(text.split())


def _strip_markup(text: str) -> str:
    """What nh3 leaves of an HTML fragment, entities decoded: the general path."""
    return html.unescape(_strip_tags(_WORD_BREAK_TAG.sub(" ", text)))


def _without_highlighting(text: str) -> str | None:
    """`text` without its highlighting tags when they are its only markup (what search
    back ends mark the query's words with), else None. Exactly what `_strip_markup`
    gives for such a text: with no entity and no unprintable character, nh3 only
    drops these tags (its escaping of "<", ">" and "&" is undone by the unescape), at
    a quarter of the cost. `text` must be printable."""
    if "&" in text:
        return None
    bare = _HIGHLIGHT_TAG.sub("", text)
    return None if "<" in bare else bare


def cut_snippet(text: str, max_chars: int) -> str:
    """Keep as many whole leading sentences as fit in `max_chars` (at least the first).

    Sentence ends are 。！？ and . ! ? followed by space; "3.5" and "e.g." are not ends.

    >>> cut_snippet("第一句话。第二句话很长很长。", 6)
    '第一句话。'
    >>> cut_snippet("Version 3.5 is out. It is faster.", 25)
    'Version 3.5 is out.'
    """
    if len(text) <= max_chars:
        return text
    ends = _sentence_ends(text)
    fitting = [end for end in ends if end <= max_chars]
    # The cut's sentences are known now: summarize splits the same snippet.
    return sentence_prefix(text, fitting[-1] if fitting else ends[0])


def clean(items: Sequence[ResultItem], settings: CleanSettings) -> list[ResultItem]:
    """Cleaned copies of `items` in the same order, advertisements dropped (or flagged)."""
    ad_marker = _ad_pattern(tuple(settings.ad_markers)) if settings.ad_markers else None
    cleaned: list[ResultItem] = []
    for item in items:
        title = strip_html(item.title)
        snippet = strip_html(item.snippet)
        update: dict[str, object] = {}
        if title != item.title:
            update["title"] = title
        cut = cut_snippet(snippet, settings.max_snippet_chars)
        if cut != item.snippet:
            update["snippet"] = cut
        if ad_marker is not None and (ad_marker.match(title) or ad_marker.match(snippet)):
            if settings.drop_ads:
                continue
            if AD_FLAG not in item.flags:
                update["flags"] = [*item.flags, AD_FLAG]
        # An item already clean is passed on as it is: a copy would hold the same values.
        cleaned.append(item.model_copy(update=update) if update else item)
    return cleaned


def _sentence_ends(text: str) -> list[int]:
    """Offsets just past each sentence of `text` (an abbreviation does not end one)."""
    return [end for _, end in sentence_spans(text)] or [len(text)]


@lru_cache(maxsize=16)
def _ad_pattern(markers: tuple[str, ...]) -> re.Pattern[str]:
    """A matcher for an ad marker at the start of a text, compiled once per marker list.

    A marker counts when it stands alone: in brackets ("[Sponsored]"), or followed by
    a separator ("Ad · ", "推广：") or by the end. A Chinese marker may also be
    followed by a space ("广告 百度"); a Latin one may not ("Ad hoc networks").
    "广告法修订" is not an ad either: a Chinese word simply starts with those letters.
    """
    ordered = sorted(markers, key=len, reverse=True)
    any_marker = "|".join(re.escape(marker) for marker in ordered)
    chinese = "|".join(re.escape(marker) for marker in ordered if CJK_RUN.search(marker))
    alternatives = [
        rf"[{_AD_OPEN}]\s*(?:{any_marker})\s*[{_AD_CLOSE}]",
        rf"(?:{any_marker})(?={_AD_SEPARATOR})",
    ]
    if chinese:
        alternatives.append(rf"(?:{chinese})(?=\s)")
    return re.compile(rf"\s*(?:{'|'.join(alternatives)})", re.IGNORECASE)
