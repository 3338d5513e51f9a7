"""SerpApi's Google Search API (`engine=google`) as a provider.

Request: `GET https://serpapi.com/search?engine=google&q=…&api_key=…&num=N&hl=…&lr=…
[&tbs=qdr:w|qdr:m|qdr:y]`. SerpApi documents only the `api_key` query parameter for
authentication, so the key travels in the URL: it never goes into a header, and
nothing here echoes it into an error message. `num` is sent as documented, but
SerpApi notes that Google stopped honouring it in September 2025, so a call yields
one results page (about ten) and `max_results` is 10.

Response (https://serpapi.com/search-api, https://serpapi.com/organic-results):

    {"search_metadata": {"id": "…", "status": "Success", "json_endpoint": "…", …},
     "search_parameters": {"engine": "google", "q": "…", "hl": "en", …},
     "search_information": {"query_displayed": "…", "total_results": 123,
                            "organic_results_state": "Results for exact spelling"},
     "answer_box": {"type": "organic_result", "title": "…", "link": "…",
                    "snippet": "…", "date": "Oct 7, 2024", …},       # sometimes
     "organic_results": [{"position": 1, "title": "…", "link": "…",
                          "displayed_link": "…", "snippet": "…", "date": "…",
                          "snippet_highlighted_words": ["…"], "source": "…"}],
     "related_questions": […], "pagination": {…}, "serpapi_pagination": {…}}

Organic results are read through the mapping file. The answer box (a featured
snippet, or a direct answer such as a calculator result; every object when SerpApi
sends a list, or `answer_box_list`) is ranked first when it has a title or an
answer; it is built here with the small alias table below, because a `FieldMapping`
has one result path. Its link is used only when SerpApi sent one. The knowledge
graph (`knowledge_graph`: `title`, `type`, `description`, `source.{name,link}` and
facts such as `developer` or `first_appeared`) follows as a result whose facts are
in `fields.attributes`; news (`top_stories`, and `news_results` of a news search)
follow the organic results, each with `fields.section` saying where it came from.

`date` is what Google shows: a date ("Oct 7, 2024", "2024年10月7日") or an age ("3
days ago"). It stays in the extras as sent and becomes `published_at` when it reads
as a date: an age only against `search_metadata.created_at`, the time SerpApi ran
the search, never against the time sleuth reads the body (a cached or replayed body
would look fresher than it is); a body without `created_at` keeps `date` as an extra
only.

Errors (https://serpapi.com/api-status-and-error-codes, /search-errors) are
`{"error": "…"}`: 401 "Invalid API key. …", 429 "Your account has run out of
searches." or the hourly throughput limit, 400 for a bad parameter, 503 with
`search_metadata.status: "Error"`. A search Google answered with nothing is a
success: HTTP 200, `"error": "Google hasn't returned any results for this query."`,
`search_information.organic_results_state: "Fully empty"`, no `organic_results`;
that is an empty list here, not an error.

Options (`providers.serpapi.options`): `hl` and `lr` replace the language defaults
(`lr: ""` searches every language); `google_domain`, `gl`, `location`, `device`,
`safe` and `no_cache` are passed through when set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sleuth.contract import TimeRange
from sleuth.errors import (
    AuthFailed,
    BadResponse,
    MissingApiKey,
    ProviderError,
    ProviderRejected,
    ProviderUnavailable,
    QuotaExceeded,
    from_status,
)
from sleuth.providers.base import (
    HttpRequest,
    Provider,
    ProviderInfo,
    ProviderQuery,
    ProviderSettings,
    RawHit,
    expect_object,
    retry_after_s,
    text_or_none,
)
from sleuth.providers.mapping import FieldMapping, hit_from, lookup, records
from sleuth.stages.verify.dates import DateSettings, find_date

INFO = ProviderInfo(
    name="serpapi",
    docs_url="https://serpapi.com/search-api",
    needs_key=True,
    time_range=True,
    domain_filter=True,
    language=True,
    query_style="keywords",
    max_results=10,
)

DEFAULT_URL = "https://serpapi.com/search"
# Google's `tbs` (to be searched) quick date ranges; SerpApi passes `tbs` through.
_TIME_RANGES: dict[TimeRange, str] = {
    "past_week": "qdr:w",
    "past_month": "qdr:m",
    "past_year": "qdr:y",
}
# `hl` from https://serpapi.com/google-languages, `lr` from /google-lr-languages.
_HL = {"zh": "zh-cn", "en": "en"}
_LR = {"zh": "lang_zh-CN", "en": "lang_en"}
_PASSTHROUGH_OPTIONS = ("google_domain", "gl", "location", "device", "safe", "no_cache")

# The answer box has no single shape (https://serpapi.com/direct-answer-box-api): a
# featured snippet carries title/link/snippet, a short answer `answer`, a calculator
# or converter only `result`. First present value wins, as in a mapping file.
ANSWER_BOX_ALIASES: dict[str, tuple[str, ...]] = {
    "title": ("title",),
    "snippet": ("answer", "snippet", "result"),
    "url": ("link",),
}
_ANSWER_BOX_EXTRAS = ("date", "displayed_link")

_NO_RESULTS = "hasn't returned any results"
_FULLY_EMPTY = "fully empty"


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey(
            "providers.serpapi needs an API key (https://serpapi.com/manage-api-key)",
            provider=INFO.name,
        )
    options = settings.options
    params = {
        "engine": "google",
        "q": _with_sites(query.text, query.domain_filter),
        "api_key": settings.api_key,
        "num": str(max(1, min(query.max_results, INFO.max_results))),
    }
    for name, defaults in (("hl", _HL), ("lr", _LR)):
        value = options[name] if name in options else defaults.get(query.language)
        if value:
            params[name] = str(value)
    if query.time_range in _TIME_RANGES:
        params["tbs"] = _TIME_RANGES[query.time_range]
    for name in _PASSTHROUGH_OPTIONS:
        value = options.get(name)
        if value is not None and value != "":
            params[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return HttpRequest(
        method="GET",
        url=settings.base_url or DEFAULT_URL,
        params=params,
        headers={"Accept": "application/json"},
    )


def _with_sites(text: str, domains: tuple[str, ...]) -> str:
    """The query restricted with Google's `site:` operator, which SerpApi documents for `q`."""
    sites = [f"site:{domain.strip()}" for domain in domains if domain.strip()]
    return f"{text} {' OR '.join(sites)}" if sites else text


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    error = body.get("error") if isinstance(body, Mapping) else None
    if isinstance(error, str) and error.strip():
        if 200 <= status < 300 and _NO_RESULTS in error:
            return _answer_box_hits(body)
        raise _api_error(error, status, headers, body)
    if not 200 <= status < 300:
        raise _api_error("", status, headers, body)
    payload = expect_object(INFO.name, body)
    found = records(mapping, payload)
    if found is None:
        if lookup(payload, mapping.results) is None and _nothing_found(payload):
            found = []
        else:
            raise BadResponse(
                f"serpapi answered JSON whose `{mapping.results}` is not a list",
                provider=INFO.name,
                http_status=status,
            )
    organic = [hit_from(mapping, entry) for entry in found if isinstance(entry, Mapping)]
    hits = [
        *_answer_box_hits(payload),
        *_knowledge_graph_hits(payload),
        *organic,
        *_news_hits(payload),
    ]
    searched_at = _created_at(payload)
    return [_dated(hit, searched_at) for hit in hits]


