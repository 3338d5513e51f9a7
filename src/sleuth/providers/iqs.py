"""Alibaba Cloud IQS (阿里云信息查询服务) UnifiedSearch (`POST /search/unified`) as a provider.

Request (the UnifiedSearch reference and the quick start): `POST
https://cloud-iqs.aliyuncs.com/search/unified` with `Authorization: Bearer <API-KEY>`:

    {"query": "…", "engineType": "Generic",
     "contents": {"mainText": false, "markdownText": false, "summary": false,
                  "rerankScore": true},
     "advancedParams": {"numResults": 10},
     "timeRange": "OneWeek"}                  # only with a time range (NoLimit is the default)

`query` is 1 to 500 characters (the reference suggests 30 at most). `Generic` returns
10 results; `LiteAdvanced` and `Deep` 1 to 50. There is no documented site filter in
what was read, so domain filters are left to the gateway; there is no language either.

Response (`UnifiedSearchOutput` of the API definition, as the official SDKs carry it):

    {"requestId": "…",
     "pageItems": [{"title": "…", "link": "…", "snippet": "…",
                    "publishedTime": "2025-04-27T20:36:04+08:00",
                    "hostname": "中华网", "hostLogo": "…", "mainText": "…",
                    "summary": "…", "rerankScore": 0.77, "hostAuthorityScore": …,
                    "websiteAuthorityScore": …, "images": […], "correlationTag": …}],
     "sceneItems": [{"type": "weather", "detail": "…"}],
     "searchInformation": {"searchTime": 1.2, "total": …},
     "queryContext": {…}, "costCredits": {…}}

`sceneItems` are IQS's vertical cards (weather, calendar and the like); each becomes a
result without a URL, titled by its `type`, `fields.section: "scene"`, its `detail` kept as
sent (the reference does not document the inside of `detail`, so it is not parsed).

Errors (the error-code table): `{"requestId": "…", "code": "…", "message": "…"}`.
403 `Retrieval.Arrears` ("Please recharge first.", 欠费) and
`Retrieval.TestUserPeriodExpired`, 429 `Retrieval.TestUserQueryPerDayExceeded` (the
trial's 1000 a day) → `QuotaExceeded`; 429 `Retrieval.Throttling.User` →
`RateLimited`; 404 `InvalidAccessKeyId.NotFound`, 403 `Retrieval.NotActivate` and
`Retrieval.NotAuthorised` → `AuthFailed`.

Options (`providers.iqs.options`): `engine_type` (`Generic`, `GenericAdvanced`,
`LiteAdvanced`, `Deep`), `main_text` (bool: ask for the page text, used when a
result has no snippet).
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
    text_or_none,
)
from sleuth.providers.mapping import FieldMapping, hit_from, json_records

INFO = ProviderInfo(
    name="iqs",
    docs_url="https://help.aliyun.com/document_detail/2883041.html",
    needs_key=True,
    time_range=True,
    domain_filter=False,
    language=False,
    query_style="natural",
    max_results=50,
    text_format="text",
    default_url="https://cloud-iqs.aliyuncs.com/search/unified",
    api_key_env="IQS_API_KEY",
)

_TIME_RANGES: dict[TimeRange, str] = {
    "past_week": "OneWeek",
    "past_month": "OneMonth",
    "past_year": "OneYear",
}
_ENGINES = {"Generic": 10, "GenericAdvanced": 50, "LiteAdvanced": 50, "Deep": 50}
_QUOTA = {
    "Retrieval.Arrears": "the account is in arrears (欠费); recharge it",
    "Retrieval.TestUserPeriodExpired": "the 15-day trial is over; move to a paid plan",
    "Retrieval.TestUserQueryPerDayExceeded": "the trial's 1000 queries a day are used up",
}
_RATE = {"Retrieval.Throttling.User"}
_AUTH = {"InvalidAccessKeyId.NotFound", "Retrieval.NotActivate", "Retrieval.NotAuthorised"}


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey("iqs needs an API key (providers.iqs.api_key_env)", provider="iqs")
    options = settings.options
    engine = options.get("engine_type") or "Generic"
    if engine not in _ENGINES:
        raise ConfigError(
            f"providers.iqs.options.engine_type must be one of {', '.join(_ENGINES)}, "
            f"got {engine!r}",
            provider="iqs",
        )
    main_text = options.get("main_text", False)
    if not isinstance(main_text, bool):
        raise ConfigError(
            f"providers.iqs.options.main_text must be true or false, got {main_text!r}",
            provider="iqs",
        )
    body: dict[str, Any] = {
        "query": query.text[:500],
        "engineType": engine,
        "contents": {
            "mainText": main_text,
            "markdownText": False,
            "summary": False,  # a paid extra, and model-written
            "rerankScore": True,
        },
        "advancedParams": {"numResults": max(1, min(query.max_results, _ENGINES[engine]))},
    }
    if query.time_range in _TIME_RANGES:
        body["timeRange"] = _TIME_RANGES[query.time_range]
    return bearer_json_post(settings.base_url or INFO.default_url, settings.api_key, body)


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    error = _error(body)
    if error is not None and (not 200 <= status < 300 or "pageItems" not in body):
        raise _api_error(status, headers, *error)
    payload, found = json_records("iqs", status, headers, body, mapping)
    pages = [hit_from(mapping, entry) for entry in found]
    return [*_scene_hits(payload), *pages]


def _scene_hits(payload: Mapping[str, Any]) -> list[RawHit]:
    """Each vertical card as a result of its own, its detail passed on untouched."""
    scenes = payload.get("sceneItems")
    hits = []
    for scene in scenes if isinstance(scenes, list) else []:
        if not isinstance(scene, Mapping) or text_or_none(scene.get("detail")) is None:
            continue
        kind = text_or_none(scene.get("type")) or "scene"
        hits.append(
            RawHit(
                url=None,
                title=kind,  # the card's kind ("weather") is all the reference names
                snippet=None,
                fields={"section": "scene", "scene_type": kind, "detail": scene["detail"]},
            )
        )
    return hits


def _error(body: Any) -> tuple[str, str] | None:
    if not isinstance(body, Mapping) or not isinstance(body.get("code"), str):
        return None
    message = " ".join(str(body.get("message") or "").split())[:300]
    if body.get("requestId"):
        message = f"{message} (requestId {body['requestId']})"
    return body["code"], message


def _api_error(status: int, headers: Mapping[str, str], code: str, message: str) -> ProviderError:
    retry_after = retry_after_s(headers)
    kind: type[ProviderError]
    if code in _QUOTA:
        kind = QuotaExceeded
        message = f"{message} ({_QUOTA[code]})"
    elif code in _RATE:
        kind = RateLimited
    elif code in _AUTH:
        kind = AuthFailed
    else:
        return from_status(
            "iqs", status if status >= 300 else 502, f"{code}: {message}", retry_after
        )
    return kind(
        f"iqs answered HTTP {status}, {code}: {message}"[:500],
        provider="iqs",
        http_status=status,
        retry_after_s=retry_after,
    )


PROVIDER = Provider(INFO, build_request, parse_response)
