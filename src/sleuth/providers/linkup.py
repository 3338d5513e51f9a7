"""Linkup search (`POST /v1/search`, `outputType: searchResults`) as a provider.

Request (the API reference, "/search"): `POST https://api.linkup.so/v1/search` with
`Authorization: Bearer …`:

    {"q": "…", "depth": "standard", "outputType": "searchResults",
     "includeImages": false, "maxResults": 10,
     "fromDate": "2025-02-22",                  # only with a time range (YYYY-MM-DD)
     "includeDomains": ["microsoft.com"]}       # only with a domain filter

`searchResults` is asked for, not `sourcedAnswer`: a model-written answer cites no
page an agent can check, while sleuth's summary is made of cited sentences. The time
range becomes `fromDate`, counted back from `options.now` (tests) or today in UTC.

Response: `{"results": [{"type": "text", "name": "…", "url": "…", "content": "…"}]}`
(`type: "image"` entries only come with `includeImages`, and are skipped). Results
carry no date.

Errors (the Errors page): `{"statusCode": 429, "error": {"code": "…", "message": "…",
"details": [{"field": "…", "message": "…"}]}}`. 429 means either "run out of credit"
(`QuotaExceeded`: a plan or top-up is needed) or too many concurrent requests
(`RateLimited`); the message says which. A 400 whose message says the query yields no
result is an empty answer, as the page lists it among the 400s; other 400s →
`ProviderRejected`, naming the fields in `details`; 401/403 → `AuthFailed`; 500 →
`ProviderUnavailable`.

Options (`providers.linkup.options`): `depth` (`standard`, 1 credit, or `deep`, 10),
`now` (an ISO 8601 reference time for the date filter).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from sleuth.contract import TimeRange
from sleuth.errors import (
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
    bearer_json_post,
    retry_after_s,
)
from sleuth.providers.mapping import FieldMapping, hit_from, json_records

INFO = ProviderInfo(
    name="linkup",
    docs_url="https://docs.linkup.so/api-reference/search/search",
    needs_key=True,
    time_range=True,
    domain_filter=True,
    language=False,
    query_style="natural",
    max_results=50,
    text_format="text",
    default_url="https://api.linkup.so/v1/search",
    api_key_env="LINKUP_API_KEY",
)

_DAYS_BACK: dict[TimeRange, int] = {"past_week": 7, "past_month": 30, "past_year": 365}
_DEPTHS = ("standard", "deep")


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey(
            "linkup needs an API key (providers.linkup.api_key_env)", provider="linkup"
        )
    depth = settings.options.get("depth") or "standard"
    if depth not in _DEPTHS:
        raise ConfigError(
            f"providers.linkup.options.depth must be one of {', '.join(_DEPTHS)}, got {depth!r}",
            provider="linkup",
        )
    body: dict[str, Any] = {
        "q": query.text,
        "depth": depth,
        "outputType": "searchResults",
        "includeImages": False,
        "maxResults": max(1, min(query.max_results, INFO.max_results)),
    }
    if query.time_range in _DAYS_BACK:
        since = _now(settings.options) - timedelta(days=_DAYS_BACK[query.time_range])
        body["fromDate"] = since.date().isoformat()
    if query.domain_filter:
        body["includeDomains"] = list(query.domain_filter)
    return bearer_json_post(settings.base_url or INFO.default_url, settings.api_key, body)


def _now(options: Mapping[str, Any]) -> datetime:
    raw = options.get("now")
    if raw is None:
        return datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(str(raw))
    except ValueError:
        raise ConfigError(
            f"providers.linkup.options.now must be an ISO 8601 time, got {raw!r}",
            provider="linkup",
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    error = _error(body)
    if error is not None and not 200 <= status < 300:
        code, message = error
        if status == 400 and ("no result" in message.lower() or "NO_RESULT" in code.upper()):
            return []  # documented as a 400: nothing found is an answer, not a failure
        raise _api_error(status, headers, code, message)
    _, found = json_records("linkup", status, headers, body, mapping)
    return [hit_from(mapping, entry) for entry in found if entry.get("type") != "image"]


def _error(body: Any) -> tuple[str, str] | None:
    if not isinstance(body, Mapping) or not isinstance(body.get("error"), Mapping):
        return None
    error = body["error"]
    message = " ".join(str(error.get("message") or "").split())
    details = error.get("details")
    if isinstance(details, list):
        fields = [
            f"{item.get('field')}: {item.get('message')}"
            for item in details
            if isinstance(item, Mapping) and item.get("field")
        ]
        if fields:
            message = f"{message} ({'; '.join(fields)})"
    return str(error.get("code") or ""), message[:300]


def _api_error(status: int, headers: Mapping[str, str], code: str, message: str) -> ProviderError:
    retry_after = retry_after_s(headers)
    text = f"{code}: {message}" if code else message
    kind: type[ProviderError] | None = None
    if status == 429:
        kind = QuotaExceeded if "credit" in f"{code} {message}".lower() else RateLimited
    elif status >= 500:
        kind = ProviderUnavailable  # "Something's up on our end": to retry later
    if kind is not None:
        return kind(
            f"linkup answered HTTP {status}: {text}"[:500],
            provider="linkup",
            http_status=status,
            retry_after_s=retry_after,
        )
    return from_status("linkup", status, text, retry_after)


PROVIDER = Provider(INFO, build_request, parse_response)