def _nothing_found(payload: Mapping[str, Any]) -> bool:
    """True for a success page without organic results (only an answer box, a news
    search's `news_results`, say)."""
    state = lookup(payload, "search_information.organic_results_state")
    if isinstance(state, str) and state.strip().lower() == _FULLY_EMPTY:
        return True
    return bool(_answer_box_hits(payload) or _knowledge_graph_hits(payload) or _news_hits(payload))


def _answer_box_hits(payload: Mapping[str, Any]) -> list[RawHit]:
    """Each answer box with a title or an answer, first; none when none has text."""
    boxes: list[Any] = []
    for key in ("answer_box", "answer_box_list"):
        value = payload.get(key)
        # the docs' structure overview shows a list, the examples an object
        boxes.extend(value if isinstance(value, list) else [value])
    return [hit for box in boxes if isinstance(box, Mapping) for hit in _answer_box_hit(box)]


def _answer_box_hit(box: Mapping[str, Any]) -> list[RawHit]:
    def text(name: str) -> str | None:
        for alias in ANSWER_BOX_ALIASES[name]:
            value = text_or_none(box.get(alias))
            if value is not None:
                return value.strip()
        return None

    title, snippet = text("title"), text("snippet")
    if title is None and snippet is None:  # e.g. a weather box: no text to show
        return []
    fields: dict[str, Any] = {"answer_box": True}
    for name in ("type", *_ANSWER_BOX_EXTRAS):
        value = text_or_none(box.get(name))
        if value is not None:
            fields["answer_box_type" if name == "type" else name] = value
    return [RawHit(url=text("url"), title=title, snippet=snippet, fields=fields)]


