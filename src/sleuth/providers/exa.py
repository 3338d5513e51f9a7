"""Exa (neural web search, `POST /search`) as a provider.

Request: `POST https://api.exa.ai/search` with the key in the `x-api-key` header (the
docs also accept `Authorization: Bearer <key>`; one header is enough) and a JSON body:

    {"query": "…", "type": "auto", "numResults": 5,
     "contents": {"highlights": {"maxCharacters": 1000}},
     "includeDomains": ["docs.python.org"],                 # only with a domain filter
     "startPublishedDate": "2025-02-22T12:00:00.000Z"}      # only with a time range

Exa is built for natural-language queries, so it gets the original wording. It has
no language parameter (`userLocation` is a country, not a language), so language
is left to the gateway. Without `contents` a result carries no page text at all;
highlights (the passages Exa picks as most relevant to the query) are the snippet.

Response (SearchResponse in the OpenAPI spec of the docs):

    {"requestId": "b5947044c4b78efa9552a7c89b306d95", "resolvedSearchType": "",
     "results": [{"id": "https://arxiv.org/abs/2307.06435", "title": "…",
                  "url": "https://arxiv.org/pdf/2307.06435.pdf",
                  "publishedDate": "2023-11-16T01:36:32.547Z",  # or null / absent
                  "author": "…", "image": "…", "favicon": "…",
                  "text": "…", "summary": "…",                    # only when requested
                  "highlights": ["…"], "highlightScores": [0.46]}],
     "costDollars": {"total": 0.007, "search": {"neural": 0.007}}}

Errors carry the documented envelope `{"requestId", "error", "tag"}` with an
open-ended set of tags; they are mapped on the status first and refined by the tag.
402 (`NO_MORE_CREDITS`, `API_KEY_BUDGET_EXCEEDED`, `TEAM_BUDGET_EXCEEDED`) is a
`ProviderRejected`, not a `RateLimited`: the credits or the budget do not come back
by waiting a few seconds (someone has to top up or raise the budget), so retrying
only burns calls; the fallback ladder should move on to the next provider at once.

Options (`providers.exa.options` in sleuth.yaml), all optional:
- `type`: search type, default `auto`; `fast` and `instant` answer quicker, the
  `deep*` types take several seconds and need a longer `timeout_s`.
- `category`: e.g. `news` or `research paper`. Note: `company` and `people` refuse
  date filters and `excludeDomains` with a 400.
- `user_location`: two-letter ISO country code, sent as `userLocation`.
- `highlights_max_characters`: highlight budget per result (default 1000).
- `text_max_characters`: also ask for the page text, cut by Exa to this many
  characters; it is the snippet's last fallback (the clean stage shortens it). Off by
  default: page text is billed per result.
- `now`: ISO 8601 reference time for `startPublishedDate`, for tests only; in
  service the current UTC time is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
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
    retry_after_s,
)
from sleuth.providers.mapping import FieldMapping, hit_from, json_records

INFO = ProviderInfo(
    name="exa",
    docs_url="https://exa.ai/docs/reference/search",
    needs_key=True,
    time_range=True,
    domain_filter=True,
    language=False,
    query_style="natural",
    # numResults is 1..100 ("the maximum public limit"; some search types allow fewer).
    max_results=100,
)

DEFAULT_URL = "https://api.exa.ai/search"
DEFAULT_TYPE = "auto"
DEFAULT_HIGHLIGHT_CHARS = 1000
# The same spans the gateway uses when it filters by date itself (stages/results/scope.py).
_SPANS: dict[TimeRange, timedelta] = {
    "past_week": timedelta(days=7),
    "past_month": timedelta(days=31),
    "past_year": timedelta(days=366),
}
# Tags from the documented error envelope that refine the status-based mapping.
_CREDIT_TAGS = frozenset({"NO_MORE_CREDITS", "API_KEY_BUDGET_EXCEEDED", "TEAM_BUDGET_EXCEEDED"})
# A 403 with this tag is Exa's moderation refusing the query, not a key problem.
_REFUSED_CONTENT_TAGS = frozenset({"PROHIBITED_CONTENT"})


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey("exa needs an API key (providers.exa.api_key_env)", provider=INFO.name)
    options = settings.options
    body: dict[str, Any] = {
        "query": query.text,
        "type": str(options.get("type") or DEFAULT_TYPE),
        "numResults": max(1, min(query.max_results, INFO.max_results)),
        "contents": _contents(options),
    }
    if query.domain_filter:
        body["includeDomains"] = list(query.domain_filter)
    span = _SPANS.get(query.time_range)
    if span is not None:
        body["startPublishedDate"] = _iso_utc(_now(options) - span)
    if options.get("category"):
        body["category"] = str(options["category"])
    if options.get("user_location"):
        body["userLocation"] = str(options["user_location"])
    return HttpRequest(
        method="POST",
        url=settings.base_url or DEFAULT_URL,
        headers={
            "x-api-key": settings.api_key,
            "Content-Type": "application/json",
            "Accept": "application/json",
        },
        json=body,
    )


def _contents(options: Mapping[str, Any]) -> dict[str, Any]:
    highlight_chars = _budget(options, "highlights_max_characters", DEFAULT_HIGHLIGHT_CHARS, 1)
    contents: dict[str, Any] = {"highlights": {"maxCharacters": highlight_chars}}
    text_chars = _budget(options, "text_max_characters", 0, 0)
    if text_chars:
        contents["text"] = {"maxCharacters": text_chars}
    return contents


def _budget(options: Mapping[str, Any], key: str, default: int, lowest: int) -> int:
    """A character budget option; the docs allow 1..10000 (0 here means "do not ask")."""
    value = options.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not lowest <= value <= 10_000:
        raise ConfigError(
            f"providers.exa.options.{key} must be a whole number from {lowest} to 10000, "
            f"got {value!r}",
            provider=INFO.name,
        )
    return value


def _now(options: Mapping[str, Any]) -> datetime:
    """The reference time: `options.now` (tests) or the current UTC time."""
    raw = options.get("now")
    if raw is None:
        return datetime.now(UTC)
    try:
        moment = raw if isinstance(raw, datetime) else datetime.fromisoformat(str(raw))
    except ValueError as exc:
        raise ConfigError(
            f"providers.exa.options.now is not an ISO 8601 time: {raw!r}", provider=INFO.name
        ) from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _iso_utc(moment: datetime) -> str:
    """`2025-02-22T12:00:00.000Z`, the form of the docs' examples."""
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    if _is_error_envelope(body) and (
        not 200 <= status < 300 or str(body.get("tag") or "") in _CREDIT_TAGS
    ):
        raise _api_error(status, headers, body)
    _, found = json_records(INFO.name, status, headers, body, mapping, _error_suffix)
    return [hit_from(mapping, entry) for entry in found]


