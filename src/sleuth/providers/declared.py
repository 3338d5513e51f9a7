r"""A back end declared in configuration alone: any HTTP search API, no module.

`providers.<name>` with `kind: http` and an `http:` section describes the call and
the answer; `provider_for(name, spec)` turns it into the same `Provider` a module
defines, so dispatch, resilience, quotas, egress and cassettes treat it as any other.

    providers:
      acme:
        kind: http
        base_url: https://search.acme.internal
        api_key_env: ACME_SEARCH_KEY
        http:
          method: POST
          url: "{base_url}/v1/search"
          headers: {Authorization: "Bearer {api_key}"}
          body: {q: "{query}", size: "{max_results}", since: "{time_range}"}
          time_range: {past_week: 7d, past_month: 30d, past_year: 365d}
          pagination: {style: page, param: page, page_size: 10, max_pages: 3}
          results: data.hits
          fields: {url: [link], title: [title], snippet: [summary, body]}
          errors:
            - match: {status: 403, body_contains: quota}
              error: quota_exceeded

Templates: `{name}` in the URL, a parameter, a header or a body string is filled
with one of `PLACEHOLDERS`; `{{` and `}}` are literal braces. A value that is a
placeholder alone keeps its type (`"{max_results}"` sends the number `10`), and a key
whose value is a placeholder alone with nothing to say (`{time_range}` for a search
over any time, `{domains}` with no domain filter) is left out. Pure: the key comes in
`ProviderSettings.api_key`, read by `sleuth.dispatch` from `api_key_env`.

>>> spec = HttpSpec.model_validate({"url": "{base_url}/s", "params": {"q": "{query}"},
...     "results": "items", "fields": {"url": ["u"], "title": ["t"]}})
>>> provider = provider_for("acme", spec)
>>> query = ProviderQuery(text="rust", original="rust", max_results=5, language="en")
>>> request = provider.build_request(query, ProviderSettings(base_url="http://a"))
>>> request.url, dict(request.params)
('http://a/s', {'q': 'rust'})
>>> [hit.title for hit in provider.parse_response(200, {}, {"items": [{"t": "R"}]},
...     provider.default_mapping)]
['R']
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sleuth.contract import TimeRange
from sleuth.errors import (
    AuthFailed,
    BadResponse,
    MissingApiKey,
    NoResults,
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
    QueryStyle,
    RawHit,
    check_status,
    expect_object,
    retry_after_s,
)
from sleuth.providers.mapping import FieldMapping, UnifiedField, hit_from, parse_path, records
from sleuth.resilience.rules import compiled_or_none, status_ranges

__all__ = ["PLACEHOLDERS", "ErrorMapping", "HttpSpec", "Pagination", "provider_for"]

#: What a template may name, and what it is filled with.
PLACEHOLDERS: Mapping[str, str] = {
    "query": "the query: the rewritten keywords, or the original wording when "
    "query_style is natural",
    "original": "the query exactly as asked",
    "max_results": "results to ask for (per page when paginated)",
    "language": "the query's language, e.g. en or zh",
    "time_range": "the `time_range` table's value for the request's time range",
    "domains": "the request's domain_filter (a list; comma-joined in a parameter)",
    "api_key": "the value of the provider's api_key_env",
    "base_url": "providers.<name>.base_url",
    "page": "the page number (pagination style page)",
    "offset": "the index of the page's first result (pagination style offset)",
}
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_ALONE = re.compile(r"^\{([a-z_]+)\}$")

#: The error classes an `errors` entry may name, by the name it uses.
ERROR_CLASSES: Mapping[str, type[ProviderError]] = {
    "rate_limited": RateLimited,
    "quota_exceeded": QuotaExceeded,
    "auth_failed": AuthFailed,
    "provider_rejected": ProviderRejected,
    "provider_unavailable": ProviderUnavailable,
    "bad_response": BadResponse,
    "no_results": NoResults,
}
ErrorClassName = Literal[
    "rate_limited",
    "quota_exceeded",
    "auth_failed",
    "provider_rejected",
    "provider_unavailable",
    "bad_response",
    "no_results",
]


class ErrorMatch(BaseModel):
    """What an answer must look like for an `errors` entry; every key given must fit.
    Status ranges and expressions are read as the error rules read theirs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: tuple[tuple[int, int], ...] | None = Field(
        None, description='HTTP status: 403, "500-599", or a list of either.'
    )
    body_contains: str | None = Field(
        None, min_length=1, description="Substring of the body, case-insensitive."
    )
    body_regex: str | None = Field(None, min_length=1, description="Regex searched in the body.")

    @field_validator("status", mode="before")
    @classmethod
    def _statuses(cls, value: Any) -> Any:
        return None if value is None else status_ranges(value)

    @field_validator("body_regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return compiled_or_none(value)

    def fits(self, status: int, text: str) -> bool:
        if self.status is not None and not any(low <= status <= high for low, high in self.status):
            return False
        if self.body_contains is not None and self.body_contains.casefold() not in text.casefold():
            return False
        return self.body_regex is None or re.search(self.body_regex, text) is not None


class ErrorMapping(BaseModel):
    """One line of the provider's error table: an answer that `match`es is `error`,
    which the error rules then classify as they classify that class from any provider."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    match: ErrorMatch
    error: ErrorClassName = Field(description=f"One of: {', '.join(ERROR_CLASSES)}.")


class Pagination(BaseModel):
    """Ask for more pages while they come full and the request wants more results."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    style: Literal["page", "offset"] = Field(
        description="page: a page number; offset: the index of the page's first result."
    )
    param: str = Field(min_length=1, description="The parameter (or body key) that carries it.")
    start: int | None = Field(None, ge=0, description="The first page's value; page 1, offset 0.")
    page_size: int = Field(10, ge=1, le=100, description="Results one page holds at most.")
    max_pages: int = Field(3, ge=1, le=20, description="Pages asked for at most.")
    location: Literal["params", "body"] = Field(
        "params", description="Where `param` goes: the query string or the JSON body."
    )

    @property
    def first(self) -> int:
        return self.start if self.start is not None else (1 if self.style == "page" else 0)


