"""The Brave Search API (Web Search endpoint) as a provider.

Request: `GET https://api.search.brave.com/res/v1/web/search?q=…&count=N
&result_filter=web,infobox,faq,news&text_decorations=false&search_lang=…&ui_lang=…
[&freshness=pw|pm|py]`, with the key in the `X-Subscription-Token` header (never in
the query string).

Response (`WebSearchApiResponse`; `web` is absent when nothing was found):

    {"type": "search",
     "query": {"original": "python site:docs.python.org", "more_results_available": true,
               "search_operators": {"applied": true, "cleaned_query": "python",
                                    "sites": ["docs.python.org"]}},
     "web": {"type": "search", "family_friendly": true,
             "results": [{"type": "search_result", "subtype": "generic",
                          "title": "…", "url": "…", "description": "…",
                          "page_age": "2024-10-07T00:00:00", "age": "October 7, 2024",
                          "language": "en", "meta_url": {"hostname": "docs.python.org", …},
                          "profile": {"name": "Python documentation", …},
                          "extra_snippets": ["…"]}]}}

`page_age` is an ISO date and becomes `published_at`; `age` is a display string
("2 days ago", "October 7, 2024") and stays in the extras.

The other sections asked for are answers too, read here (a `FieldMapping` has one
result path) and kept in their order around the web results:

- `infobox.results[]` (a knowledge panel: `title`, `url`, `description`, `long_desc`,
  `attributes` as `[label, value]` pairs, `website_url`) comes first, with its facts
  in `fields.attributes` and `fields.section: "infobox"`;
- `faq.results[]` (`question`, `answer`, `title`, `url`): the question is the title,
  the answer the snippet, `fields.section: "faq"`, `fields.page_title`;
- `news.results[]` (`title`, `url`, `description`, `age`, `page_age`, `source`) are
  results with `fields.section: "news"`, dated by `page_age` like web results.

`count` applies to the web results alone; the other sections are small (a panel, a
few questions, a few stories). Videos, discussions, locations and the rest are not
asked for.

Errors come as `{"type": "ErrorResponse", "error": {"id", "status", "code", "detail",
"meta"}, "time": …}` (the reference's examples show an `errors` list; both are read).
A bad key is a 422 `SUBSCRIPTION_TOKEN_INVALID`, not a 401, so errors are mapped by
code first. Rate limits are reported in `X-RateLimit-Limit/-Remaining/-Reset` (one
comma-separated value per window, e.g. `1, 15000`); there is no documented Retry-After.
A 429 whose spent window is not the first (per-second) one, `X-RateLimit-Remaining:
1, 0`, is the month's quota used up: `QuotaExceeded`, resetting when that window does.

Domain filter: Brave documents a `site:` operator (search operators are marked
experimental). One domain is sent as `site:a`, several as `(site:a OR site:b)`; the
grouping is not documented, and `site:` has been seen acting as a ranking hint for
small sites. Because the filter is declared native (the gateway does not re-filter),
`parse_response` enforces it: it reads the `site:` operators back from
`query.original` (the request echoed) and drops hits from other hosts.

Options (`providers.brave.options`): `country` (e.g. "US", "ALL"), `safesearch`
(off | moderate | strict), `spellcheck` (bool), `extra_snippets` (bool; plan-dependent,
an unsubscribed option answers `OPTION_NOT_IN_PLAN`), `search_lang` / `ui_lang` (override
the language mapping), `api_version` (sent as the `Api-Version` header).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from sleuth.contract import TimeRange
from sleuth.errors import (
    AuthFailed,
    BadResponse,
    MissingApiKey,
    ProviderError,
    ProviderRejected,
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
    expect_object,
    text_or_none,
)
from sleuth.providers.mapping import FieldMapping, hit_from, lookup, records

INFO = ProviderInfo(
    name="brave",
    docs_url="https://api-dashboard.search.brave.com/api-reference/web/search/get",
    needs_key=True,
    time_range=True,
    domain_filter=True,
    language=True,
    query_style="keywords",
    max_results=20,
)

DEFAULT_URL = "https://api.search.brave.com/res/v1/web/search"
# `q`: "Maximum of 400 characters and 50 words in the query."
MAX_QUERY_CHARS = 400
MAX_QUERY_WORDS = 50
# freshness: pd (24 h), pw (7 days), pm (31 days), py (365 days) or YYYY-MM-DDtoYYYY-MM-DD.
_FRESHNESS: dict[TimeRange, str] = {"past_week": "pw", "past_month": "pm", "past_year": "py"}
# search_lang codes from the Codes page (Chinese is zh-hans / zh-hant, not zh); ui_lang
# is a market code.
_LANGUAGES = {"zh": ("zh-hans", "zh-CN"), "en": ("en", "en-US")}
_PASSTHROUGH_OPTIONS = ("country", "safesearch", "spellcheck", "extra_snippets")
_AUTH_CODES = frozenset({"SUBSCRIPTION_TOKEN_INVALID", "SUBSCRIPTION_NOT_FOUND"})
_PLAN_CODES = frozenset({"OPTION_NOT_IN_PLAN"})
_RATE_CODES = frozenset({"RATE_LIMITED", "QUOTA_LIMITED"})
# A `site:` operator not preceded by `-` (that would exclude the site).
_SITE = re.compile(r"(?<![\w-])site:([^\s()]+)", re.IGNORECASE)


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.api_key:
        raise MissingApiKey(
            "brave needs an API key (X-Subscription-Token); none is configured",
            provider=INFO.name,
        )
    options = settings.options
    search_lang, ui_lang = _LANGUAGES.get(query.language, (None, None))
    params = {
        "q": _query_text(query.text, query.domain_filter),
        "count": str(max(1, min(query.max_results, INFO.max_results))),
        # Web results and the sections that answer (see the module docstring).
        "result_filter": "web,infobox,faq,news",
        # No highlighting markers inside titles and snippets.
        "text_decorations": "false",
    }
    search_lang = _option(options, "search_lang") or search_lang
    ui_lang = _option(options, "ui_lang") or ui_lang
    if search_lang:
        params["search_lang"] = search_lang
    if ui_lang:
        params["ui_lang"] = ui_lang
    if query.time_range in _FRESHNESS:
        params["freshness"] = _FRESHNESS[query.time_range]
    for key in _PASSTHROUGH_OPTIONS:
        value = _option(options, key)
        if value is not None:
            params[key] = value
    headers = {"Accept": "application/json", "X-Subscription-Token": settings.api_key}
    api_version = _option(options, "api_version")
    if api_version:
        headers["Api-Version"] = api_version
    return HttpRequest(
        method="GET", url=settings.base_url or DEFAULT_URL, params=params, headers=headers
    )


def _option(options: Mapping[str, Any], key: str) -> str | None:
    value = options.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _query_text(text: str, domains: Sequence[str]) -> str:
    """The keywords plus `site:` operators, within Brave's 400-character, 50-word limit.

    The operators are what the caller asked for, so when the whole does not fit the
    keywords lose their last words, never the operators.
    """
    if not domains:
        return text
    sites = [f"site:{domain}" for domain in domains]
    operators = sites[0] if len(sites) == 1 else "(" + " OR ".join(sites) + ")"
    words = text.split()
    operator_words = len(operators.split())
    while words and (
        len(" ".join([*words, operators])) > MAX_QUERY_CHARS
        or len(words) + operator_words > MAX_QUERY_WORDS
    ):
        words.pop()
    if not words:
        raise ProviderRejected(
            f"brave: {len(domains)} domains in domain_filter leave no room for keywords "
            f"within the {MAX_QUERY_CHARS}-character, {MAX_QUERY_WORDS}-word query limit",
            provider=INFO.name,
        )
    return " ".join([*words, operators])


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    if not 200 <= status < 300:
        raise _error(status, headers, body)
    payload = expect_object(INFO.name, body)
    if payload.get("type") == "ErrorResponse" or "error" in payload or "errors" in payload:
        raise _error(status, headers, payload)
    found = records(mapping, payload)
    if found is None or (payload.get("type") != "search" and "web" not in payload):
        raise BadResponse(
            f"brave answered JSON that is not a web search response with a "
            f"`{mapping.results}` list",
            provider=INFO.name,
            http_status=status,
        )
    web = [hit_from(mapping, entry) for entry in found if isinstance(entry, Mapping)]
    hits = [*_infobox_hits(payload), *web, *_faq_hits(payload), *_news_hits(payload, mapping)]
    sites = _requested_sites(payload)
    if sites:
        hits = [hit for hit in hits if _in_sites(hit.url, sites)]
    return hits


def _section(payload: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    found = lookup(payload, f"{name}.results")
    return (
        [entry for entry in found if isinstance(entry, Mapping)] if isinstance(found, list) else []
    )


def _infobox_hits(payload: Mapping[str, Any]) -> list[RawHit]:
    hits = []
    for entry in _section(payload, "infobox"):
        title = text_or_none(entry.get("title")) or text_or_none(entry.get("label"))
        snippet = text_or_none(entry.get("long_desc")) or text_or_none(entry.get("description"))
        if title is None and snippet is None:
            continue
        fields: dict[str, Any] = {"section": "infobox"}
        attributes = {
            str(pair[0]).strip(): str(pair[1]).strip()
            for pair in entry.get("attributes") or []
            if isinstance(pair, list) and len(pair) == 2 and pair[0] and pair[1]
        }
        if attributes:
            fields["attributes"] = attributes
        for name in ("category", "website_url"):
            value = text_or_none(entry.get(name))
            if value is not None:
                fields[name] = value.strip()
        url = text_or_none(entry.get("url"))
        hits.append(
            RawHit(
                url=url.strip() if url else None,
                title=title.strip() if title else None,
                snippet=snippet.strip() if snippet else None,
                fields=fields,
            )
        )
    return hits


def _faq_hits(payload: Mapping[str, Any]) -> list[RawHit]:
    hits = []
    for entry in _section(payload, "faq"):
        question, answer = text_or_none(entry.get("question")), text_or_none(entry.get("answer"))
        if question is None or answer is None:
            continue
        fields: dict[str, Any] = {"section": "faq"}
        page_title = text_or_none(entry.get("title"))
        if page_title is not None:
            fields["page_title"] = page_title.strip()
        url = text_or_none(entry.get("url"))
        hits.append(
            RawHit(
                url=url.strip() if url else None,
                title=question.strip(),
                snippet=answer.strip(),
                fields=fields,
            )
        )
    return hits


def _news_hits(payload: Mapping[str, Any], mapping: FieldMapping) -> list[RawHit]:
    hits = []
    for entry in _section(payload, "news"):
        hit = hit_from(mapping, entry)  # the same fields as a web result
        fields = {**hit.fields, "section": "news"}
        source = text_or_none(entry.get("source"))
        if source is not None:
            fields["source"] = source.strip()
        hits.append(replace(hit, fields=fields))
    return hits


def _requested_sites(payload: Mapping[str, Any]) -> list[str]:
    """The `site:` operators of the query as Brave echoed it (`query.original`)."""
    original = lookup(payload, "query.original")
    if not isinstance(original, str):
        return []
    return [_host(match) for match in _SITE.findall(original) if _host(match)]


def _host(value: str) -> str:
    host = value.strip().lower().removeprefix("https://").removeprefix("http://")
    return host.split("/", 1)[0].removeprefix("www.").strip(".")


def _in_sites(url: str | None, sites: Sequence[str]) -> bool:
    """True when the hit's host is one of `sites` or a subdomain of one (as `site:` means)."""
    host = urlsplit(url).hostname if url else None
    if not host:
        return False
    host = host.removeprefix("www.")
    return any(host == site or host.endswith("." + site) for site in sites)