def _error_suffix(payload: Mapping[str, Any]) -> str:
    error = payload.get("error")
    return f": {' '.join(str(error).split())[:200]}" if error else ""


def _is_error_envelope(body: Any) -> bool:
    return isinstance(body, Mapping) and isinstance(body.get("error"), str)


def _api_error(status: int, headers: Mapping[str, str], body: Mapping[str, Any]) -> ProviderError:
    """The contract error for Exa's `{"requestId", "error", "tag"}` envelope.

    The docs say to branch on the status first and treat unknown tags as detail, so
    the status decides and a few known tags refine it.
    """
    tag = str(body.get("tag") or "")
    detail = " ".join(str(body.get("error") or "").split())
    if tag:
        detail = f"{tag}: {detail}"
    if body.get("requestId"):
        detail += f" (requestId {body['requestId']})"
    retry_after = retry_after_s(headers)
    kind: type[ProviderError]
    if status == 402 or tag in _CREDIT_TAGS:
        kind = QuotaExceeded
        detail += "; top up the Exa credits or raise the key's budget"
    elif status == 429:
        kind = RateLimited
    elif status == 401:
        kind = AuthFailed
    elif status == 403:
        kind = ProviderRejected if tag in _REFUSED_CONTENT_TAGS else AuthFailed
    elif status == 500:
        # Documented as a fault on Exa's side, to retry after a brief wait; a 500
        # without Exa's envelope (a proxy's page, say) stays a BadResponse.
        kind = ProviderUnavailable
    else:
        return from_status(INFO.name, status, detail, retry_after)
    return kind(
        f"exa answered HTTP {status}: {detail}"[:500],
        provider=INFO.name,
        http_status=status,
        retry_after_s=retry_after,
    )


PROVIDER = Provider(INFO, build_request, parse_response)