class HttpSpec(BaseModel):
    """The `http:` section of a `kind: http` provider: the call and how to read the answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: Literal["GET", "POST"] = "GET"
    url: str = Field("{base_url}", min_length=1, description="URL template.")
    params: dict[str, str] = Field(default_factory=dict, description="Query string templates.")
    headers: dict[str, str] = Field(default_factory=dict, description="Header templates.")
    body: dict[str, Any] | None = Field(None, description="JSON body template (POST).")
    time_range: dict[TimeRange, str] = Field(
        default_factory=dict,
        description="The API's value for each time range it can filter by; empty: the "
        "gateway filters by date afterwards.",
    )
    pagination: Pagination | None = Field(None, description="Off unless given.")
    results: str = Field(description="Path of the result list ('' for the body itself).")
    results_may_be_absent: bool = False
    fields: dict[UnifiedField, list[str]] = Field(description="Ordered aliases per field.")
    extras: dict[str, list[str]] = Field(default_factory=dict)
    errors: list[ErrorMapping] = Field(
        default_factory=list, description="Checked in order before the status decides."
    )
    query_style: QueryStyle = "keywords"
    max_results: int = Field(20, ge=1, le=100, description="Most results one call returns.")
    text_format: Literal["html", "text"] = "html"
    docs_url: str = ""

    @model_validator(mode="after")
    def _known_placeholders(self) -> HttpSpec:
        for where, text in _templates(self):
            for name in _PLACEHOLDER.findall(_unescaped(text)):
                if name in ("page", "offset") and self.pagination is None:
                    raise ValueError(f"{where}: {{{name}}} needs a pagination section")
                if name not in PLACEHOLDERS:
                    raise ValueError(
                        f"{where}: unknown placeholder {{{name}}}; allowed: "
                        + ", ".join(PLACEHOLDERS)
                    )
        if self.body is not None and self.method == "GET":
            raise ValueError("body: a GET sends no body; use method: POST or params")
        if self.pagination is not None and self.pagination.location == "body" and not self.body:
            raise ValueError("pagination.location: body needs a body template")
        parse_path(self.results) if self.results else None
        FieldMapping(results=self.results, fields=self.fields, extras=self.extras)
        return self

    def mapping(self) -> FieldMapping:
        return FieldMapping(
            results=self.results,
            results_may_be_absent=self.results_may_be_absent,
            fields=self.fields,
            extras=self.extras,
        )

    def uses(self, name: str) -> bool:
        return any(f"{{{name}}}" in _unescaped(text) for _, text in _templates(self))


def _unescaped(text: str) -> str:
    return text.replace("{{", "").replace("}}", "")


def _templates(spec: HttpSpec) -> list[tuple[str, str]]:
    found = [("url", spec.url)]
    found += [(f"params.{k}", v) for k, v in spec.params.items()]
    found += [(f"headers.{k}", v) for k, v in spec.headers.items()]
    found += _strings(spec.body, "body") if spec.body is not None else []
    return found


def _strings(value: Any, where: str) -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(where, value)]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in _strings(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [s for i, v in enumerate(value) for s in _strings(v, f"{where}[{i}]")]
    return []


# --- the request ----------------------------------------------------------------------

_OMIT = object()


def _values(
    spec: HttpSpec, query: ProviderQuery, settings: ProviderSettings, page: int
) -> dict[str, Any]:
    per_call = spec.pagination.page_size if spec.pagination else spec.max_results
    values: dict[str, Any] = {
        "query": query.text,
        "original": query.original,
        "max_results": max(1, min(query.max_results, per_call)),
        "language": query.language,
        "time_range": spec.time_range.get(query.time_range),
        "domains": list(query.domain_filter) or None,
        "api_key": settings.api_key,
        "base_url": settings.base_url.rstrip("/"),
    }
    if spec.pagination is not None:
        pages = spec.pagination
        values["page"] = pages.first + page
        values["offset"] = pages.first + page * pages.page_size
    return values


def _fill(text: str, values: Mapping[str, Any]) -> Any:
    """A template string filled: the value itself for a placeholder alone (`_OMIT`
    when it is None), else the text with each placeholder written in."""
    if alone := _ALONE.match(text):
        value = values[alone.group(1)]
        return _OMIT if value is None else value

    def written(match: re.Match[str]) -> str:
        value = values[match.group(1)]
        if value is None:
            return ""
        return ",".join(map(str, value)) if isinstance(value, list) else str(value)

    parts = text.split("{{")
    filled = ["}".join(_PLACEHOLDER.sub(written, p) for p in part.split("}}")) for part in parts]
    return "{".join(filled)


def _fill_tree(value: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(value, str):
        return _fill(value, values)
    if isinstance(value, Mapping):
        filled = {k: _fill_tree(v, values) for k, v in value.items()}
        return {k: v for k, v in filled.items() if v is not _OMIT}
    if isinstance(value, list):
        return [v for v in (_fill_tree(item, values) for item in value) if v is not _OMIT]
    return value


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def _request(
    name: str, spec: HttpSpec, query: ProviderQuery, settings: ProviderSettings, page: int
) -> HttpRequest:
    if spec.uses("api_key") and not settings.api_key:
        raise MissingApiKey(f"{name} needs an API key; none is configured", provider=name)
    values = _values(spec, query, settings, page)
    url = _fill(spec.url, values)
    if url is _OMIT or not str(url):
        raise ProviderRejected(f"{name}: the url template filled to nothing", provider=name)
    params = {
        k: _as_text(v)
        for k, v in ((k, _fill(t, values)) for k, t in spec.params.items())
        if v is not _OMIT
    }
    headers = {
        k: _as_text(v)
        for k, v in ((k, _fill(t, values)) for k, t in spec.headers.items())
        if v is not _OMIT
    }
    body = _fill_tree(spec.body, values) if spec.body is not None else None
    pages = spec.pagination
    if pages is not None:
        # The page's own value wins over a template that forgot it, so page 2 is page 2.
        current = values["page"] if pages.style == "page" else values["offset"]
        if pages.location == "params":
            params[pages.param] = str(current)
        elif isinstance(body, dict):
            body[pages.param] = current
    if body is not None:
        headers.setdefault("Content-Type", "application/json")
    return HttpRequest(method=spec.method, url=str(url), params=params, headers=headers, json=body)


# --- the answer -----------------------------------------------------------------------


def _text(body: Any) -> str:
    if isinstance(body, str):
        return body
    try:
        return json.dumps(body, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(body)


def _mapped_error(
    name: str, spec: HttpSpec, status: int, headers: Mapping[str, str], body: Any
) -> ProviderError | None:
    if not spec.errors:
        return None
    text = _text(body)
    for entry in spec.errors:
        if entry.match.fits(status, text):
            kind = ERROR_CLASSES[entry.error]
            detail = " ".join(text.split())[:200]
            return kind(
                f"{name} answered HTTP {status} ({entry.error}): {detail}"[:500],
                provider=name,
                http_status=status,
                retry_after_s=retry_after_s(headers),
            )
    return None


def provider_for(name: str, spec: HttpSpec) -> Provider:
    """The `Provider` that `spec` declares, under `name`."""
    info = ProviderInfo(
        name=name,
        docs_url=spec.docs_url,
        needs_key=spec.uses("api_key"),
        time_range=bool(spec.time_range) and spec.uses("time_range"),
        domain_filter=spec.uses("domains"),
        language=spec.uses("language"),
        query_style=spec.query_style,
        max_results=spec.max_results,
        text_format=spec.text_format,
    )

    def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
        return _request(name, spec, query, settings, page=0)

    def parse_response(
        status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
    ) -> list[RawHit]:
        mapped = _mapped_error(name, spec, status, headers, body)
        if mapped is not None:
            raise mapped
        check_status(name, status, headers, body)
        # A body that is the list itself (`results: ''`) is fine; anything else must be
        # a JSON object (an HTML page served as 200 is not).
        listed = mapping.results == "" and isinstance(body, list)
        payload: Any = body if listed else expect_object(name, body)
        found = records(mapping, payload)
        if found is None:
            raise BadResponse(
                f"{name} answered JSON with no result list at `{mapping.results}`",
                provider=name,
                http_status=status,
            )
        return [hit_from(mapping, record) for record in found if isinstance(record, Mapping)]

    def next_page(
        query: ProviderQuery, first: HttpRequest, settings: ProviderSettings, done: int, got: int
    ) -> HttpRequest | None:
        """The request for page `done` (0 is the first), or None when the last one came
        short, the request has what it wants, or `max_pages` are asked."""
        pages = spec.pagination
        if pages is None or done >= pages.max_pages or got >= query.max_results:
            return None
        if got < done * pages.page_size:  # a page came short: there are no more
            return None
        return replace(_request(name, spec, query, settings, page=done), method=first.method)

    return Provider(
        info, build_request, parse_response, default_mapping=spec.mapping(), next_page=next_page
    )
