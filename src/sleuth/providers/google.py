"""Google Programmable Search Engine (Custom Search JSON API, `cse.list`) as a provider.

Request: `GET https://www.googleapis.com/customsearch/v1?key=…&cx=…&q=…&num=N&start=1
[&dateRestrict=d7|m1|y1][&siteSearch=…&siteSearchFilter=i][&lr=lang_en&hl=en]`.
The API key travels as the `key` query parameter, as the docs ("Using REST") show;
the transport records responses only, so it never reaches a cassette. `cx` (the
search engine ID) comes from `providers.google.options.cx`. `num` is 1..10.

Response (reference: REST Resource `Search`; shape as the API sends it):

    {"kind": "customsearch#search", "url": {…}, "queries": {"request": [{…}], "nextPage": […]},
     "context": {"title": "…"},
     "searchInformation": {"searchTime": 0.31, "totalResults": "1250000", …},
     "items": [{"kind": "customsearch#result", "title": "…", "htmlTitle": "…",
                "link": "https://…", "displayLink": "docs.python.org", "snippet": "…",
                "htmlSnippet": "…", "formattedUrl": "…", "htmlFormattedUrl": "…",
                "pagemap": {"metatags": [{"og:description": "…",
                                          "article:published_time": "2024-10-07T…"}],
                            "cse_thumbnail": [{"src": "…"}], …}}]}

`items` is absent, not empty, when nothing matched. A result has no date field of its
own: dates come from the page's meta tags in `pagemap` (written by the site, so
"8 November 2017" happens); only ISO 8601 / RFC 2822 values count as `published_at`,
another text is kept as the `published_text` extra.

Errors are Google's JSON error objects, `{"error": {"code", "message", "errors":
[{"reason", "domain", "message"}], "status", "details": [{"reason": …}]}}`, mapped by
reason: the day's quota used up (`dailyLimitExceeded`, `quotaExceeded`, or a rate
reason whose message names the "Queries per day" limit) is `QuotaExceeded`, resetting at
midnight Pacific time; other rate reasons (`rateLimitExceeded`, … or status
RESOURCE_EXHAUSTED) are `RateLimited`; a bad key (`keyInvalid`, or
`API_KEY_INVALID` in `details`, which Google sends with HTTP 400) and refused access
(PERMISSION_DENIED, e.g. "This project does not have the access to Custom Search JSON
API": the API is closed to new customers) are `AuthFailed`.

Options read from `providers.google.options`: `cx` (required), `safe` ("active" or
"off"; unset leaves the engine's setting), `gl` (country boost, e.g. "cn"), and `lr` /
`hl` to override the language restriction and interface language ("" leaves one out).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, time, timedelta
from email.utils import parsedate_to_datetime
from typing import Any
from zoneinfo import ZoneInfo

from sleuth.contract import TimeRange
from sleuth.errors import (
    AuthFailed,
    BadResponse,
    ConfigError,
    MissingApiKey,
    ProviderError,
    ProviderRejected,
    ProviderUnavailable,
    QuotaExceeded,
    RateLimited,
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
from sleuth.providers.mapping import FieldMapping, hit_from, json_records, lookup

INFO = ProviderInfo(
    name="google",
    docs_url="https://developers.google.com/custom-search/v1/reference/rest/v1/cse/list",
    needs_key=True,
    time_range=True,
    domain_filter=True,
    language=True,
    query_style="keywords",
    max_results=10,
)

DEFAULT_URL = "https://www.googleapis.com/customsearch/v1"
# dateRestrict takes d[n], w[n], m[n] or y[n] (past n days, weeks, months, years).
_DATE_RESTRICT: dict[TimeRange, str] = {"past_week": "d7", "past_month": "m1", "past_year": "y1"}
# `lr` restricts documents to a language; `hl` is the interface language.
_LANGUAGES = {"zh": ("lang_zh-CN", "zh-CN"), "en": ("lang_en", "en")}
_RATE_REASONS = frozenset(
    {"rateLimitExceeded", "userRateLimitExceeded", "limitExceeded", "RATE_LIMIT_EXCEEDED"}
)
# The day's queries are used up: no retry helps before the reset at midnight Pacific.
# A `rateLimitExceeded` whose message names the "Queries per day" limit is one too.
_QUOTA_REASONS = frozenset({"dailyLimitExceeded", "dailyLimitExceededUnreg", "quotaExceeded"})
_PACIFIC = ZoneInfo("America/Los_Angeles")
_AUTH_REASONS = frozenset(
    {
        "keyInvalid",
        "keyExpired",
        "API_KEY_INVALID",
        "API_KEY_EXPIRED",
        "accessNotConfigured",
        "SERVICE_DISABLED",
        "forbidden",
        "ipRefererBlocked",
        "API_KEY_SERVICE_BLOCKED",
        "API_KEY_HTTP_REFERRER_BLOCKED",
        "API_KEY_IP_ADDRESS_BLOCKED",
    }
)
_UNAVAILABLE_REASONS = frozenset({"backendError", "UNAVAILABLE"})


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey("google needs an API key (sent as `key`)", provider=INFO.name)
    cx = _option(settings, "cx", None)
    if cx is None:
        raise ConfigError(
            "providers.google.options.cx is required: the Programmable Search Engine ID",
            provider=INFO.name,
            field="providers.google.options.cx",
        )
    text = query.text
    params = {
        "key": settings.api_key,
        "cx": cx,
        "q": text,
        "num": str(max(1, min(query.max_results, INFO.max_results))),
        "start": "1",
    }
    if query.time_range in _DATE_RESTRICT:
        params["dateRestrict"] = _DATE_RESTRICT[query.time_range]
    if len(query.domain_filter) == 1:
        params["siteSearch"] = query.domain_filter[0]
        params["siteSearchFilter"] = "i"
    elif query.domain_filter:
        # siteSearch names one site; several are OR-ed `site:` operators in the query.
        params["q"] = f"{text} " + " OR ".join(f"site:{d}" for d in query.domain_filter)
    lr, hl = _LANGUAGES.get(query.language, (None, None))
    for name, default in (("lr", lr), ("hl", hl), ("safe", None), ("gl", None)):
        value = _option(settings, name, default)
        if value is not None:
            params[name] = value
    return HttpRequest(
        method="GET",
        url=settings.base_url or DEFAULT_URL,
        params=params,
        headers={"Accept": "application/json"},
    )


def _option(settings: ProviderSettings, name: str, default: str | None) -> str | None:
    value = settings.options.get(name, default)
    return str(value) if value is not None and value != "" else None


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        raise _api_error(body["error"], status, headers)
    payload, found = json_records(INFO.name, status, headers, body, mapping)
    if not found and not any(key in payload for key in ("kind", "queries", "searchInformation")):
        raise BadResponse(
            "google answered a JSON object that is not a search response",
            provider=INFO.name,
            http_status=status,
        )
    return [_dated(mapping, entry) for entry in found]


def _dated(mapping: FieldMapping, entry: Mapping[str, Any]) -> RawHit:
    """The hit, with `published_at` only when an alias holds an absolute date.

    Meta tags are written by each site; the first alias holding an ISO 8601 or
    RFC 2822 date wins. A text that is no such date is kept as `published_text`.
    """
    hit = hit_from(mapping, entry)
    if hit.published_at is None or _is_absolute_date(hit.published_at):
        return hit
    others = tuple(name for name in hit.fell_back if name != "published_at")
    for position, alias in enumerate(mapping.fields.get("published_at", [])):
        value = lookup(entry, alias)
        if isinstance(value, str) and _is_absolute_date(value.strip()):
            fell_back = (*others, "published_at") if position > 0 else others
            return replace(hit, published_at=value.strip(), fell_back=fell_back)
    fields = {**hit.fields, "published_text": hit.published_at}
    return replace(hit, published_at=None, fields=fields, fell_back=others)


def _is_absolute_date(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        try:
            parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return False
    return True


def _api_error(error: Mapping[str, Any], status: int, headers: Mapping[str, str]) -> ProviderError:
    """The contract error for Google's JSON error object, chosen by reason and status."""
    reasons: set[str] = set()
    for key in ("errors", "details"):
        entries = error.get(key)
        if isinstance(entries, list):
            reasons.update(
                str(entry["reason"])
                for entry in entries
                if isinstance(entry, Mapping) and entry.get("reason")
            )
    state = str(error.get("status") or "")
    sent_code = error.get("code")
    code = sent_code if isinstance(sent_code, int) else status
    kind: type[ProviderError]
    text = " ".join(str(error.get("message") or "").split())
    retry_after = retry_after_s(headers)
    if reasons & _QUOTA_REASONS or (
        (reasons & _RATE_REASONS or code == 429) and "per day" in text.lower()
    ):
        kind = QuotaExceeded
        if retry_after is None:
            retry_after = _until_pacific_midnight(headers)
    elif reasons & _RATE_REASONS or state == "RESOURCE_EXHAUSTED" or code == 429:
        kind = RateLimited
    elif (
        reasons & _AUTH_REASONS
        or state in ("UNAUTHENTICATED", "PERMISSION_DENIED")
        or code in (401, 403)
    ):
        kind = AuthFailed
    elif reasons & _UNAVAILABLE_REASONS or state == "UNAVAILABLE" or code in (502, 503, 504):
        kind = ProviderUnavailable
    elif 400 <= code < 500:
        kind = ProviderRejected
    else:
        kind = BadResponse
    named = ", ".join(sorted(reasons | ({state} if state else set()))) or "no reason"
    return kind(
        f"google answered HTTP {status} ({named}): {text}"[:500],
        provider=INFO.name,
        http_status=status,
        retry_after_s=retry_after,
    )


def _until_pacific_midnight(headers: Mapping[str, str]) -> float | None:
    """Seconds from the answer's Date to the next midnight Pacific time, when Google's
    daily quotas reset; None without a Date header (no clock is read here)."""
    date = {key.lower(): value for key, value in headers.items()}.get("date")
    if not date:
        return None
    try:
        sent = parsedate_to_datetime(date).astimezone(_PACIFIC)
    except (TypeError, ValueError):
        return None
    midnight = datetime.combine(sent.date() + timedelta(days=1), time(), tzinfo=_PACIFIC)
    return (midnight - sent).total_seconds()


PROVIDER = Provider(INFO, build_request, parse_response)
