"""Tavily (web search built for LLM agents, `POST /search`) as a provider.

Request: `POST https://api.tavily.com/search` with `Authorization: Bearer tvly-…` and a
JSON body. The API reference documents only the Bearer header; older SDKs put
`api_key` in the body, and the rate-limit page asks for the key in the header so the
right limits apply, so the key never goes into the body.

    {"query": "…", "search_depth": "basic", "topic": "general", "max_results": 5,
     "include_answer": false, "include_raw_content": false, "include_images": false,
     "time_range": "week",                      # only with a time range
     "include_domains": ["docs.python.org"]}    # only with a domain filter

Tavily takes natural-language queries (up to 400 characters), so it gets the original
wording. The API reference has no language parameter (`country` boosts results from
a country, which is not the same thing), so language is left to the gateway.

Response (the 200 schema of the API reference):

    {"query": "…", "answer": null, "images": [],
     "results": [{"title": "…", "url": "…", "content": "…", "score": 0.81,
                  "raw_content": null,                          # include_raw_content
                  "favicon": "…",                               # include_favicon
                  "published_date": "Mon, 05 May 2025 21:00:53 GMT"}],  # topic news
     "auto_parameters": {…}, "response_time": 1.67, "usage": {"credits": 1},
     "request_id": "123e4567-e89b-12d3-a456-426614174111"}

`published_date` is only sent with `topic: news` (and then as an RFC 1123 date); a
general search carries no date. `score` is Tavily's raw relevance score and is not
kept.

`answer` is left out on purpose: sleuth sends `include_answer: false`, and an answer
in a body anyway (a cassette recorded by another client) is not read. It is text a
model wrote from the results, citing none of them, so it is not a page an agent can
check; sleuth's own summary is made of the results' sentences, each cited.

Errors carry `{"detail": {"error": "…"}}` (the rate-limit page shows a bare
`{"error": "…"}` for 429, with a `retry-after` header in seconds). Statuses:
400 bad parameter → `ProviderRejected`; 401 missing or invalid key → `AuthFailed`;
403 → `AuthFailed`; 429 too many requests → `RateLimited`; 432 key or plan usage
limit exceeded and 433 pay-as-you-go limit exceeded → `QuotaExceeded`, not
`RateLimited`: the allowance does not come back by waiting seconds (someone has to
upgrade the plan or raise the limit on the dashboard, or the month has to turn), so
retrying only burns calls and the fallback ladder should move on at once; 500 with
Tavily's envelope ("retry after a few minutes") → `ProviderUnavailable`.

Options (`providers.tavily.options` in sleuth.yaml), all optional:
- `search_depth`: `basic` (default, 1 credit), `advanced` (2 credits), `fast` or
  `ultra-fast`.
- `topic`: `general` (default), `news` (results carry `published_date`) or `finance`.
- `country`: boost results from a country, as Tavily names it (`united states`,
  `china`, …); the docs allow it only with topic `general`.
- `chunks_per_source`: 1 to 3 snippets per page (`advanced` and `fast` depths).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sleuth.contract import TimeRange
from sleuth.errors import (
    AuthFailed,
    ConfigError,
    MissingApiKey,
    ProviderError,
    ProviderUnavailable,
    QuotaExceeded,
    RateLimited,
    from_status,
)
from sleuth.providers.base import (
    HttpRequest,
    Provider,
    ProviderInfo,
    ProviderQuery,
    ProviderSettings,
    RawHit,
    retry_after_s,
)
from sleuth.providers.mapping import FieldMapping, hit_from, json_records

INFO = ProviderInfo(
    name="tavily",
    docs_url="https://docs.tavily.com/documentation/api-reference/endpoint/search",
    needs_key=True,
    time_range=True,
    domain_filter=True,
    language=False,
    query_style="natural",
    max_results=20,  # max_results: 0 <= x <= 20
)

DEFAULT_URL = "https://api.tavily.com/search"
_TIME_RANGES: dict[TimeRange, str] = {
    "past_week": "week",
    "past_month": "month",
    "past_year": "year",
}
_SEARCH_DEPTHS = ("basic", "advanced", "fast", "ultra-fast")
_TOPICS = ("general", "news", "finance")
# Usage limits that waiting a few seconds does not lift (see the module docstring).
_LIMIT_HINTS = {
    432: "the key's or the plan's usage limit is used up; upgrade the plan or raise the key limit",
    433: "the pay-as-you-go limit is used up; raise it on the Tavily dashboard",
}


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey(
            "tavily needs an API key (providers.tavily.api_key_env)", provider=INFO.name
        )
    options = settings.options
    body: dict[str, Any] = {
        "query": query.text,
        "search_depth": _choice(options, "search_depth", _SEARCH_DEPTHS),
        "topic": _choice(options, "topic", _TOPICS),
        "max_results": max(1, min(query.max_results, INFO.max_results)),
        # The defaults, sent anyway: they decide the size of the answer.
        "include_answer": False,
        "include_raw_content": False,
        "include_images": False,
    }
    if query.time_range in _TIME_RANGES:
        body["time_range"] = _TIME_RANGES[query.time_range]
    if query.domain_filter:
        body["include_domains"] = list(query.domain_filter)
    if options.get("country"):
        body["country"] = str(options["country"])
    if options.get("chunks_per_source") is not None:
        body["chunks_per_source"] = _chunks_per_source(options["chunks_per_source"])
    return HttpRequest(
        method="POST",
        url=settings.base_url or DEFAULT_URL,
        headers={
            "Authorization": f"Bearer {settings.api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        },
        json=body,
    )


def _choice(options: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    value = options.get(key) or allowed[0]
    if value not in allowed:
        raise ConfigError(
            f"providers.tavily.options.{key} must be one of {', '.join(allowed)}, got {value!r}",
            provider=INFO.name,
        )
    return str(value)


def _chunks_per_source(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 3:
        raise ConfigError(
            f"providers.tavily.options.chunks_per_source must be 1, 2 or 3, got {value!r}",
            provider=INFO.name,
        )
    return value


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    if not 200 <= status < 300:
        detail = _error_detail(body)
        if detail is not None:
            raise _api_error(status, headers, detail)
    # Not Tavily's envelope (a proxy's HTML page, say): the generic mapping.
    _, found = json_records(INFO.name, status, headers, body, mapping, _error_suffix)
    return [hit_from(mapping, entry) for entry in found]


def _error_suffix(payload: Mapping[str, Any]) -> str:
    detail = _error_detail(payload)
    return f": {detail}" if detail else ""


def _api_error(status: int, headers: Mapping[str, str], detail: str) -> ProviderError:
    """The contract error for a non-2xx answer in Tavily's envelope."""
    retry_after = retry_after_s(headers)
    kind: type[ProviderError]
    if status in _LIMIT_HINTS:
        kind = QuotaExceeded
        detail = f"{detail} ({_LIMIT_HINTS[status]})"
    elif status == 429:
        kind = RateLimited
    elif status in (401, 403):
        kind = AuthFailed
    elif status == 500:
        kind = ProviderUnavailable  # documented as Tavily's fault, to retry later
    else:
        return from_status(INFO.name, status, detail, retry_after)
    return kind(
        f"tavily answered HTTP {status}: {detail}"[:500],
        provider=INFO.name,
        http_status=status,
        retry_after_s=retry_after,
    )


def _error_detail(body: Any) -> str | None:
    """The message of `{"detail": {"error": …}}`, `{"error": …}` or a validation list."""
    if not isinstance(body, Mapping):
        return None
    detail = body.get("detail")
    if isinstance(detail, Mapping):
        detail = detail.get("error")
    elif isinstance(detail, list):  # request validation: [{"loc": […], "msg": "…"}, …]
        detail = "; ".join(
            str(item.get("msg") if isinstance(item, Mapping) else item) for item in detail
        )
    if detail is None:
        detail = body.get("error")
        if isinstance(detail, Mapping):
            detail = detail.get("message") or detail.get("code")
    if detail is None or not str(detail).strip():
        return None
    return " ".join(str(detail).split())[:300]


PROVIDER = Provider(INFO, build_request, parse_response)
