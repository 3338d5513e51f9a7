"""Firecrawl search (`POST /v2/search`) as a provider.

Request (the Search feature page and its API reference): `POST
https://api.firecrawl.dev/v2/search` with `Authorization: Bearer fc-…`:

    {"query": "…", "limit": 5, "sources": ["web"],
     "tbs": "qdr:w"}                      # only with a time range (qdr:w, qdr:m, qdr:y)

Only web results are asked for (`sources: ["web"]`); `images` and `news` are other
sources, and page scraping (`scrapeOptions`) is not asked for, so each search costs
the search alone. There is no language parameter; `country` is an option.

Response:

    {"success": true,
     "data": {"web": [{"url": "…", "title": "…", "description": "…", "position": 1}]}}

Web results carry no date, so none is given.

Errors: `{"success": false, "error": "…"}`. 402 (the credits are used up) →
`QuotaExceeded`; 401/403 → `AuthFailed`; 429 → `RateLimited` with Retry-After;
408 and 5xx → `ProviderUnavailable`; other 4xx → `ProviderRejected`. The same
envelope under HTTP 200 (`success: false`) is an error too.

Options (`providers.firecrawl.options`): `country` (ISO 3166-1 alpha-2, e.g. `US`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sleuth.contract import TimeRange
from sleuth.errors import (
    MissingApiKey,
    ProviderError,
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
    bearer_json_post,
    country_option,
    retry_after_s,
)
from sleuth.providers.mapping import FieldMapping, hit_from, json_records

INFO = ProviderInfo(
    name="firecrawl",
    docs_url="https://docs.firecrawl.dev/features/search",
    needs_key=True,
    time_range=True,
    domain_filter=False,
    language=False,
    query_style="keywords",
    max_results=100,
    text_format="text",
    default_url="https://api.firecrawl.dev/v2/search",
    api_key_env="FIRECRAWL_API_KEY",
)

_TBS: dict[TimeRange, str] = {"past_week": "qdr:w", "past_month": "qdr:m", "past_year": "qdr:y"}


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey(
            "firecrawl needs an API key (providers.firecrawl.api_key_env)", provider="firecrawl"
        )
    body: dict[str, Any] = {
        "query": query.text,
        "limit": max(1, min(query.max_results, INFO.max_results)),
        "sources": ["web"],
    }
    if query.time_range in _TBS:
        body["tbs"] = _TBS[query.time_range]
    if (country := country_option("firecrawl", settings.options)) is not None:
        body["country"] = country
    return bearer_json_post(settings.base_url or INFO.default_url, settings.api_key, body)


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    if isinstance(body, Mapping) and (body.get("success") is False or not 200 <= status < 300):
        message = body.get("error")
        if isinstance(message, str) and message.strip():
            raise _api_error(status, headers, " ".join(message.split())[:300])
    _, found = json_records("firecrawl", status, headers, body, mapping)
    return [hit_from(mapping, entry) for entry in found]


def _api_error(status: int, headers: Mapping[str, str], message: str) -> ProviderError:
    retry_after = retry_after_s(headers)
    kind: type[ProviderError]
    if status == 402:
        kind = QuotaExceeded
        message = f"{message} (the Firecrawl credits are used up)"
    elif status == 408 or status >= 500:
        kind = ProviderUnavailable
    else:
        return from_status("firecrawl", status if status >= 300 else 502, message, retry_after)
    return kind(
        f"firecrawl answered HTTP {status}: {message}"[:500],
        provider="firecrawl",
        http_status=status,
        retry_after_s=retry_after,
    )


PROVIDER = Provider(INFO, build_request, parse_response)
