"""Dedupe stage: one result per page, however many back ends or URLs it came under.

Owns the three levels of sameness, applied in order:

1. the canonical URL (`canonical_url`: scheme and host case, http = https, `www.`,
   default ports, fragments, tracking and session parameters, trailing slash,
   query order);
2. the same title and the same opening of the snippet;
3. SimHash of title and snippet within a small Hamming distance, for texts long
   enough to judge; or, a little further apart, the same content word by word (the
   same text but for a site name, a snippet window, a cut or a date in front, and at
   most a couple of edited words);

except that levels 2 and 3 keep apart items whose texts disagree on a number, a
model, a name or a date (`sleuth.stages.results.dedupe_details`): templated pages are not
copies of each other.

Level 3 runs again on the pages' full text when they were read (`include: content`,
`dedupe_pages`): results whose page texts are within `page_simhash_max_distance`
merge, the same details keeping templated pages apart;

and how duplicates merge (`_merge`): the first-seen item's text, every provider and
its best position, the https URL, any date. Pure: no I/O, settings come from
`dedupe:` in sleuth.yaml.

>>> canonical_url("http://www.Example.com:80/a/?utm_source=x&b=2&a=1#top", DedupeSettings())
'https://example.com/a?a=1&b=2'
"""

from __future__ import annotations

import re
import struct
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from hashlib import blake2b
from itertools import compress
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import ResultItem
from sleuth.extract.models import ExtractedPage
from sleuth.stages.links import split_link
from sleuth.stages.results.dedupe_details import (
    compare_items,
    coverage_at_most,
    text_numbers,
    title_numbers,
)
from sleuth.text import tokens

__all__ = ["DedupeSettings", "canonical_url", "dedupe", "dedupe_pages", "hamming", "simhash"]

_DEFAULT_PORTS = {"http": 80, "https": 443}
_PERCENT_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")
# Characters read past a snippet's opening for the white space collapsed in it.
_OPENING_SLACK = 16

# SimHash adds the 64 bits of every token's hash as 64 counters at once: each hash
# is spread into a big integer with one 8-bit lane per hash bit, so summing the
# spread integers sums all 64 counters in one addition (see _simhash_of).
_BITS = 64
_LANE_CAPACITY = 255  # tokens a lane can count
_LANES = struct.Struct(f"<{_BITS}B")
_ONE_PER_LANE = int.from_bytes(b"\x01" * _BITS, "little")
_HIGH_BIT_TO_DIGIT = bytes.maketrans(bytes(range(256)), b"0" * 128 + b"1" * 128)
# ... and back: a hash written in binary digits, one byte per digit, is its spread
# integer (lane i holds bit i) once the digits "0"/"1" become the bytes 0/1.
_DIGIT_TO_LANE = bytes.maketrans(b"01", b"\x00\x01")
_bit_count = int.bit_count


