"""Baidu Qianfan (百度千帆) 百度搜索 API (`POST /v2/ai_search/web_search`) as a provider.

Request (the API reference, "百度搜索"): `POST
https://qianfan.baidubce.com/v2/ai_search/web_search` with `Authorization: Bearer
<AppBuilder API Key>`:

    {"messages": [{"role": "user", "content": "…"}],
     "search_source": "baidu_search_v2", "edition": "standard",
     "resource_type_filter": [{"type": "web", "top_k": 10}],   # web: at most 50
     "search_recency_filter": "week",                          # only with a time range
     "search_filter": {"match": {"site": ["www.gov.cn"]}}}     # only with a domain filter

Only web pages are asked for: video, image and 阿拉丁 (aladdin) cards default to
`top_k: 0`, and the shape of an aladdin card is not documented in the reference, so
sleuth cannot read one without guessing.

Response: `{"request_id": "…", "references": [{"id": 1, "url": "…", "title": "…",
"date": "2024-10-08 18:05:00", "content": "…", "icon": "…", "web_anchor": "…",
"type": "web", "website": "…", "snippet": "…", "is_aladdin": false, "aladdin": null,
"video": null, "image": null, "rerank_score": 0.98, "authority_score": 0.95}]}`.

Errors (the 错误码 pages of 百度AI搜索 and Qianfan): `{"error": {"code": "…",
"message": "…", "type": "…"}, "id": "…"}`. All HTTP 429, but not all alike:
`RATE_LIMIT_TOTAL_QPS`, `RATE_LIMIT_SEARCH_TOTAL_QPS`, `RATE_LIMIT_SEARCH_QPS` (per
second) → `RateLimited`; `QUOTA_USER_DAILY_REQUEST`, `QUOTA_USER_DAILY_FREE` (the 100
free calls a day used up, pay-as-you-go not enabled) and
`BILLING_INSUFFICIENT_BALANCE` (欠费) → `QuotaExceeded`. 401 (`invalid_iam_token`
and the like) → `AuthFailed`; other 400s → `ProviderRejected`; 5xx →
`ProviderUnavailable`.

`date` comes without a zone ("2024-10-08 18:05:00") and the reference names none; a
service of China whose pages show China Standard Time, Baidu is read in it: a date
and time without a zone are UTC+8. Read as UTC, a page published an hour ago would be
seven hours ahead of now, and its date dropped as in the future. A bare day is left a
day.

Options (`providers.baidu.options`): `edition` (`standard`, or `lite`: faster, a
little weaker).
"""

from __future__ import annotations

import dataclasses
import re
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
    name="baidu",
    docs_url="https://cloud.baidu.com/doc/AppBuilder/s/pmaxd1hvy",
    needs_key=True,
    time_range=True,
    domain_filter=True,
    language=False,
    query_style="natural",
    max_results=50,  # web top_k at most 50
    text_format="text",
    default_url="https://qianfan.baidubce.com/v2/ai_search/web_search",
    api_key_env="QIANFAN_API_KEY",
)

_RECENCY: dict[TimeRange, str] = {
    "past_week": "week",
    "past_month": "month",
    "past_year": "year",
}
_EDITIONS = ("standard", "lite")
_RATE_CODES = {"RATE_LIMIT_TOTAL_QPS", "RATE_LIMIT_SEARCH_TOTAL_QPS", "RATE_LIMIT_SEARCH_QPS"}
_QUOTA_HINTS = {
    "QUOTA_USER_DAILY_REQUEST": "the daily call limit is used up; ask Baidu to raise it",
    "QUOTA_USER_DAILY_FREE": "the 100 free calls of the day are used up; enable pay-as-you-go",
    "BILLING_INSUFFICIENT_BALANCE": "the account is in arrears (欠费); top it up",
}


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey(
            "baidu needs an AppBuilder API key (providers.baidu.api_key_env)", provider="baidu"
        )
    edition = settings.options.get("edition") or "standard"
    if edition not in _EDITIONS:
        raise ConfigError(
            f"providers.baidu.options.edition must be one of {', '.join(_EDITIONS)}, "
            f"got {edition!r}",
            provider="baidu",
        )
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": query.text}],
        "search_source": "baidu_search_v2",
        "edition": edition,
        "resource_type_filter": [
            {"type": "web", "top_k": max(1, min(query.max_results, INFO.max_results))}
        ],
    }
    if query.time_range in _RECENCY:
        body["search_recency_filter"] = _RECENCY[query.time_range]
    if query.domain_filter:
        body["search_filter"] = {"match": {"site": list(query.domain_filter)}}
    return bearer_json_post(settings.base_url or INFO.default_url, settings.api_key, body)


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    error = _error(body)
    if error is not None:
        raise _api_error(status, headers, *error)
    _, found = json_records("baidu", status, headers, body, mapping)
    return [_in_china_time(hit_from(mapping, entry)) for entry in found]


#: A date and time with no zone after it (ISO 8601, a space or a T between).
_NO_ZONE = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?")


def _in_china_time(hit: RawHit) -> RawHit:
    """The hit with its zoneless date and time read as China Standard Time (UTC+8)."""
    if hit.published_at is None or not _NO_ZONE.fullmatch(hit.published_at):
        return hit
    return dataclasses.replace(hit, published_at=hit.published_at + "+08:00")


def _error(body: Any) -> tuple[str, str] | None:
    """`(code, message)` of the `{"error": {…}, "id": …}` envelope; None otherwise."""
    if not isinstance(body, Mapping) or not isinstance(body.get("error"), Mapping):
        return None
    error = body["error"]
    code = str(error.get("code") or "").strip()
    message = " ".join(str(error.get("message") or "").split())[:300]
    if body.get("id"):
        message = f"{message} (id {body['id']})"
    return code, message


def _api_error(status: int, headers: Mapping[str, str], code: str, message: str) -> ProviderError:
    retry_after = retry_after_s(headers)
    kind: type[ProviderError]
    if code in _QUOTA_HINTS:
        kind = QuotaExceeded
        message = f"{message} ({_QUOTA_HINTS[code]})"
    elif code in _RATE_CODES or status == 429:
        kind = RateLimited
    elif status in (401, 403):
        kind = AuthFailed
    elif 400 <= status < 500:
        kind = ProviderRejected
    elif status >= 500:
        kind = ProviderUnavailable
    else:  # the envelope under HTTP 200: by the code's own kind
        return from_status("baidu", 502, f"{code} {message}", retry_after)
    return kind(
        f"baidu answered HTTP {status}, {code}: {message}"[:500],
        provider="baidu",
        http_status=status,
        retry_after_s=retry_after,
    )


PROVIDER = Provider(INFO, build_request, parse_response)
