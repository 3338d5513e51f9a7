"""You.com Web Search API (`GET https://ydc-index.io/v1/search`) as a provider.

Request (the Web Search API overview and quickstart): `GET
https://ydc-index.io/v1/search?query=…&count=10` with `X-API-Key: …`, and

    freshness=week        # only with a time range (day, week, month, year)
    language=ZH           # the query's language (BCP 47)

`count` is 1 to 100 per section. There is no documented domain filter in what was
read, so domain filters are left to the gateway.

Response (the quickstart's example):

    {"results": {"web": [{"url": "…", "title": "…", "description": "…",
                          "snippets": ["…"], "page_age": "2025-10-01T00:00:00",
                          "favicon_url": "…"}],
                 "news": [{"url": "…", "title": "…", "description": "…",
                           "page_age": "…", "thumbnail_url": "…"}]},
     "metadata": {"query": "…", "search_uuid": "…", "latency": 0.38}}

`results.news` only appears when You.com reads news intent into the query; its items
are pages too and follow the web results, with `fields.section: "news"`. `page_age`
is the publication time (as Brave's field of the same name). The first of `snippets`
(the query-aware excerpt) is the snippet, `description` when there is none.

Errors: no error body is documented in what was read, so the HTTP status decides:
401/403 → `AuthFailed`, 429 → `RateLimited` with Retry-After, 5xx →
`ProviderUnavailable`, other 4xx → `ProviderRejected`.

Options (`providers.youcom.options`): `country` (e.g. `US`), `safesearch` (`off`,
`moderate`, `strict`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sleuth.contract import TimeRange
from sleuth.errors import ConfigError, MissingApiKey
from sleuth.providers.base import (
    HttpRequest,
    Provider,
    ProviderInfo,
    ProviderQuery,
    ProviderSettings,
    RawHit,
    country_option,
)
from sleuth.providers.mapping import FieldMapping, hit_from, json_records, lookup

INFO = ProviderInfo(
    name="youcom",
    docs_url="https://you.com/docs/guides/search/quickstart",
    needs_key=True,
    time_range=True,
    domain_filter=False,
    language=True,
    query_style="keywords",
    max_results=100,
    text_format="text",
    default_url="https://ydc-index.io/v1/search",
    api_key_env="YDC_API_KEY",
)

_FRESHNESS: dict[TimeRange, str] = {"past_week": "week", "past_month": "month", "past_year": "year"}
_SAFESEARCH = ("off", "moderate", "strict")


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey(
            "youcom needs an API key (providers.youcom.api_key_env)", provider="youcom"
        )
    params = {"query": query.text, "count": str(max(1, min(query.max_results, INFO.max_results)))}
    if query.time_range in _FRESHNESS:
        params["freshness"] = _FRESHNESS[query.time_range]
    if query.language:
        params["language"] = query.language.upper()
    params.update(_options(settings.options))
    return HttpRequest(
        method="GET",
        url=settings.base_url or INFO.default_url,
        params=params,
        headers={"X-API-Key": settings.api_key, "Accept": "application/json"},
    )


def _options(options: Mapping[str, Any]) -> dict[str, str]:
    extra = {}
    if (country := country_option("youcom", options)) is not None:
        extra["country"] = country
    safesearch = options.get("safesearch")
    if safesearch is not None:
        if safesearch not in _SAFESEARCH:
            raise ConfigError(
                f"providers.youcom.options.safesearch must be one of {', '.join(_SAFESEARCH)}, "
                f"got {safesearch!r}",
                provider="youcom",
            )
        extra["safesearch"] = str(safesearch)
    return extra


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    payload, web = json_records("youcom", status, headers, body, mapping)
    hits = [hit_from(mapping, entry) for entry in web]
    news = lookup(payload, "results.news")
    for entry in news if isinstance(news, list) else []:
        if isinstance(entry, Mapping):
            hit = hit_from(mapping, entry)
            hits.append(
                RawHit(
                    url=hit.url,
                    title=hit.title,
                    snippet=hit.snippet,
                    published_at=hit.published_at,
                    fields={**hit.fields, "section": "news"},
                    fell_back=hit.fell_back,
                )
            )
    return hits


PROVIDER = Provider(INFO, build_request, parse_response)