class DedupeSettings(BaseModel):
    """The `dedupe:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tracking_params: list[str] = Field(
        default_factory=lambda: [
            "utm_*",
            "fbclid",
            "gclid",
            "dclid",
            "msclkid",
            "mc_cid",
            "mc_eid",
            "yclid",
            "spm",
            "ref",
            "ref_src",
            "source",
            "from",
            "share",
            "igshid",
            "_ga",
            "_gl",
        ],
        description=(
            "Query parameters that only say where a click came from; dropped from the "
            "canonical URL. Case-insensitive; a trailing * matches a prefix (utm_*)."
        ),
    )
    session_params: list[str] = Field(
        default_factory=lambda: [
            "sid",
            "sessionid",
            "session_id",
            "phpsessid",
            "jsessionid",
            "aspsessionid",
        ],
        description=(
            "Session identifiers dropped from the canonical URL, as query parameters "
            "or as path parameters (;jsessionid=...). Same matching as tracking_params."
        ),
    )
    snippet_prefix_chars: int = Field(
        default=200,
        ge=1,
        description=(
            "Level 2: items with the same title and the same first N snippet characters merge."
        ),
    )
    simhash_max_distance: int = Field(
        default=3,
        ge=0,
        le=64,
        description=(
            "Level 3: items merge when the SimHash Hamming distance of title+snippet is "
            "below this (strictly less); 0 turns level 3 off."
        ),
    )
    simhash_min_tokens: int = Field(
        default=8,
        ge=1,
        description=(
            "Level 3 only judges texts with at least this many tokens; "
            "shorter ones never merge by SimHash."
        ),
    )

    keep_apart_on_details: bool = Field(
        default=True,
        description=(
            "Levels 2 and 3 never merge items whose title or snippet disagree on a "
            "number, a model, a name or a date (templated pages: 128GB vs 256GB, two "
            "cities); false merges them on text similarity alone."
        ),
    )
    page_simhash_max_distance: int = Field(
        default=4,
        ge=0,
        le=64,
        description=(
            "Level 3 on the full text, when the results' pages were read (include "
            "content): items merge when the SimHash Hamming distance of their page texts "
            "is below this (strictly less; 3 bits or fewer by default, the bound Manku et "
            "al. chose for web pages) and, with keep_apart_on_details, the pages and "
            "their titles state the same numbers; 0 turns it off."
        ),
    )
    content_match_distance: int = Field(
        default=16,
        ge=0,
        le=64,
        description=(
            "Level 3, word by word: items whose SimHash distance is below this (and not "
            "below simhash_max_distance) merge when their texts are the same content "
            "(see content_min_coverage, content_max_edited_words) and agree on every "
            "detail; 0 turns it off."
        ),
    )
    content_min_coverage: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="Word by word: the share of the shorter text the other must hold.",
    )
    content_max_edited_words: int = Field(
        default=2,
        ge=0,
        description=(
            "Word by word: lower-case words that may differ away from the texts' ends "
            "(an edited copy: 'newest' for 'latest')."
        ),
    )


def canonical_url(url: str, settings: DedupeSettings) -> str:
    """The form of `url` under which the same page compares equal.

    Lower-cases scheme and host, reads http as https, drops `www.`, default ports,
    the fragment (except `#!` routes), tracking and session parameters (also
    `;jsessionid=...` in the path) and a trailing slash, upper-cases percent escapes
    and sorts the remaining query parameters. The path keeps its case. A URL that
    cannot be parsed comes back stripped but otherwise unchanged.

    >>> canonical_url("https://shop.example/Item;jsessionid=A1?sid=9&id=7", DedupeSettings())
    'https://shop.example/Item?id=7'
    """
    url = url.strip()
    try:
        parts = split_link(url)
    except ValueError:
        return url
    if parts.port_error:
        return url
    port = parts.port

    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".").removeprefix("www.")
    if ":" in host:
        host = f"[{host}]"
    netloc = host
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        netloc = f"{host}:{port}"
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "")
        netloc = f"{userinfo}@{netloc}"
    if scheme == "http":
        scheme = "https"

    path = parts.path
    # Only path parameters and a query have names to drop (most links have neither).
    if ";" in path:
        drop = _dropped_names(settings)
        segments = []
        for segment in path.split("/"):
            name, *params = segment.split(";")
            kept = [param for param in params if not drop(param.split("=", 1)[0])]
            segments.append(";".join([name, *kept]))
        path = "/".join(segments)
    if "%" in path:
        path = _PERCENT_ESCAPE.sub(lambda match: match.group().upper(), path)
    path = path.rstrip("/")

    query = ""
    if parts.query:
        drop = _dropped_names(settings)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        query = urlencode(sorted(pair for pair in pairs if not drop(pair[0])), quote_via=quote)
    fragment = parts.fragment if parts.fragment.startswith("!") else ""
    return _joined(scheme, netloc, path, query, fragment)


def _dropped_names(settings: DedupeSettings) -> _ParamMatcher:
    """Whether a query or path parameter's name is one `canonical_url` drops."""
    return _param_matcher(tuple(settings.tracking_params), tuple(settings.session_params))


def _joined(scheme: str, netloc: str, path: str, query: str, fragment: str) -> str:
    """`urlunsplit((scheme, netloc, path, query, fragment))`; a link with an authority,
    which nearly every one has, joined here without its argument checks."""
    if not netloc:
        return urlunsplit((scheme, netloc, path, query, fragment))
    if path and path[:1] != "/":
        path = "/" + path
    url = f"{scheme}://{netloc}{path}" if scheme else f"//{netloc}{path}"
    if query:
        url = f"{url}?{query}"
    if fragment:
        url = f"{url}#{fragment}"
    return url


