"""Wikipedia full-text search (MediaWiki Action API, `list=search`) as a provider.

Request: `GET https://{lang}.wikipedia.org/w/api.php?action=query&list=search&srsearch=…
&srlimit=N&srprop=snippet|timestamp|wordcount|size&meta=siteinfo&siprop=general
&format=json&formatversion=2&utf8=1&maxlag=5`, with a descriptive User-Agent.

Response (formatversion=2; the docs' sample is formatversion=1, where
`batchcomplete` is "" instead of true):

    {"batchcomplete": true, "continue": {"sroffset": 10, "continue": "-||"},
     "query": {"searchinfo": {"totalhits": 5060},
               "search": [{"ns": 0, "title": "Nelson Mandela", "pageid": 21492751,
                           "size": 196026, "wordcount": 23664,
                           "snippet": "<span class=\\"searchmatch\\">Nelson</span> …",
                           "timestamp": "2018-07-23T07:59:43Z"}],
               "general": {"server": "//en.wikipedia.org", "articlepath": "/wiki/$1",
                           "base": "https://en.wikipedia.org/wiki/Main_Page", …}}}

Failures usually come with HTTP 200 and `{"error": {"code", "info", "docref"},
"servedby"}` (`"*"` instead of `docref` in formatversion=1); they are mapped by code.
CirrusSearch has no date filter, so `time_range` is left to the gateway.
`timestamp` is the article's last edit, not when it was written: it is the
`last_edited` extra, never `published_at`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from sleuth.errors import (
    AuthFailed,
    BadResponse,
    ProviderError,
    ProviderRejected,
    ProviderUnavailable,
    RateLimited,
)
from sleuth.providers.base import (
    HttpRequest,
    Provider,
    ProviderInfo,
    ProviderQuery,
    ProviderSettings,
    RawHit,
    check_status,
    expect_object,
    retry_after_s,
    text_or_none,
)
from sleuth.providers.mapping import FieldMapping, hit_from, records

INFO = ProviderInfo(
    name="wikipedia",
    docs_url="https://www.mediawiki.org/wiki/API:Search",
    needs_key=False,
    time_range=False,
    domain_filter=False,
    language=True,
    query_style="keywords",
    max_results=50,
)

DEFAULT_API_URL = "https://{lang}.wikipedia.org/w/api.php"
# Wikimedia's User-Agent policy
# (https://foundation.wikimedia.org/wiki/Policy:Wikimedia_Foundation_User-Agent_Policy)
# requires `<client>/<version> (<contact information>)`; generic library agents may be
# blocked with a 403. The contact below is a placeholder: a deployment sets its own
# with `providers.wikipedia.options.user_agent`.
DEFAULT_USER_AGENT = "sleuth/0.1 (https://example.org/sleuth; sleuth-operator@example.org)"
# Manual:Maxlag_parameter recommends maxlag=5 on Wikimedia wikis for automated
# clients; the answer is then a `maxlag` error (HTTP 200, Retry-After) while the
# replicas lag. `options.maxlag: 0` leaves it out (the docs allow that for
# interactive use).
DEFAULT_MAXLAG = 5
# wfUrlencode() in MediaWiki's GlobalFunctions.php leaves these literal in page URLs.
_TITLE_SAFE = ";@$!*(),/~:"
_RATE_LIMIT_CODES = frozenset({"maxlag", "ratelimited"})
_UNAVAILABLE_CODES = frozenset({"readonly"})
_AUTH_CODES = frozenset({"readapidenied", "permissiondenied", "mwoauth-invalid-authorization"})


def build_request(query: ProviderQuery, settings: ProviderSettings) -> HttpRequest:
    lang = str(settings.options.get("lang") or ("zh" if query.language == "zh" else "en"))
    params = {
        "action": "query",
        "list": "search",
        "srsearch": query.text,
        "srlimit": str(max(1, min(query.max_results, INFO.max_results))),
        "srprop": "snippet|timestamp|wordcount|size",
        # The wiki's own server and article path, so result URLs need no guessing.
        "meta": "siteinfo",
        "siprop": "general",
        "format": "json",
        "formatversion": "2",
        "utf8": "1",
    }
    maxlag = settings.options.get("maxlag", DEFAULT_MAXLAG)
    if maxlag:
        params["maxlag"] = str(maxlag)
    user_agent = str(settings.options.get("user_agent") or DEFAULT_USER_AGENT)
    return HttpRequest(
        method="GET",
        url=(settings.base_url or DEFAULT_API_URL).replace("{lang}", lang),
        params=params,
        headers={"User-Agent": user_agent, "Accept": "application/json"},
    )


def parse_response(
    status: int, headers: Mapping[str, str], body: Any, mapping: FieldMapping
) -> list[RawHit]:
    check_status(INFO.name, status, headers, body)
    payload = expect_object(INFO.name, body)
    if "error" in payload or "errors" in payload:
        raise _api_error(payload, status, headers)
    found = records(mapping, payload)
    if found is None or not isinstance(payload.get("query"), Mapping):
        raise BadResponse(
            f"wikipedia answered JSON without a `{mapping.results}` list",
            provider=INFO.name,
            http_status=status,
        )
    site = _article_path(payload["query"].get("general"))
    return [_hit(mapping, entry, site) for entry in found if isinstance(entry, Mapping)]


def _hit(mapping: FieldMapping, entry: Mapping[str, Any], site: tuple[str, str] | None) -> RawHit:
    hit = hit_from(mapping, entry)
    if site is None or hit.title is None:
        return hit
    before, after = site
    url = before + quote(hit.title.replace(" ", "_"), safe=_TITLE_SAFE) + after
    # The same as dataclasses.replace(hit, url=url), without its field introspection.
    return RawHit(
        url=url,
        title=hit.title,
        snippet=hit.snippet,
        published_at=hit.published_at,
        fields=hit.fields,
        fell_back=hit.fell_back,
    )


def _article_path(general: Any) -> tuple[str, str] | None:
    """What goes before and after the title in the wiki's canonical page URL.

    MediaWiki links a page as `$wgServer` + `$wgArticlePath` with `$1` replaced by
    the title (spaces as underscores, encoded like wfUrlencode()). Both parts come
    from the `meta=siteinfo` of the wiki that answered, i.e. the API host that was
    called, so the URL is the wiki's own link to the page, not a guess built from the
    query. Without siteinfo there is no URL, and the item is marked degraded
    downstream.
    """
    if not isinstance(general, Mapping):
        return None
    server = text_or_none(general.get("server"))
    path = text_or_none(general.get("articlepath"))
    if server is None or path is None or "$1" not in path:
        return None
    if server.startswith("//"):  # protocol-relative $wgServer, as on Wikimedia wikis
        scheme = urlsplit(str(general.get("base") or "")).scheme
        server = f"{scheme or 'https'}:{server}"
    before, _, after = path.partition("$1")
    return server.rstrip("/") + before, after


def _api_error(
    payload: Mapping[str, Any], status: int, headers: Mapping[str, str]
) -> ProviderError:
    """The contract error for a MediaWiki error object (usually sent with HTTP 200)."""
    error = payload.get("error")
    if not isinstance(error, Mapping):  # errorformat other than the default `bc`
        errors = payload.get("errors")
        error = errors[0] if isinstance(errors, list) and errors else {}
        if not isinstance(error, Mapping):
            error = {}
    code = str(error.get("code") or "unknown")
    info = str(error.get("info") or error.get("text") or error.get("*") or "")
    message = f"wikipedia API error {code}: {' '.join(info.split())}"[:500]
    kind: type[ProviderError]
    if code in _RATE_LIMIT_CODES:
        kind = RateLimited
    elif code in _UNAVAILABLE_CODES or code.startswith("internal_api_error"):
        kind = ProviderUnavailable
    elif code in _AUTH_CODES:
        kind = AuthFailed
    else:
        kind = ProviderRejected
    return kind(
        message, provider=INFO.name, http_status=status, retry_after_s=retry_after_s(headers)
    )


PROVIDER = Provider(INFO, build_request, parse_response)