def _error(status: int, headers: Mapping[str, str], body: Any) -> ProviderError:
    """The contract error for a Brave failure: by the documented `code`, else by status."""
    error = _error_object(body)
    code = str(error.get("code") or "")
    detail = " ".join(str(error.get("detail") or "").split())
    http_status = status if not 200 <= status < 300 else _int(error.get("status")) or status
    retry_after = _retry_after(headers)
    if not code:
        text = body if isinstance(body, str) else str(body)
        return from_status(INFO.name, http_status, " ".join(text.split())[:200], retry_after)
    message = f"brave answered HTTP {http_status} {code}: {detail}"[:500]
    kind: type[ProviderError]
    quota_reset = _quota_reset(headers)
    if code == "QUOTA_LIMITED" or (code in _RATE_CODES and quota_reset is not None):
        kind, retry_after = QuotaExceeded, quota_reset
    elif code in _RATE_CODES:
        kind = RateLimited
    elif code in _AUTH_CODES:
        kind = AuthFailed
    elif code in _PLAN_CODES:
        kind = AuthFailed
        message = f"{message} (the key's plan lacks this option; check providers.brave.options)"
    else:
        return from_status(INFO.name, http_status, f"{code}: {detail}"[:200], retry_after)
    return kind(message, provider=INFO.name, http_status=http_status, retry_after_s=retry_after)


