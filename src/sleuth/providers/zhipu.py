"""Zhipu (智谱) Web Search API (`POST /api/paas/v4/web_search`) as a provider.

Request (the API reference, 工具 API / 网络搜索): `POST
https://open.bigmodel.cn/api/paas/v4/web_search` with `Authorization: Bearer …`:

    {"search_query": "…", "search_engine": "search_std", "search_intent": false,
     "count": 10, "content_size": "medium",
     "search_recency_filter": "oneWeek",        # only with a time range
     "search_domain_filter": "www.gov.cn"}      # only with exactly one domain

`search_domain_filter` is one white-listed domain; a filter of several domains is not
sent (the gateway filters afterwards, as it does for every native domain filter).
`count` is 1 to 50, and the `search_pro_sogou` engine takes only 10, 20, 30, 40 or 50
(the next one up is sent). The reference recommends at most 70 characters of query.

Response:

    {"id": "…", "created": 1728390000, "request_id": "…",
     "search_intent": [{"query": "…", "intent": "SEARCH_ALL", "keywords": "…"}],
     "search_result": [{"title": "…", "content": "…", "link": "…", "media": "新华网",
                        "icon": "…", "refer": "ref_1", "publish_date": "2024-10-08"}]}

`search_intent` is the engine's reading of the query, not a page, so it is not a result.

Errors (the error-code page): HTTP status outside, `{"error": {"code": "1113",
"message": "…"}}` inside. 1113 (账户已欠费), 1304 (今日调用次数限额) and 1308/1310
(使用上限, reset later) → `QuotaExceeded`, although they come as HTTP 429: a top-up or
the next day is needed, not a pause; 1302/1303/1305 (并发/频率过高, 流量限制) →
`RateLimited`; 1000-1004 (身份验证), 1110-1112/1121 (账户) and 1220 (无权访问) →
`AuthFailed`; 1301 (不安全或敏感内容, the content policy) and other 12xx →
`ProviderRejected`; 500 → `ProviderUnavailable`.

Options (`providers.zhipu.options`): `search_engine` (`search_std`, `search_pro`,
`search_pro_sogou`, `search_pro_quark`), `content_size` (`medium`, `high`).
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
    name="zhipu",
    docs_url="https://docs.bigmodel.cn/api-reference/工具-api/网络搜索",
    needs_key=True,
    time_range=True,
    domain_filter=True,
    language=False,
    query_style="natural",
    max_results=50,
    text_format="text",
    default_url="https://open.bigmodel.cn/api/paas/v4/web_search",
    api_key_env="ZHIPU_API_KEY",
)

_RECENCY: dict[TimeRange, str] = {
    "past_week": "oneWeek",
    "past_month": "oneMonth",
    "past_year": "oneYear",
}
_ENGINES = ("search_std", "search_pro", "search_pro_sogou", "search_pro_quark")
_CONTENT_SIZES = ("medium", "high")
_SOGOU_COUNTS = (10, 20, 30, 40, 50)
_QUOTA_CODES = {"1113", "1304", "1308", "1310"}
_RATE_CODES = {"1302", "1303", "1305"}
_AUTH_CODES = {"1000", "1001", "1002", "1003", "1004", "1110", "1111", "1112", "1121", "1220"}
_CONTENT_POLICY = "1301"


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey(
            "zhipu needs an API key (providers.zhipu.api_key_env)", provider="zhipu"
        )
    engine = _choice(settings.options, "search_engine", _ENGINES)
    count = max(1, min(query.max_results, INFO.max_results))
    if engine == "search_pro_sogou":
        count = next(n for n in _SOGOU_COUNTS if n >= count)
    body: dict[str, Any] = {
        "search_query": query.text,
        "search_engine": engine,
        "search_intent": False,  # search every time: sleuth already decided to search
        "count": count,
        "content_size": _choice(settings.options, "content_size", _CONTENT_SIZES),
    }
    if query.time_range in _RECENCY:
        body["search_recency_filter"] = _RECENCY[query.time_range]
    if len(query.domain_filter) == 1:
        body["search_domain_filter"] = query.domain_filter[0]
    return bearer_json_post(settings.base_url or INFO.default_url, settings.api_key, body)


def _choice(options: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    value = options.get(key) or allowed[0]
    if value not in allowed:
        raise ConfigError(
            f"providers.zhipu.options.{key} must be one of {', '.join(allowed)}, got {value!r}",
            provider="zhipu",
        )
    return str(value)


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    error = _error(body)
    if error is not None:
        raise _api_error(status, headers, *error)
    _, found = json_records("zhipu", status, headers, body, mapping)
    return [hit_from(mapping, entry) for entry in found]


def _error(body: Any) -> tuple[str, str] | None:
    """`(code, message)` of `{"error": {"code": …, "message": …}}`; None otherwise."""
    if not isinstance(body, Mapping) or not isinstance(body.get("error"), Mapping):
        return None
    error = body["error"]
    code = str(error.get("code") or "").strip()
    message = " ".join(str(error.get("message") or "").split())[:300]
    return code, message


def _api_error(status: int, headers: Mapping[str, str], code: str, message: str) -> ProviderError:
    retry_after = retry_after_s(headers)
    kind: type[ProviderError]
    if code in _QUOTA_CODES:
        kind = QuotaExceeded
    elif code in _RATE_CODES:
        kind = RateLimited
    elif code in _AUTH_CODES or status == 401:
        kind = AuthFailed
    elif code == _CONTENT_POLICY:
        kind = ProviderRejected
        message = f"{message} (content policy: the query was refused)"
    elif code.startswith("12") or status == 400:
        kind = ProviderRejected
    elif code == "500" or status >= 500:
        kind = ProviderUnavailable
    else:
        return from_status("zhipu", status, f"{code} {message}", retry_after)
    return kind(
        f"zhipu answered HTTP {status}, code {code}: {message}"[:500],
        provider="zhipu",
        http_status=status,
        retry_after_s=retry_after,
    )


PROVIDER = Provider(INFO, build_request, parse_response)
