"""Perplexity Search API (`POST /search`) as a provider: ranked pages, not a model's answer.

Request (the API reference, "Search the Web", `ApiSearchRequest`): `POST
https://api.perplexity.ai/search` with `Authorization: Bearer pplx-…`:

    {"query": "…", "max_results": 10,               # 1 to 20
     "search_recency_filter": "week",               # only with a time range
     "search_domain_filter": ["docs.python.org"],   # only with a domain filter, at most 20
     "search_language_filter": ["zh"]}              # the query's ISO 639-1 language

Response (`ApiSearchResponse`):

    {"id": "…", "server_time": null,
     "results": [{"title": "…", "url": "…", "snippet": "…",
                  "date": "2024-10-08", "last_updated": "2025-01-15"}]}

`date` is the page's publication date; `last_updated` when Perplexity saw it change,
kept as the extra `modified_at`, never as `published_at`.

Errors: the reference documents 422 with `{"detail": [{"loc": […], "msg": "…",
"type": "…"}]}` (`ProviderRejected`), and failed requests carry `{"error": {"message":
"…", "type": "…", "code": "…"}}` (`ErrorInfo`). Statuses decide the rest: 401/403 →
`AuthFailed`, 429 → `RateLimited` with Retry-After, 5xx → `ProviderUnavailable`.

Options (`providers.perplexity.options`): `country` (ISO 3166-1 alpha-2),
`max_tokens_per_page` (1 to 1,000,000; how much page text each result carries).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sleuth.contract import TimeRange
from sleuth.errors import ConfigError, MissingApiKey, from_status
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
    name="perplexity",
    docs_url="https://docs.perplexity.ai/api-reference/search-post",
    needs_key=True,
    time_range=True,
    domain_filter=True,
    language=True,
    query_style="natural",
    max_results=20,
    text_format="text",
    default_url="https://api.perplexity.ai/search",
    api_key_env="PERPLEXITY_API_KEY",
)

_RECENCY: dict[TimeRange, str] = {"past_week": "week", "past_month": "month", "past_year": "year"}
_MAX_DOMAINS = 20


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey(
            "perplexity needs an API key (providers.perplexity.api_key_env)",
            provider="perplexity",
        )
    body: dict[str, Any] = {
        "query": query.text,
        "max_results": max(1, min(query.max_results, INFO.max_results)),
    }
    if query.time_range in _RECENCY:
        body["search_recency_filter"] = _RECENCY[query.time_range]
    if query.domain_filter:
        body["search_domain_filter"] = list(query.domain_filter[:_MAX_DOMAINS])
    language = query.language.split("-")[0].lower()
    if len(language) == 2 and language.isalpha():
        body["search_language_filter"] = [language]
    body.update(_options(settings.options))
    return bearer_json_post(settings.base_url or INFO.default_url, settings.api_key, body)


def _options(options: Mapping[str, Any]) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if (country := country_option("perplexity", options)) is not None:
        extra["country"] = country
    tokens = options.get("max_tokens_per_page")
    if tokens is not None:
        if isinstance(tokens, bool) or not isinstance(tokens, int) or not 1 <= tokens <= 1_000_000:
            raise ConfigError(
                "providers.perplexity.options.max_tokens_per_page must be an integer from 1 "
                f"to 1000000, got {tokens!r}",
                provider="perplexity",
            )
        extra["max_tokens_per_page"] = tokens
    return extra


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    if not 200 <= status < 300:
        detail = _error_detail(body)
        if detail is not None:
            raise from_status("perplexity", status, detail, retry_after_s(headers))
    _, found = json_records("perplexity", status, headers, body, mapping)
    return [hit_from(mapping, entry) for entry in found]


def _error_detail(body: Any) -> str | None:
    """The message of `{"error": {…}}` or of a validation error's `detail` list."""
    if not isinstance(body, Mapping):
        return None
    error = body.get("error")
    if isinstance(error, Mapping) and error.get("message"):
        kind = " ".join(str(part) for part in (error.get("type"), error.get("code")) if part)
        return f"{error['message']}" + (f" ({kind})" if kind else "")
    detail = body.get("detail")
    if isinstance(detail, list) and detail:
        parts = []
        for item in detail:
            if isinstance(item, Mapping):
                where = ".".join(str(step) for step in item.get("loc") or [])
                parts.append(f"{where}: {item.get('msg')}" if where else str(item.get("msg")))
        return "; ".join(parts)[:300] or None
    return None


PROVIDER = Provider(INFO, build_request, parse_response)