def _error_object(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        return {}
    error = body.get("error")
    if isinstance(error, Mapping):
        return error
    errors = body.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], Mapping):
        return errors[0]
    return {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait: Retry-After if sent, else the reset of the exhausted window.

    `X-RateLimit-Reset: 1, 1419704` with `X-RateLimit-Remaining: 0, 1000` means the
    per-second window is spent and resets in 1 s; with `1, 0` it is the monthly quota.
    Without a remaining count, the shortest reset is the earliest a retry can succeed.
    """
    lowered = {key.lower(): value for key, value in headers.items()}
    retry_after = lowered.get("retry-after", "").strip()
    if retry_after.isdigit():
        return float(retry_after)
    resets = _numbers(lowered.get("x-ratelimit-reset", ""))
    if not resets:
        return None
    remaining = _numbers(lowered.get("x-ratelimit-remaining", ""))
    if len(remaining) == len(resets):
        spent = [reset for reset, left in zip(resets, remaining, strict=True) if left <= 0]
        if spent:
            return max(spent)
    return min(resets)


def _quota_reset(headers: Mapping[str, str]) -> float | None:
    """Seconds until the quota resets when a window past the first (the per-second
    rate) is spent: `X-RateLimit-Remaining: 1, 0` is the month's quota used up."""
    lowered = {key.lower(): value for key, value in headers.items()}
    resets = _numbers(lowered.get("x-ratelimit-reset", ""))
    remaining = _numbers(lowered.get("x-ratelimit-remaining", ""))
    if len(remaining) < 2 or len(remaining) != len(resets):
        return None
    spent = [reset for reset, left in list(zip(resets, remaining, strict=True))[1:] if left <= 0]
    return max(spent) if spent else None


def _numbers(value: str) -> list[float]:
    parts = [part.strip() for part in value.split(",")]
    return [float(part) for part in parts if part.isdigit()]


PROVIDER = Provider(INFO, build_request, parse_response)
