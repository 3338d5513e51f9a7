"""Bocha (博查) Web Search (`POST /v1/web-search`) as a provider.

Request: `POST https://api.bochaai.com/v1/web-search` with `Authorization: Bearer …`
and a JSON body (the API reference, "Web Search API"):

    {"query": "…", "count": 10, "summary": false,
     "freshness": "oneWeek",            # only with a time range (noLimit is the default)
     "include": "gov.cn|people.com.cn"} # only with a domain filter: `|`-separated, at most 20

`count` is 1 to 50. The API has no language parameter; Chinese is what it is for.

Response (the reference's example, a Bing-compatible envelope):

    {"code": 200, "log_id": "d71841ad20095f61", "msg": null,
     "data": {"_type": "SearchResponse", "queryContext": {"originalQuery": "…"},
              "webPages": {"webSearchUrl": "", "totalEstimatedMatches": 8912791,
                           "value": [{"id": null, "name": "…", "url": "…",
                                      "displayUrl": "…", "snippet": "…",
                                      "summary": "…",           # with summary: true
                                      "siteName": "…", "siteIcon": "…",
                                      "datePublished": "2025-02-23T08:18:30+08:00",
                                      "dateLastCrawled": "2025-02-23T08:18:30Z", …}],
                           "someResultsRemoved": true},
              "images": {…}, "videos": null}}

Dates: the reference says `datePublished` is the publication time in UTC+8, and that
`dateLastCrawled` is the publication time too, written with a `Z` that really means
Beijing time. So `published_at` is `datePublished`, else `dateLastCrawled` with its
`Z` read as `+08:00` (never as UTC, which would move every date by eight hours).

Errors (the reference's 异常码 table) come as `{"code": "403", "message": "…",
"log_id": "…"}`: 403 "You do not have enough money" (余额不足) → `QuotaExceeded` (a
top-up is needed, waiting does not help); 400 "The API KEY is missing" and 401
"Invalid API KEY" → `AuthFailed`; other 400s ("Missing parameter query") →
`ProviderRejected`; 429 "You have reached the request limit" → `RateLimited`; 500 →
`ProviderUnavailable`. The same envelope under HTTP 200 is classified by its `code`.

Options (`providers.bocha.options`): `summary` (bool, default false): ask for the
longer `summary` text of each page, used when a result has no `snippet`.
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
    ProviderRejected,
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
    bearer_json_post,
    retry_after_s,
)
from sleuth.providers.mapping import FieldMapping, hit_from, json_records

INFO = ProviderInfo(
    name="bocha",
    docs_url="https://bocha-ai.feishu.cn/wiki/RXEOw02rFiwzGSkd9mUcqoeAnNK",
    needs_key=True,
    time_range=True,
    domain_filter=True,
    language=False,
    query_style="natural",
    max_results=50,
    text_format="text",
    default_url="https://api.bochaai.com/v1/web-search",
    api_key_env="BOCHA_API_KEY",
)

_FRESHNESS: dict[TimeRange, str] = {
    "past_week": "oneWeek",
    "past_month": "oneMonth",
    "past_year": "oneYear",
}
_MAX_DOMAINS = 20  # "最多不能超过20个"
_NO_MONEY = "you do not have enough money"
_NO_KEY = "api key is missing"


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey(
            "bocha needs an API key (providers.bocha.api_key_env)", provider="bocha"
        )
    summary = settings.options.get("summary", False)
    if not isinstance(summary, bool):
        raise ConfigError(
            f"providers.bocha.options.summary must be true or false, got {summary!r}",
            provider="bocha",
        )
    body: dict[str, Any] = {
        "query": query.text,
        "count": max(1, min(query.max_results, INFO.max_results)),
        "summary": summary,
    }
    if query.time_range in _FRESHNESS:
        body["freshness"] = _FRESHNESS[query.time_range]
    if query.domain_filter:
        body["include"] = "|".join(query.domain_filter[:_MAX_DOMAINS])
    return bearer_json_post(settings.base_url or INFO.default_url, settings.api_key, body)


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    envelope = _envelope(body)
    if envelope is not None and (envelope[0] != 200 or not 200 <= status < 300):
        code, message = envelope
        raise _api_error(status if status >= 300 else code, headers, message)
    _, found = json_records("bocha", status, headers, body, mapping, _error_suffix)
    return [_beijing_date(hit_from(mapping, entry), entry) for entry in found]


def _beijing_date(hit: RawHit, entry: Mapping[str, Any]) -> RawHit:
    """`dateLastCrawled` as the documented UTC+8 time when `datePublished` is absent."""
    if hit.published_at is not None:
        return hit
    crawled = entry.get("dateLastCrawled")
    if not isinstance(crawled, str) or not crawled.strip():
        return hit
    value = crawled.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+08:00"
    return RawHit(
        url=hit.url,
        title=hit.title,
        snippet=hit.snippet,
        published_at=value,
        fields=hit.fields,
        fell_back=(*hit.fell_back, "published_at"),
    )


def _envelope(body: Any) -> tuple[int, str] | None:
    """`(code, message)` of Bocha's envelope; None for a body without one."""
    if not isinstance(body, Mapping) or "code" not in body:
        return None
    try:
        code = int(str(body["code"]).strip())
    except ValueError:
        return None
    message = body.get("message") or body.get("msg") or ""
    log_id = body.get("log_id")
    text = " ".join(str(message).split())[:300]
    return code, f"{text} (log_id {log_id})" if log_id else text


def _error_suffix(payload: Mapping[str, Any]) -> str:
    envelope = _envelope(payload)
    return f": {envelope[1]}" if envelope and envelope[1] else ""


def _api_error(status: int, headers: Mapping[str, str], message: str) -> ProviderError:
    retry_after = retry_after_s(headers)
    lowered = message.lower()
    kind: type[ProviderError]
    if status == 403 and _NO_MONEY in lowered:
        kind = QuotaExceeded
        message = f"{message} (余额不足: top up the Bocha account)"
    elif status in (401, 403) or _NO_KEY in lowered:
        kind = AuthFailed
    elif status == 429:
        kind = RateLimited
    elif status == 400:
        kind = ProviderRejected
    elif status >= 500:
        kind = ProviderUnavailable
    else:
        return from_status("bocha", status, message, retry_after)
    return kind(
        f"bocha answered {status}: {message}"[:500],
        provider="bocha",
        http_status=status,
        retry_after_s=retry_after,
    )


PROVIDER = Provider(INFO, build_request, parse_response)
