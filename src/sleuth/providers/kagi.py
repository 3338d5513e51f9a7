"""Kagi Search API (v0, `GET /api/v0/search`) as a provider.

Request (the Search API page): `GET https://kagi.com/api/v0/search?q=…&limit=10` with
`Authorization: Bot <token>`. The API takes no time-range, domain or language
parameter (it inherits the account's own search settings), so the gateway filters.

Response (the Response Format page's envelope):

    {"meta": {"id": "…", "node": "us-central1", "ms": 213, "api_balance": 123.456},
     "data": [{"t": 0, "url": "…", "title": "…", "snippet": "…",
               "published": "…", "thumbnail": {"url": "/proxy/…", …}},
              {"t": 1, "list": ["related search", …]}]}

`t: 0` objects are results; `t: 1` holds related searches (other queries, not
answers) and is left out. `meta.api_balance` is the remaining balance in dollars.

Errors: `{"meta": {…}, "data": null, "error": [{"code": 1, "msg": "…", "ref": null}]}`
with codes 0 internal error → `ProviderUnavailable`, 1 malformed request →
`ProviderRejected`, 2 unauthorized → `AuthFailed`, 100 no billing information and
101 insufficient credit → `QuotaExceeded` (money, not time, brings them back).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sleuth.errors import (
    AuthFailed,
    MissingApiKey,
    ProviderError,
    ProviderRejected,
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
    retry_after_s,
)
from sleuth.providers.mapping import FieldMapping, hit_from, json_records

INFO = ProviderInfo(
    name="kagi",
    docs_url="https://help.kagi.com/kagi/api/search.html",
    needs_key=True,
    time_range=False,
    domain_filter=False,
    language=False,
    query_style="keywords",
    max_results=50,
    text_format="text",
    default_url="https://kagi.com/api/v0/search",
    api_key_env="KAGI_API_KEY",
)

_KINDS: dict[int, type[ProviderError]] = {
    0: ProviderUnavailable,
    1: ProviderRejected,
    2: AuthFailed,
    100: QuotaExceeded,
    101: QuotaExceeded,
}


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey("kagi needs an API token (providers.kagi.api_key_env)", provider="kagi")
    return HttpRequest(
        method="GET",
        url=settings.base_url or INFO.default_url,
        params={"q": query.text, "limit": str(max(1, min(query.max_results, INFO.max_results)))},
        headers={"Authorization": f"Bot {settings.api_key}", "Accept": "application/json"},
    )


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    error = _error(body)
    if error is not None:
        raise _api_error(status, headers, *error)
    _, found = json_records("kagi", status, headers, body, mapping)
    return [hit_from(mapping, entry) for entry in found if entry.get("t") == 0]


def _error(body: Any) -> tuple[int | None, str] | None:
    """The first entry of the `error` array: `(code, msg)`; None without one."""
    if not isinstance(body, Mapping) or not isinstance(body.get("error"), list):
        return None
    entries = [entry for entry in body["error"] if isinstance(entry, Mapping)]
    if not entries:
        return None
    code = entries[0].get("code")
    message = "; ".join(" ".join(str(entry.get("msg") or "").split()) for entry in entries)
    return (code if isinstance(code, int) else None), message[:300]


def _api_error(
    status: int, headers: Mapping[str, str], code: int | None, message: str
) -> ProviderError:
    retry_after = retry_after_s(headers)
    kind = _KINDS.get(code) if code is not None else None
    if kind is None:
        return from_status("kagi", status if status >= 300 else 502, message, retry_after)
    return kind(
        f"kagi answered HTTP {status}, error {code}: {message}"[:500],
        provider="kagi",
        http_status=status,
        retry_after_s=retry_after,
    )


PROVIDER = Provider(INFO, build_request, parse_response)
