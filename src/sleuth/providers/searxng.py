"""A SearXNG instance (self-hosted metasearch) as a provider.

Request: `GET {base_url}/search?q=…&format=json&pageno=1&language=…[&time_range=…]`.
The instance must list `json` under `search.formats` in its settings.yml; otherwise
it answers 403 (documented), which is reported as `AuthFailed` with that hint.

Response, as `searx.webutils.get_json_response` writes it (the docs show no sample):

    {"query": "…", "number_of_results": 0,
     "results": [{"url": "…", "title": "…", "content": "…", "engine": "bing",
                  "engines": ["bing", "brave"], "positions": [1, 3], "score": 2.5,
                  "category": "general", "template": "default.html",
                  "parsed_url": ["https", "host", "/path", "", "", ""],
                  "publishedDate": "2025-03-01T00:00:00"}],  # or null, or absent
     "answers": [], "corrections": [], "infoboxes": [], "suggestions": [],
     "unresponsive_engines": [["google", "CAPTCHA"]]}

`content` is "" rather than absent when an engine gave none (SearXNG also blanks it
when it repeats the title). `number_of_results` is often 0 even with results, so it
is not trusted. Domain filtering is done by the gateway, not with `site:` (not every
engine understands it).

The answers the page shows beside the results are results too, first:
`infoboxes[]` (`infobox` the title, `id` its page, `content`, `urls[]`, `attributes[]`
of `{label, value}`) with their facts in `fields.attributes` and `fields.section:
"infobox"`, then `answers[]` (`{answer, url, engine}` objects, or plain strings in
older versions) with `fields.section: "answer"` and a URL only when one was sent.
Suggestions and corrections are other queries, not answers, and are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sleuth.contract import TimeRange
from sleuth.errors import AuthFailed, ConfigError, ProviderUnavailable
from sleuth.providers.base import (
    HttpRequest,
    Provider,
    ProviderInfo,
    ProviderQuery,
    ProviderSettings,
    RawHit,
    text_or_none,
)
from sleuth.providers.mapping import FieldMapping, hit_from, json_records

INFO = ProviderInfo(
    name="searxng",
    docs_url="https://docs.searxng.org/dev/search_api.html",
    needs_key=False,
    time_range=True,
    domain_filter=False,
    language=True,
    query_style="keywords",
    max_results=20,
)

# The docs list `day, month, year`; the server (searx/webadapter.py, parse_time_range)
# also accepts `week`, and engines declare week support in their time_range maps.
_TIME_RANGES: dict[TimeRange, str] = {
    "past_week": "week",
    "past_month": "month",
    "past_year": "year",
}
# SearXNG takes a language code (`zh`, `en`, `zh-CN`, …), `all`, or `auto` (the server
# detects the language of the query). Anything sleuth does not name is left to `auto`.
_LANGUAGES = {"zh": "zh", "en": "en"}
# Per-instance knobs from `providers.searxng.options`, passed through when set.
_PASSTHROUGH_OPTIONS = ("categories", "engines", "safesearch")


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    if not settings.base_url:
        raise ConfigError(
            "providers.searxng.base_url is required (the instance, e.g. http://localhost:8888)",
            provider=INFO.name,
        )
    params = {
        "q": query.text,
        "format": "json",
        "pageno": "1",
        "language": str(settings.options.get("language") or _LANGUAGES.get(query.language, "auto")),
    }
    if query.time_range in _TIME_RANGES:
        params["time_range"] = _TIME_RANGES[query.time_range]
    for key in _PASSTHROUGH_OPTIONS:
        value = settings.options.get(key)
        if value is not None and value != "":
            params[key] = ",".join(value) if isinstance(value, list | tuple) else str(value)
    # No browser-like headers: an instance whose bot limiter refuses API clients
    # answers 429, and the operator should let sleuth's address pass, not be fooled.
    return HttpRequest(
        method="GET",
        url=settings.base_url.rstrip("/") + "/search",
        params=params,
        headers={"Accept": "application/json"},
    )


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    if status == 403:
        raise AuthFailed(
            "searxng answered HTTP 403: the instance refuses format=json; "
            "add `json` to search.formats in its settings.yml",
            provider=INFO.name,
            http_status=status,
        )
    payload, found = json_records(INFO.name, status, headers, body, mapping)
    hits = [
        *_infobox_hits(payload.get("infoboxes")),
        *_answer_hits(payload.get("answers")),
        *(hit_from(mapping, entry) for entry in found),
    ]
    if not hits:
        _raise_if_every_engine_failed(payload.get("unresponsive_engines"), status)
    return hits


def _stripped(value: Any) -> str | None:
    text = text_or_none(value)
    return text.strip() if text else None


def _web_url(value: Any) -> str | None:
    """A link, when it is one: an infobox `id` may be a name rather than a URL."""
    url = _stripped(value)
    return url if url and url.startswith(("https://", "http://")) else None


def _infobox_hits(infoboxes: Any) -> list[RawHit]:
    hits = []
    for box in infoboxes if isinstance(infoboxes, list) else []:
        if not isinstance(box, Mapping):
            continue
        title, content = _stripped(box.get("infobox")), _stripped(box.get("content"))
        if title is None and content is None:
            continue
        fields: dict[str, Any] = {"section": "infobox"}
        attributes = {
            label: value
            for item in box.get("attributes") or []
            if isinstance(item, Mapping)
            and (label := _stripped(item.get("label")))
            and (value := _stripped(item.get("value")))
        }
        if attributes:
            fields["attributes"] = attributes
        engines = box.get("engines") or ([box["engine"]] if box.get("engine") else [])
        if engines:
            fields["engines"] = list(engines)
        url = _web_url(box.get("id"))
        if url is None:
            links = [u for u in box.get("urls") or [] if isinstance(u, Mapping)]
            url = next(
                (_web_url(link.get("url")) for link in links if _web_url(link.get("url"))), None
            )
        hits.append(RawHit(url=url, title=title, snippet=content, fields=fields))
    return hits


def _answer_hits(answers: Any) -> list[RawHit]:
    hits = []
    for answer in answers if isinstance(answers, list) else []:
        entry = answer if isinstance(answer, Mapping) else {"answer": answer}
        text = _stripped(entry.get("answer"))
        if text is None:
            continue
        fields: dict[str, Any] = {"section": "answer"}
        engine = _stripped(entry.get("engine"))
        if engine is not None:
            fields["engine"] = engine
        hits.append(RawHit(url=_web_url(entry.get("url")), title=None, snippet=text, fields=fields))
    return hits


def _raise_if_every_engine_failed(unresponsive: Any, status: int) -> None:
    """No results while engines failed is an outage (recoverable), not an empty answer.

    SearXNG still answers 200 then; `unresponsive_engines` holds `[name, reason]`
    pairs such as `["google", "CAPTCHA"]` or `["brave", "too many requests"]`.
    """
    if not isinstance(unresponsive, list) or not unresponsive:
        return
    reasons = []
    for item in unresponsive:
        if isinstance(item, list | tuple) and item:
            reasons.append(": ".join(str(part) for part in item[:2]))
        else:
            reasons.append(str(item))
    raise ProviderUnavailable(
        f"searxng found nothing and its engines failed: {'; '.join(reasons)}"[:500],
        provider=INFO.name,
        http_status=status,
    )


PROVIDER = Provider(INFO, build_request, parse_response)
