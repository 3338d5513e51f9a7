"""Output safety: every text sleuth returns is plain text, and every link is http(s).

Owns the last word on what leaves sleuth: `safe_text` for titles, snippets, summary
sentences, fact labels, messages and provider extras; `safe_url` for links. Both are
pure, cheap and idempotent, so they run twice: on results right after the clean stage
(`sanitise_items`), so that every later stage, the cache and the citation spans work
on the text the agent will see, and on the whole response right before it is returned
(`sanitise_response`), so that cached answers, model-written summary sentences and
fallback messages pass the same gate. Nothing else here: which results are withheld is
`sleuth.stages.safety.content_policy`, instructions aimed at the agent are
`sleuth.stages.safety.injection`.

What the clean stage guarantees, and what it leaves: it strips real tags with nh3
(scripts and styles with their content) and decodes entities once. So text that a page
showed as escaped markup ("&lt;script&gt;", or a plain-text back end's literal
"<script>") leaves it as the characters "<script>", "&amp;lt;script&amp;gt;" leaves it
as "&lt;script&gt;", one unescape away from markup, "javascript:" in a Markdown link
survives, and links are not looked at. `safe_text` closes those gaps without deleting
what the text says:

1. Control characters (C0 and C1, except tab and line breaks) are removed.
2. Entities are decoded until none is left ("&amp;lt;" → "&lt;" → "<"), so nothing in
   the result changes when a renderer unescapes it once more.
3. A "<" that would open a tag, an end tag, a comment or a processing instruction ("<"
   and then a letter, "/", "!" or "?") becomes "‹" (U+2039): "<script>" reads
   "‹script>" and is text in any HTML, Markdown or terminal renderer. A "<" before a
   space or a digit ("a < b", "<5 ms") is not markup and stays.
4. A javascript:, vbscript: or livescript: scheme, also spelled with spaces or tabs
   between its letters ("java\\tscript:"), and a data: scheme before a media type get
   "∶" (U+2236) for their colon, so no renderer makes a link of them.
5. An event-handler attribute ("onerror=") gets "꞊" (U+A78A) for its "=": text pasted
   unquoted into a tag cannot add one.
6. nh3's HTML5 tokenizer then confirms that no markup is left; should it find any,
   every "<" is replaced.

The stand-ins look like what they replace and survive NFKC normalisation (full-width
"＜" would turn back into "<"); each is one character for one. Escaping for the output
format (HTML attribute, JSON) stays the renderer's job: safe text has no markup, but
may hold a lone "&", ">" or quotes.

>>> safe_text("&lt;img src=x onerror=alert(1)&gt; 北京烤鸭")
'‹img src=x onerror꞊alert(1)> 北京烤鸭'
>>> safe_url("javascript:alert(1)") is None
True
>>> safe_url('https://example.org/a"onmouseover="x')
'https://example.org/a%22onmouseover=%22x'
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import nh3

from sleuth.contract import (
    Degradation,
    ErrorInfo,
    Fact,
    ProjectedItem,
    ResultItem,
    SearchResponse,
    SummarySentence,
)
from sleuth.stages.links import split_link

__all__ = [
    "UNSAFE_URL_FLAG",
    "safe_text",
    "safe_url",
    "sanitise_extras",
    "sanitise_item",
    "sanitise_items",
    "sanitise_projected",
    "sanitise_response",
]

#: Flag set on an item whose link was dropped because it was not a safe http(s) URL.
UNSAFE_URL_FLAG = "unsafe_url_removed"

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Deeper nesting than this is an attack, not a page: what is left is cut harder.
_MAX_DECODES = 8
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
_TAG_STAND_IN = "\u2039"  # ‹
_SCHEME = re.compile(
    r"(?:j\s*a\s*v\s*a|v\s*b|l\s*i\s*v\s*e)\s*s\s*c\s*r\s*i\s*p\s*t\s*:"
    r"|d\s*a\s*t\s*a\s*:(?=\s*[a-z]+/)",
    re.IGNORECASE,
)
_COLON_STAND_IN = "\u2236"  # ∶
_HANDLER = re.compile(r"\bon[a-z]{3,}\s*=(?!=)", re.IGNORECASE)
_EQUALS_STAND_IN = "\ua78a"  # ꞊

# Links: what WHATWG URL parsing trims at both ends and deletes inside.
_URL_TRIM = "".join(chr(code) for code in range(0x21))
_URL_DELETED = str.maketrans("", "", "\t\n\r")
_HAS_URL_DELETED = re.compile("[\t\n\r]")
# Characters that end an HTML attribute or start markup: percent-encoded in a link.
_URL_ENCODED = str.maketrans({ch: f"%{ord(ch):02X}" for ch in "\"'<>`\\{}|^ "})
_HAS_URL_ENCODED = re.compile("[\"'<>`\\\\{}|^ ]")
# In the authority they mean that browsers and Python would disagree about the host.
_BAD_AUTHORITY = frozenset("\"'<>`\\{}|^ ")


def safe_text(text: str) -> str:
    """`text` as plain text with no markup, no script link and no event handler.

    Idempotent: `safe_text(safe_text(t)) == safe_text(t)`. See the module docstring.

    >>> safe_text("<scr<script>ipt>alert(1)</script>")
    '‹scr‹script>ipt>alert(1)‹/script>'
    >>> safe_text("jav&#x61;script&colon;alert(1) and x < 3")
    'javascript∶alert(1) and x < 3'
    """
    if not text:
        return text
    # Control characters are unprintable: a printable text (most are) has none to remove.
    if not text.isprintable():
        text = _CONTROL.sub("", text)
    if "&" in text:
        text = _decoded(text)
    if "<" in text:
        text = _TAG_OPEN.sub(_TAG_STAND_IN, text)
    if ":" in text:
        text = _SCHEME.sub(_colon_stand_in, text)
    if "=" in text:
        text = _HANDLER.sub(_equals_stand_in, text)
    if "<" in text and nh3.is_html(text):  # a tokenizer quirk the rules above missed
        text = text.replace("<", _TAG_STAND_IN)
    return text


def safe_url(url: str | None, *, allow_file: bool = False) -> str | None:
    """`url` when it is an absolute http or https link with a host (or, with
    `allow_file`, a `file:` link to a local path: the knowledge base's sections),
    characters that could end an HTML attribute percent-encoded; None for anything else.

    Entities are not decoded (a query string's "&copy=1" is not "©"): a link that is
    only a link after decoding ("javascript&colon;...") has no http(s) scheme and goes.

    >>> safe_url(" HTTPS://例子.cn/搜索?q=a b ")
    'HTTPS://例子.cn/搜索?q=a%20b'
    >>> [safe_url(u) for u in ("java\\tscript:alert(1)", "//evil.example/", "http:x")]
    [None, None, None]
    >>> local = "file:///srv/docs/caching.md#ttl"
    >>> safe_url(local), safe_url(local, allow_file=True)
    (None, 'file:///srv/docs/caching.md#ttl')
    """
    if url is None:
        return None
    # A regex scan first: most links need neither table, and a translate costs 10x.
    text = url.strip(_URL_TRIM)
    if _HAS_URL_DELETED.search(text):
        text = text.translate(_URL_DELETED)
    if not text.isprintable() and _CONTROL.search(text):
        return None
    try:
        parts = split_link(text)
    except ValueError:
        return None
    if parts.port_error:  # a port out of range or not a number
        return None
    host = parts.hostname
    scheme = parts.scheme.lower()
    # file: links run nothing; they name the local knowledge base's files (no host).
    local_file = allow_file and scheme == "file" and not host and parts.path
    if not local_file and (scheme not in ("http", "https") or not host):
        return None
    if not _BAD_AUTHORITY.isdisjoint(parts.netloc):
        return None
    return text.translate(_URL_ENCODED) if _HAS_URL_ENCODED.search(text) else text


def sanitise_item(item: ResultItem, *, allow_file: bool = False, extras: bool = True) -> ResultItem:
    """`item` with safe texts and links. A link that is not safe is dropped, never
    repaired or guessed: `url` becomes null, the item `degraded` with `url` in
    `missing` and the flag `unsafe_url_removed`.

    With `extras=False` the values of the provider extras (`fields`) are left for
    `sanitise_extras`, unless a name of one is not safe text already (then all are
    made safe here): de-duplication merges extras by name, so the names must be the
    ones it would see after sanitising, and the values it only copies.

    >>> item = ResultItem(id="1", url="javascript:alert(1)", providers=["p"], title="<b>x")
    >>> clean = sanitise_item(item)
    >>> clean.title, clean.url, clean.degraded, clean.missing, clean.flags
    ('‹b>x', None, True, ['url'], ['unsafe_url_removed'])
    """
    url = safe_url(item.url, allow_file=allow_file)
    # Most items are clean already: copy only what changed (a copy costs more than the checks).
    update: dict[str, Any] = {}
    title, snippet = safe_text(item.title), safe_text(item.snippet)
    if title != item.title:
        update["title"] = title
    if snippet != item.snippet:
        update["snippet"] = snippet
    if url != item.url:
        update["url"] = url
    if item.domain is not None and (domain := safe_text(item.domain)) != item.domain:
        update["domain"] = domain
    # The item's own link is most often its only source: judged once.
    sources = _safe_urls(item.sources, allow_file=allow_file, known=(item.url, url))
    if sources != item.sources:
        update["sources"] = sources
    if extras or not all(map(_is_safe_name, item.fields)):
        fields = _safe_value(item.fields)
        if fields != item.fields:
            update["fields"] = fields
    if item.url is not None and url is None:
        update.update(_url_dropped(item.missing, item.flags))
    return item.model_copy(update=update) if update else item


def sanitise_items(
    items: Sequence[ResultItem], local_providers: Collection[str] = (), *, extras: bool = True
) -> list[ResultItem]:
    """`sanitise_item` over `items`, in order; `file:` links are kept only on items that
    come from `local_providers` alone (a web back end's file: link is dropped).
    `extras=False`: the extras' values are left for `sanitise_extras` (see `sanitise_item`)."""
    return [
        sanitise_item(
            item,
            allow_file=bool(item.providers) and all(p in local_providers for p in item.providers),
            extras=extras,
        )
        for item in items
    ]


def sanitise_extras(items: Sequence[ResultItem]) -> list[ResultItem]:
    """`items` with the values of their provider extras made safe: what
    `sanitise_items(..., extras=False)` left, once for the results that are shown.
    Idempotent, so extras already made safe (merged with others or not) stay as they are.

    >>> item = ResultItem(id="1", url=None, providers=["p"], fields={"note": "&lt;i&gt;x"})
    >>> sanitise_extras([item])[0].fields
    {'note': '‹i>x'}
    """
    safe: list[ResultItem] = []
    for item in items:
        fields = _safe_value(item.fields)
        safe.append(item.model_copy(update={"fields": fields}) if fields != item.fields else item)
    return safe


def sanitise_projected(item: ProjectedItem, *, allow_file: bool = False) -> ProjectedItem:
    """A projected result with safe texts and links, its projection kept: only fields
    it carries are touched, and a dropped link adds `degraded` and `missing`."""
    present = item.model_fields_set
    update: dict[str, Any] = {}
    for name in ("title", "snippet", "domain"):
        value = getattr(item, name)
        if name in present and isinstance(value, str):
            update[name] = safe_text(value)
    if "sources" in present and item.sources is not None:
        update["sources"] = _safe_urls(item.sources, allow_file=allow_file)
    if "fields" in present and item.fields is not None:
        update["fields"] = _safe_value(item.fields)
    if "url" in present:
        update["url"] = safe_url(item.url, allow_file=allow_file)
        if item.url is not None and update["url"] is None:
            dropped = _url_dropped(item.missing or [], item.flags or [])
            update.update(dropped if "flags" in present else _without_flags(dropped))
    return item.model_copy(update=update) if update else item


def sanitise_response(response: SearchResponse, *, allow_file: bool = False) -> SearchResponse:
    """The whole response through the gate: results, summary sentences, fact labels,
    degradation reasons and error messages (which can quote a provider's body).
    `allow_file` keeps `file:` links (for results already gated by `sanitise_items`).

    The echoed `query` and `rewritten_query` are left as they are: they are the
    caller's own words, which the guard stage has already cleaned.
    """
    return response.model_copy(
        update={
            "results": [
                sanitise_projected(item, allow_file=allow_file) for item in response.results
            ],
            "summary": [_safe_sentence(sentence) for sentence in response.summary],
            "facts": [_safe_fact(fact) for fact in response.facts],
            "degradations": [_safe_degradation(d) for d in response.degradations],
            "errors": [_safe_error(error) for error in response.errors],
        }
    )


def _decoded(text: str) -> str:
    """`text` with entities decoded until a further decoding changes nothing."""
    for _ in range(_MAX_DECODES):
        decoded = html.unescape(text)
        if decoded == text:
            return text
        text = _CONTROL.sub("", decoded)  # "&#0;" and friends decode to controls
    # Still decoding after this many rounds: drop the ampersands that keep it going.
    return text.replace("&", "") if html.unescape(text) != text else text


def _colon_stand_in(match: re.Match[str]) -> str:
    # Both alternatives end at the colon (data:'s media type is only looked ahead at).
    return match.group(0)[:-1] + _COLON_STAND_IN


def _equals_stand_in(match: re.Match[str]) -> str:
    return match.group(0)[:-1] + _EQUALS_STAND_IN


def _safe_urls(
    urls: Sequence[str],
    *,
    allow_file: bool = False,
    known: tuple[str | None, str | None] = (None, None),
) -> list[str]:
    """`safe_url` of each of `urls`, the unsafe ones left out; `known` is one link
    already judged, with its verdict."""
    link, verdict = known
    found = (verdict if url == link else safe_url(url, allow_file=allow_file) for url in urls)
    return [safe for safe in found if safe is not None]


def _safe_value(value: Any) -> Any:
    """Provider extras with every string made safe, keys included."""
    # Exact types first: most extras are plain str, dict and list, and an isinstance
    # check against the Mapping ABC costs several times more.
    kind = type(value)
    if kind is str:
        return safe_text(value)
    if kind is dict:
        return {safe_text(str(key)): _safe_value(inner) for key, inner in value.items()}
    if kind is list:
        return [_safe_value(inner) for inner in value]
    if kind in (int, float, bool) or value is None:
        return value
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, Mapping):
        return {safe_text(str(key)): _safe_value(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return [_safe_value(inner) for inner in value]
    return value


def _is_safe_name(name: object) -> bool:
    """Whether an extra's name is a string `safe_text` leaves as it is."""
    # The test of safe_text's own skips first: no scan runs on most names.
    if type(name) is not str:
        return False
    if name.isprintable() and not ("&" in name or "<" in name or ":" in name or "=" in name):
        return True
    return safe_text(name) == name


def _url_dropped(missing: Sequence[str], flags: Sequence[str]) -> dict[str, Any]:
    return {
        "degraded": True,
        "missing": list(missing) if "url" in missing else [*missing, "url"],
        "flags": list(flags) if UNSAFE_URL_FLAG in flags else [*flags, UNSAFE_URL_FLAG],
    }


def _without_flags(update: dict[str, Any]) -> dict[str, Any]:
    # A projection without `flags` stays without: `missing` already says what went.
    return {key: value for key, value in update.items() if key != "flags"}


def _safe_sentence(sentence: SummarySentence) -> SummarySentence:
    return sentence.model_copy(update={"text": safe_text(sentence.text)})


def _safe_fact(fact: Fact) -> Fact:
    unit = None if fact.unit is None else safe_text(fact.unit)
    return fact.model_copy(update={"attribute": safe_text(fact.attribute), "unit": unit})


def _safe_degradation(degradation: Degradation) -> Degradation:
    return degradation.model_copy(update={"reason": safe_text(degradation.reason)})


def _safe_error(error: ErrorInfo) -> ErrorInfo:
    return error.model_copy(update={"message": safe_text(error.message)})
