"""DuckDuckGo web search, through the `ddgs` library, as a provider.

DuckDuckGo offers no JSON web-search API, so the transport hands this call to the
maintained `ddgs` library (https://github.com/deedy5/ddgs) instead of sending HTTP
itself. The provider stays sans-I/O and never imports `ddgs`: `build_request`
describes the library call as `GET ddgs:text` with string params, and
`sleuth.transport` runs

    DDGS(proxy=…, timeout=…).text(q, region=…, safesearch=…, timelimit=… or None,
                                   max_results=int(…), backend=…)

in a worker thread, answering status 200 with `{"results": [<the dicts>]}` and
turning the library's exceptions into `SearchError`s.

Response, as `DDGS.text` returns it (ddgs/results.py `TextResult.__dict__`):

    {"results": [{"title": "…", "href": "https://…", "body": "…"}]}

Every key is always present; a missing value is "". The DuckDuckGo engine reads
`href` and `body` from the same snippet link, so a result without a snippet also
comes back with `href: ""` (its URL stays missing: never rebuilt). ddgs has already
stripped tags, unescaped entities, percent-decoded `href`, dropped ads and
re-ordered the list (Wikipedia first, then title+body matches). There is no date.
With the `duckduckgo` backend the results come from `html.duckduckgo.com/html/`,
one page of about 10 results per call.

Natively supported: time range (`df` = d/w/m/y), domain filter (the `site:` operator
of https://duckduckgo.com/duckduckgo-help-pages/results/syntax/, passed through in
the query by ddgs), region (`kl` codes of
https://duckduckgo.com/duckduckgo-help-pages/settings/params/).

Options (`providers.duckduckgo.options`):
  backend     ddgs backend(s), comma-separated; default `duckduckgo` so only
              DuckDuckGo is asked
  region      a `kl` code for every query, or a mapping language → code
              (defaults: zh → cn-zh, en → us-en, anything else → wt-wt)
  safesearch  on | moderate | off (default moderate; ddgs 9.16's DuckDuckGo engine
              ignores it)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sleuth.contract import TimeRange
from sleuth.errors import ConfigError
from sleuth.providers.base import (
    HttpRequest,
    Provider,
    ProviderInfo,
    ProviderQuery,
    ProviderSettings,
    RawHit,
)
from sleuth.providers.mapping import FieldMapping, hit_from, json_records

INFO = ProviderInfo(
    name="duckduckgo",
    docs_url="https://github.com/deedy5/ddgs",
    needs_key=False,
    time_range=True,
    domain_filter=True,
    language=True,
    query_style="keywords",
    # ddgs asks each engine for one page; DuckDuckGo's HTML page 1 holds 10 results
    # (ddgs/engines/duckduckgo.py: page 2 starts at offset 10).
    max_results=10,
    text_format="text",
)

REQUEST_URL = "ddgs:text"
DEFAULT_BACKEND = "duckduckgo"

# ddgs `timelimit`: d, w, m, y (README, text()); sent to DuckDuckGo as `df`.
_TIME_LIMITS: dict[TimeRange, str] = {
    "past_week": "w",
    "past_month": "m",
    "past_year": "y",
}
# DuckDuckGo `kl` region codes; `wt-wt` is "No region". us-en is ddgs's own default.
_REGIONS = {"zh": "cn-zh", "en": "us-en"}
_NO_REGION = "wt-wt"
_REGION_CODE = re.compile(r"[a-z]{2}-[a-z]{2,3}")
_SAFESEARCH = ("on", "moderate", "off")
# Text backends enabled in ddgs 9.16.1 (ddgs.engines.ENGINES["text"]) plus its
# `auto`/`all`. ddgs drops an unknown name with a log line and falls back to `auto`
# (every engine) when none is left, so an unknown name is refused here instead.
_BACKENDS = frozenset(
    {
        "auto",
        "all",
        "brave",
        "duckduckgo",
        "grokipedia",
        "mojeek",
        "startpage",
        "wikipedia",
        "yahoo",
    }
)


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    params = {
        "q": _with_sites(query.text, query.domain_filter),
        "region": _region(query.language, settings.options.get("region")),
        "safesearch": _safesearch(settings.options.get("safesearch")),
        "max_results": str(max(1, min(query.max_results, INFO.max_results))),
        "backend": _backend(settings.options.get("backend")),
    }
    if query.time_range in _TIME_LIMITS:
        params["timelimit"] = _TIME_LIMITS[query.time_range]
    return HttpRequest(method="GET", url=REQUEST_URL, params=params)


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    _, found = json_records(INFO.name, status, headers, body, mapping)
    hits = [hit_from(mapping, entry) for entry in found]
    # A block of the results page that is not a result (ddgs matches every
    # div whose class contains "body") comes back with every field "": no hit at all.
    return [hit for hit in hits if hit.url or hit.title or hit.snippet]


def _with_sites(text: str, domains: tuple[str, ...]) -> str:
    """The query with DuckDuckGo's `site:` operator; several domains are OR-ed."""
    if not domains:
        return text
    return f"{text} {' OR '.join(f'site:{domain}' for domain in domains)}"


def _region(language: str, option: Any) -> str:
    chosen = option.get(language) if isinstance(option, Mapping) else option
    region = str(chosen or _REGIONS.get(language, _NO_REGION)).strip().lower()
    if not _REGION_CODE.fullmatch(region):
        raise ConfigError(
            f"providers.duckduckgo.options.region: {region!r} is not a DuckDuckGo region "
            "code such as us-en, cn-zh, tw-tzh or wt-wt",
            provider=INFO.name,
        )
    return region


def _safesearch(option: Any) -> str:
    value = str(option or "moderate").strip().lower()
    if value not in _SAFESEARCH:
        raise ConfigError(
            f"providers.duckduckgo.options.safesearch: {value!r} is not one of "
            f"{', '.join(_SAFESEARCH)}",
            provider=INFO.name,
        )
    return value


def _backend(option: Any) -> str:
    names = option if isinstance(option, list | tuple) else str(option or "").split(",")
    chosen = [str(name).strip().lower() for name in names if str(name).strip()]
    unknown = [name for name in chosen if name not in _BACKENDS]
    if unknown:
        raise ConfigError(
            f"providers.duckduckgo.options.backend: unknown ddgs backend "
            f"{', '.join(unknown)}; allowed: {', '.join(sorted(_BACKENDS))}",
            provider=INFO.name,
        )
    return ",".join(chosen) or DEFAULT_BACKEND


PROVIDER = Provider(INFO, build_request, parse_response)