# Knowledge graph keys that are links, ids or pictures, not facts to show.
_KG_SKIPPED = frozenset({"title", "type", "description", "source", "kgmid", "entity_type"})


def _knowledge_graph_hits(payload: Mapping[str, Any]) -> list[RawHit]:
    """The knowledge graph panel as one hit: its description, its source's link, its
    one-line facts (`developer: Python Software Foundation`) in `fields.attributes`."""
    graph = payload.get("knowledge_graph")
    if not isinstance(graph, Mapping):
        return []
    title = text_or_none(graph.get("title"))
    description = text_or_none(graph.get("description"))
    if title is None and description is None:
        return []
    given = graph.get("source")
    source: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    fields: dict[str, Any] = {"knowledge_graph": True}
    for name, value in (("kg_type", graph.get("type")), ("source_name", source.get("name"))):
        shown = text_or_none(value)
        if shown is not None:
            fields[name] = shown.strip()
    attributes = {
        key: value.strip()
        for key, value in graph.items()
        if key not in _KG_SKIPPED
        and not key.endswith(("_link", "_links", "_images", "_image", "thumbnail"))
        and isinstance(value, str)
        and value.strip()
    }
    if attributes:
        fields["attributes"] = attributes
    url = text_or_none(source.get("link"))
    return [
        RawHit(
            url=url.strip() if url else None,
            title=title.strip() if title else None,
            snippet=description.strip() if description else None,
            fields=fields,
        )
    ]


def _news_hits(payload: Mapping[str, Any]) -> list[RawHit]:
    """News the page shows (`top_stories`) or a news search returns (`news_results`)."""
    hits = []
    for section in ("top_stories", "news_results"):
        entries = payload.get(section)
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, Mapping):
                continue
            link, title = text_or_none(entry.get("link")), text_or_none(entry.get("title"))
            if link is None or title is None:
                continue  # a story cluster's heading without a page of its own
            source = entry.get("source")
            if isinstance(source, Mapping):
                source = source.get("name")
            fields: dict[str, Any] = {"section": section}
            for name, value in (("source", source), ("date", entry.get("date"))):
                shown = text_or_none(value)
                if shown is not None:
                    fields[name] = shown.strip()
            snippet = text_or_none(entry.get("snippet"))
            hits.append(
                RawHit(
                    url=link.strip(),
                    title=title.strip(),
                    snippet=snippet.strip() if snippet else None,
                    fields=fields,
                )
            )
    return hits


def _created_at(payload: Mapping[str, Any]) -> datetime | None:
    """When SerpApi ran the search: `search_metadata.created_at`, "2024-10-29 11:02:08 UTC"."""
    value = lookup(payload, "search_metadata.created_at")
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().removesuffix("UTC").strip())
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _dated(hit: RawHit, searched_at: datetime | None) -> RawHit:
    """`published_at` from the hit's `date` extra when it reads as one (see the module
    docstring); the extra stays as sent."""
    shown = hit.fields.get("date")
    if hit.published_at is not None or not isinstance(shown, str) or searched_at is None:
        return hit
    found = find_date("", shown, None, searched_at, _DATES)
    if found is None:
        return hit
    return replace(hit, published_at=found.at.isoformat())


# Google's date stamps: an age counts wherever it stands (the field is only a date).
_DATES = DateSettings(fields=("snippet",), relative_needs_stamp=False)


def _api_error(error: str, status: int, headers: Mapping[str, str], body: Any) -> ProviderError:
    """The contract error for a SerpApi error body (or a non-2xx answer without one)."""
    retry_after = retry_after_s(headers)
    text = error or (body if isinstance(body, str) else str(body))
    detail = " ".join(text.split())[:200]
    lowered = detail.lower()
    kind: type[ProviderError] | None = None
    if "invalid api key" in lowered or status == 401:
        kind = AuthFailed
    elif "run out of searches" in lowered or "searches for the month have run out" in lowered:
        kind = QuotaExceeded
    elif 200 <= status < 300:
        failed = lookup(body, "search_metadata.status") == "Error"
        kind = ProviderUnavailable if failed else ProviderRejected
    if kind is None:
        return from_status(INFO.name, status, detail, retry_after)
    return kind(
        f"serpapi answered HTTP {status}: {detail}"[:500],
        provider=INFO.name,
        http_status=status,
        retry_after_s=retry_after,
    )


PROVIDER = Provider(INFO, build_request, parse_response)
