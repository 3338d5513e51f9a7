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
snippet, or a direct answer such as a calculator result) is ranked first when it
has a title or an answer; it is built here with the small alias table below,
because a `FieldMapping` has one result path. Its link is used only when SerpApi
sent one. Organic `date` is whatever Google shows ("Oct 7, 2024", "3 days ago"),
so it stays an extra and `published_at` is left empty.

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
    return _answer_box_hits(payload) + organic


def _nothing_found(payload: Mapping[str, Any]) -> bool:
    """True for a success page without organic results (only an answer box, say)."""
    state = lookup(payload, "search_information.organic_results_state")
    if isinstance(state, str) and state.strip().lower() == _FULLY_EMPTY:
        return True
    return bool(_answer_box_hits(payload))


def _answer_box_hits(payload: Mapping[str, Any]) -> list[RawHit]:
    """The answer box as a first hit, or nothing when it has no title and no answer."""
    box = payload.get("answer_box")
    if isinstance(box, list):  # the docs' structure overview shows a list, examples an object
        box = next((item for item in box if isinstance(item, Mapping)), None)
    if not isinstance(box, Mapping):
        return []

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