def simhash(text: str) -> int:
    """The 64-bit SimHash of `text` over `sleuth.text.tokens`, each occurrence counted.

    Token hashes are blake2b digests, so the value is the same in every process
    (Python's `hash()` is salted per process). Empty text hashes to 0.

    >>> simhash("Python 3.13 released") == simhash("python   3.13 RELEASED")
    True
    """
    return _simhash_of(tokens(text))


def hamming(a: int, b: int) -> int:
    """How many bits differ between two fingerprints.

    >>> hamming(0b1011, 0b0001)
    2
    """
    return (a ^ b).bit_count()


def dedupe(items: Sequence[ResultItem], settings: DedupeSettings) -> list[ResultItem]:
    """One merged item per page, in the order each page was first seen.

    Items are grouped by any of the three levels (transitively: if A and B share a
    URL and B and C a title and opening, all three are one page); each group becomes
    its first item enriched by the others, see `_merge`.
    """
    parent = list(range(len(items)))

    def find(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    def union(a: int, b: int) -> None:
        root_a, root_b = find(a), find(b)
        if root_a != root_b:
            parent[max(root_a, root_b)] = min(root_a, root_b)

    canonical = [canonical_url(item.url, settings) if item.url else None for item in items]
    titles = [" ".join(item.title.split()).casefold() for item in items]
    # An item whose title no other has is the first with its title and opening: it
    # is compared with nothing, so its opening is not read.
    shared = {title for title, count in Counter(titles).items() if count > 1}
    first_by_key: dict[tuple[str, ...], int] = {}
    for index, (item, page, title) in enumerate(zip(items, canonical, titles, strict=True)):
        if page:
            union(first_by_key.setdefault(("url", page), index), index)
        if title not in shared:
            continue
        opening = _opening(item.snippet, settings.snippet_prefix_chars)
        if title and opening:
            holder = first_by_key.setdefault(("text", title, opening), index)
            if find(holder) == find(index):
                continue  # one page already (the same URL): nothing to compare
            if not _details_differ(items[holder], item, settings):
                union(holder, index)

    limit = settings.simhash_max_distance
    if limit > 0:
        indexes: list[int] = []
        fingerprints: list[int] = []
        # Shared pages repeat their title and snippet: each text is hashed once a call.
        by_text: dict[tuple[str, str], int | None] = {}
        for index, item in enumerate(items):
            key = (item.title, item.snippet)
            if key in by_text:
                fingerprint = by_text[key]
            else:
                # Title and snippet apart: rank tokenises them the same way and hits the cache.
                words = tokens(item.title) + tokens(item.snippet)
                fingerprint = by_text[key] = (
                    _simhash_of(words) if len(words) >= settings.simhash_min_tokens else None
                )
            if fingerprint is not None:
                indexes.append(index)
                fingerprints.append(fingerprint)
        wider = settings.content_match_distance
        # No pair this far apart merges by either test below: the cheapest check first.
        reach = max(limit, wider)
        # Each title's numbers, read once a call and only for items that come near another.
        numbers: dict[str, tuple[str, ...] | None] = {}
        details = settings.keep_apart_on_details
        for position, index in enumerate(indexes):
            fingerprint = fingerprints[position]
            # The earlier items within reach, found in one pass in C; few come within reach.
            near = list(
                compress(
                    range(position),
                    map(reach.__gt__, map(_bit_count, map(fingerprint.__xor__, fingerprints))),
                )
            )
            if not near:
                continue
            mine = _numbers_of_title(numbers, items[index].title) if details else None
            for place in near:
                other = indexes[place]
                if mine is not None:
                    theirs = _numbers_of_title(numbers, items[other].title)
                    if theirs is not None and mine != theirs:
                        continue  # titles that disagree on a number: two pages by both checks
                if find(other) == find(index):
                    continue  # one page already: the word-by-word check would change nothing
                if _bit_count(fingerprint ^ fingerprints[place]) < limit:
                    if not _details_differ(items[other], items[index], settings):
                        union(other, index)
                elif _same_content(items[other], items[index], settings):
                    union(other, index)

    groups: dict[int, list[int]] = {}
    for index in range(len(items)):
        groups.setdefault(find(index), []).append(index)
    return [
        _merge([items[i] for i in group], [canonical[i] for i in group])
        if len(group) > 1
        else items[group[0]]
        for group in groups.values()
    ]


def dedupe_pages(
    items: Sequence[ResultItem], pages: Mapping[str, ExtractedPage], settings: DedupeSettings
) -> list[ResultItem]:
    """Level 3 on full text: `items` whose pages (`pages`, by item id) were read and
    hold nearly the same text merged, in the order each was first seen.

    Only an item with `content` counts (its page was read and the content policy let
    it through); its page text must have `simhash_min_tokens` tokens. With
    `keep_apart_on_details`, pages that state different numbers (`text_numbers`), or
    whose titles do, stay apart however alike their texts: two pages of one template.
    The titles' and snippets' wording is not compared: a copy of an article often
    comes under a headline and a summary of its own.
    """
    limit = settings.page_simhash_max_distance
    if limit == 0:
        return list(items)
    read: list[tuple[int, int, frozenset[str]]] = []  # index, fingerprint, numbers
    for index, item in enumerate(items):
        page = pages.get(item.id)
        if item.content is None or page is None:
            continue
        words = tokens(page.text)
        if len(words) >= settings.simhash_min_tokens:
            read.append((index, _simhash_of(words), text_numbers(page.text)))
    first_of = list(range(len(items)))
    for position, (index, fingerprint, numbers) in enumerate(read):
        for other, other_fingerprint, other_numbers in read[:position]:
            if first_of[other] != other:
                continue  # merged into an earlier one, which this one meets too
            if (fingerprint ^ other_fingerprint).bit_count() >= limit:
                continue
            if settings.keep_apart_on_details:
                mine, theirs = title_numbers(items[index].title), title_numbers(items[other].title)
                if numbers != other_numbers or (None not in (mine, theirs) and mine != theirs):
                    continue
            first_of[index] = other
            break
    groups: dict[int, list[int]] = {}
    for index in range(len(items)):
        groups.setdefault(first_of[index], []).append(index)
    merged = []
    for group in groups.values():
        members = [items[i] for i in group]
        canonical = [canonical_url(item.url, settings) if item.url else None for item in members]
        merged.append(_merge(members, canonical) if len(group) > 1 else members[0])
    return merged


def _numbers_of_title(
    numbers: dict[str, tuple[str, ...] | None], title: str
) -> tuple[str, ...] | None:
    """`title_numbers(title)`, kept in `numbers` for the call: shared pages repeat titles."""
    if title in numbers:
        return numbers[title]
    found = numbers[title] = title_numbers(title)
    return found


def _opening(snippet: str, length: int) -> str:
    """The first `length` characters of the snippet with its white space collapsed,
    casefolded: `" ".join(snippet.split())[:length].casefold()`.

    Read from the snippet's start only: collapsed, any start of a text is a start of the
    whole text collapsed (a word cut in two is the start of that word), so once it is
    `length` long it is the same opening.
    """
    head = snippet[: length + _OPENING_SLACK]
    opening = " ".join(head.split())
    if len(opening) < length and len(head) < len(snippet):
        opening = " ".join(snippet.split())  # white space ran long: the whole text
    return opening[:length].casefold()


def _details_differ(a: ResultItem, b: ResultItem, settings: DedupeSettings) -> bool:
    """Whether two similar-looking items are distinct pages by a detail they disagree on."""
    if not settings.keep_apart_on_details:
        return False
    return compare_items(a.title, a.snippet, b.title, b.snippet).distinct


def _same_content(a: ResultItem, b: ResultItem, settings: DedupeSettings) -> bool:
    """Whether two items SimHash finds a little apart are one page's text word by word."""
    if coverage_at_most(a.title, a.snippet, b.title, b.snippet) < settings.content_min_coverage:
        return False  # too few words in common for any alignment: not worth aligning
    comparison = compare_items(a.title, a.snippet, b.title, b.snippet)
    return (
        not comparison.distinct
        and comparison.edited_words <= settings.content_max_edited_words
        and comparison.coverage >= settings.content_min_coverage
    )


def _merge(group: list[ResultItem], canonical: list[str | None]) -> ResultItem:
    """The first item, enriched by its duplicates.

    Keeps its text; unions providers (first-seen order) and flags; takes each
    provider's best (lowest) position; unions `fields`, the first value winning.
    Shows the cleanest link sent for the same page (https, then shortest), fills a
    URL (with its id and domain) when the first had none, and a publication date;
    a field so filled is no longer `missing`.
    """
    first, rest = group[0], group[1:]
    providers = list(dict.fromkeys(p for item in group for p in item.providers))
    sources = list(dict.fromkeys(url for item in group for url in item.sources))
    flags = list(dict.fromkeys(flag for item in group for flag in item.flags))
    ranks: dict[str, int] = {}
    fields: dict[str, Any] = {}
    for item in group:
        for provider, rank in item.ranks.items():
            ranks[provider] = min(rank, ranks.get(provider, rank))
        for name, value in item.fields.items():
            fields.setdefault(name, value)
    update: dict[str, Any] = {
        "providers": providers,
        "sources": sources,
        "ranks": ranks,
        "fields": fields,
        "flags": flags,
    }
    filled: set[str] = set()

    if first.url is None:
        donor = next((item for item in rest if item.url), None)
        if donor is not None:
            update |= {"url": donor.url, "id": donor.id, "domain": donor.domain or first.domain}
            filled.add("url")
    else:
        # Of the links sent for this same page, show the cleanest: https first, then the
        # shortest (fewest tracking parameters). Each is a URL a back end really sent.
        same_page = [
            item.url
            for item, page in zip(group, canonical, strict=True)
            if item.url and page == canonical[0]
        ]
        cleanest = min(
            same_page, key=lambda url: (not url.lower().startswith("https://"), len(url))
        )
        if cleanest != first.url:
            update["url"] = cleanest

    if first.published_at is None:
        dated = next((item for item in rest if item.published_at is not None), None)
        if dated is not None:
            update["published_at"] = dated.published_at
            if first.freshness == "unknown":
                update["freshness"] = dated.freshness
                update["dated_from"] = dated.dated_from
            filled.add("published_at")

    if filled & set(first.missing):
        missing = [name for name in first.missing if name not in filled]
        update |= {"missing": missing, "degraded": first.degraded and bool(missing)}
    return first.model_copy(update=update)


def _simhash_of(words: Sequence[str]) -> int:
    """SimHash of a token list: bit i is set when more than half the tokens' hashes have it."""
    count = len(words)
    threshold = count // 2 + 1  # "more than count / 2" in whole tokens
    if count <= _LANE_CAPACITY:
        # Bias every lane so that it reaches 128 exactly when its count reaches the
        # threshold; the lanes' high bits are then the fingerprint, read in C.
        lanes = sum(map(_spread_hash, words)) + (128 - threshold) * _ONE_PER_LANE
        digits = lanes.to_bytes(_BITS, "little").translate(_HIGH_BIT_TO_DIGIT)
        return int(digits[::-1], 2)
    counts = [0] * _BITS
    for start in range(0, count, _LANE_CAPACITY):
        lanes = sum(map(_spread_hash, words[start : start + _LANE_CAPACITY]))
        chunk = _LANES.unpack(lanes.to_bytes(_LANES.size, "little"))
        counts = [total + part for total, part in zip(counts, chunk, strict=True)]
    return sum(1 << bit for bit, total in enumerate(counts) if total >= threshold)


@lru_cache(maxsize=8192)
def _spread_hash(token: str) -> int:
    """The token's 64-bit blake2b hash (the digest read little-endian), one bit per
    8-bit lane: five C calls, no Python loop (about 15 % less than a sum of spread
    bytes; each new word of a search pays it once)."""
    digest = blake2b(token.encode(), digest_size=8).digest()
    digits = format(int.from_bytes(digest, "little"), "064b")  # bit 63 first
    return int.from_bytes(digits.encode().translate(_DIGIT_TO_LANE), "big")


@lru_cache(maxsize=16)
def _param_matcher(*lists: tuple[str, ...]) -> _ParamMatcher:
    return _ParamMatcher([name for names in lists for name in names])


class _ParamMatcher:
    """Whether a parameter name is one to drop: exact names, or prefixes ending in *."""

    def __init__(self, patterns: list[str]) -> None:
        lowered = [pattern.lower() for pattern in patterns]
        self.names = frozenset(p for p in lowered if not p.endswith("*"))
        self.prefixes = tuple(p[:-1] for p in lowered if p.endswith("*"))

    def __call__(self, name: str) -> bool:
        name = name.lower()
        return name in self.names or (bool(self.prefixes) and name.startswith(self.prefixes))
