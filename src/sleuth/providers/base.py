"""What a provider is: a capability declaration plus two pure functions.

A provider never performs I/O. `build_request` describes the HTTP call to make and
`parse_response` turns what came back into `RawHit`s (or raises a `ProviderError`),
reading fields through the declarative `FieldMapping` it is handed (loaded from
`providers/mappings/<name>.yaml` by `sleuth.mapping_files`).
`sleuth.transport` owns the socket; a test asserts no provider module imports
httpx, asyncio or redis.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sleuth.contract import TimeRange
from sleuth.errors import ConfigError
from sleuth.providers.body import RawHit, check_status, expect_object, retry_after_s, text_or_none
from sleuth.providers.mapping import FieldMapping

# The body helpers are re-exported: provider modules import what they need from here.
__all__ = [
    "BuildRequest",
    "HttpRequest",
    "NextPage",
    "ParseResponse",
    "Provider",
    "ProviderInfo",
    "ProviderQuery",
    "ProviderSettings",
    "QueryStyle",
    "RawHit",
    "bearer_json_post",
    "check_status",
    "country_option",
    "expect_object",
    "retry_after_s",
    "text_or_none",
]

QueryStyle = Literal["keywords", "natural"]


@dataclass(frozen=True)
class ProviderInfo:
    """What a back end is and what it can do natively; the gateway emulates the rest."""

    name: str
    docs_url: str
    needs_key: bool = False
    time_range: bool = False
    domain_filter: bool = False
    language: bool = False
    query_style: QueryStyle = "keywords"
    max_results: int = 20
    #: "html" when titles and snippets may carry markup (<em>, entities) for the clean
    #: stage to strip; "text" when they are plain text whose `<` is meant literally.
    text_format: Literal["html", "text"] = "html"
    #: False for back ends on this machine (the knowledge base): their answers are not
    #: cached, so a re-indexed folder shows at once.
    remote: bool = True
    #: True for back ends that hold named sources and tagged documents (the knowledge
    #: base): they take the source names of `domain_filter` and the request's `tags`.
    sources: bool = False
    #: The endpoint and key variable of `providers.<name>` when sleuth.yaml names neither,
    #: so a new module needs no entry in `sleuth.config` (the older ones keep theirs).
    default_url: str = ""
    api_key_env: str | None = None


@dataclass(frozen=True)
class ProviderSettings:
    """The slice of configuration one provider sees (from `providers.<name>` in sleuth.yaml)."""

    base_url: str
    timeout_s: float = 3.0
    api_key: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProviderQuery:
    """The request as a provider receives it, after guard and rewrite.

    `time_range` and `domain_filter` are only set when the provider supports them
    natively; otherwise the gateway filters afterwards and says so. `domain_filter`
    holds only domains; the source names of the request's `domain_filter` are
    `sources`, and they and `tags` are set only for providers that hold sources. `now`
    is the gateway's clock, for a time range a provider turns into a date.
    """

    text: str
    original: str
    max_results: int
    language: str
    time_range: TimeRange = "any"
    domain_filter: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    now: datetime | None = None


@dataclass(frozen=True)
class HttpRequest:
    """A description of one HTTP call. `url` may use the `kb:` scheme for the local index."""

    method: Literal["GET", "POST"]
    url: str
    params: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    json: Any = None


BuildRequest = Callable[[ProviderQuery, ProviderSettings], HttpRequest]
ParseResponse = Callable[[int, Mapping[str, str], Any, FieldMapping], list[RawHit]]
#: `(query, first request, settings, pages done, results so far)` -> the next page's
#: request, or None when there is none to ask for.
NextPage = Callable[[ProviderQuery, HttpRequest, ProviderSettings, int, int], HttpRequest | None]


@dataclass(frozen=True)
class Provider:
    info: ProviderInfo
    build_request: BuildRequest
    parse_response: ParseResponse
    #: Used when no mapping file exists for this provider (providers built in code).
    default_mapping: FieldMapping | None = None
    #: Set for a paginated back end: each further page is another call (quota, egress,
    #: cassette), asked for after the first page answered.
    next_page: NextPage | None = None

    @property
    def name(self) -> str:
        return self.info.name


def country_option(provider: str, options: Mapping[str, Any]) -> str | None:
    """`options.country` as the upper-case two-letter ISO 3166-1 code APIs take, None
    when not set; `ConfigError` naming the option otherwise."""
    country = options.get("country")
    if country is None:
        return None
    if not (isinstance(country, str) and len(country) == 2 and country.isalpha()):
        raise ConfigError(
            f"providers.{provider}.options.country must be a two-letter ISO 3166-1 code "
            f"such as 'US' or 'CN', got {country!r}",
            provider=provider,
        )
    return country.upper()


def bearer_json_post(url: str, api_key: str | None, body: Mapping[str, Any]) -> HttpRequest:
    """A POST of `body` as JSON with the key as a bearer token, as most search APIs
    take it.

    >>> bearer_json_post("https://api.example/search", "k", {"query": "q"}).headers
    {'Authorization': 'Bearer k', 'Content-Type': 'application/json'}
    """
    headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
    return HttpRequest(method="POST", url=url, headers=headers, json=body)
