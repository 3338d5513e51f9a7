"""The only place that performs provider I/O.

`HttpTransport` sends a provider's `HttpRequest` with one shared aiohttp session
(connection reuse, per-call timeouts, the optional egress proxy), answers `kb:`
requests from the local index, and `ddgs:` requests through the ddgs library
(DuckDuckGo has no JSON API; the library is the one I/O sleuth hands away, behind
the same proxy, timeout and error mapping).

Egress (see docs/safety.md): with `egress_proxy` set every HTTP call and every ddgs
call goes through it, or fails: the client is built here and nowhere else (a client
handed in together with a proxy or a policy is refused), environment proxy variables
are ignored (`trust_env=False`; CA bundle variables still count), and a ddgs without
proxy support is refused. With an `EgressPolicy` (`sleuth.egress`) every connection
is checked after DNS resolution and made to the address that was checked, redirects
included; through a proxy, the destination is checked before the proxy is asked.

`ReplayTransport` answers from a JSON Lines
cassette and never touches the network; `RecordingTransport` wraps another
transport and appends every exchange to a cassette. aiohttp's errors become
`SearchError`s here, in one place.

A cassette line:

    {"provider": "wikipedia", "query": "original query", "status": 200,
     "headers": {"content-type": "application/json"}, "body": {...}}

Lines match on provider and the request's original query; several matching lines
answer successive calls in file order (a 429 and then a 200, say).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import math
import os
import re
import ssl
import time
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import certifi
import orjson
import yarl

from sleuth import egress, kb
from sleuth.egress import EgressPolicy
from sleuth.errors import (
    BadResponse,
    ConfigError,
    EgressDenied,
    NoResults,
    ProviderError,
    ProviderRejected,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    ReplayMiss,
)
from sleuth.providers.base import HttpRequest
from sleuth.redaction import redact, redact_text, secret_name, secret_values, sent_secrets

if TYPE_CHECKING:
    # Imported where a call is made (0.2 s): a search of the knowledge base alone, or a
    # replayed one, sends nothing over HTTP.
    import aiohttp

USER_AGENT = "sleuth/0.1 (search for AI agents)"
_PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")
# Generous: waiting for a pooled connection is sleuth's own queue, not the provider's
# slowness, and 64 searches over three providers keep ~200 requests out at once.
_MAX_CONNECTIONS = 512
_MAX_REDIRECTS = 10
# Hosts whose egress check is remembered per client; past this many it starts afresh.
_PASSED_HOSTS = 256
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Four dotted numbers, one with a leading zero ("012.0.0.1"): 10.0.0.1 to inet_aton,
# 12.0.0.1 to others, so no address sleuth can vouch for.
_AMBIGUOUS_ADDRESS = re.compile(r"(?=(?:.*\.)?0\d)\d+\.\d+\.\d+\.\d+")
# Digits enough for an integer past 64 bits, which orjson reads as a float: found as
# a run in the body with every digit made "1" and every other byte "0" (a regex
# search takes longer than the parse).
_DIGIT_MAP = bytes(49 if 48 <= byte <= 57 else 48 for byte in range(256))
_LONG_NUMBER = b"1" * 19
# Response headers worth keeping in a cassette; cookies and the like are not.
_RECORDED_HEADERS = ("content-type", "retry-after", "date", "x-ratelimit-remaining")


@dataclass(frozen=True)
class RawResponse:
    status: int
    headers: Mapping[str, str]
    body: Any
    elapsed_ms: float = 0.0


class Transport(Protocol):
    async def send(
        self, provider: str, query: str, request: HttpRequest, timeout_s: float
    ) -> RawResponse:
        """Perform `request` for `provider`; `query` is the search's original wording."""
        ...

    async def aclose(self) -> None: ...


def decode_body(content: bytes, content_type: str) -> Any:
    """The JSON value when the response says JSON and is; the text otherwise.

    orjson reads a well-formed body (a third of the time `json` takes); anything it
    refuses (bytes that are not UTF-8, NaN, a byte order mark) is read as before,
    and so is a body with 19 digits in a row, which could be an integer past 64 bits
    (orjson would make it a float): every body decodes to what it always did."""
    if "json" in content_type.lower():
        if _LONG_NUMBER not in content.translate(_DIGIT_MAP):
            try:
                return orjson.loads(content)
            except orjson.JSONDecodeError:
                pass
        text = content.decode("utf-8", errors="replace")
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
    return content.decode("utf-8", errors="replace")


class HttpTransport:
    """Real I/O: aiohttp for HTTP(S), the SQLite index for `kb:` requests.

    `egress_proxy`: every HTTP and ddgs call goes through it. `egress`: the address
    policy every HTTP connection is checked against; None checks nothing (tests
    against local servers, and deployments that turn `egress.check_addresses` off).
    `client`: a ready aiohttp session, only without proxy and policy (sleuth cannot
    vouch for how a session it did not build routes its calls). Raises `ConfigError`
    for an unusable proxy URL.

    HTTP goes through an `EgressClient`, with aiohttp, not httpx: on the side-by-side
    load (bench/vs_searxng.py) httpx's connection pool cost 2.7-3.2 ms of CPU a call
    and aiohttp 0.3-0.5 ms, and a search makes a call per provider. Redirects are
    followed here (at most 10, only to http and https), so that every hop is checked.
    """

    def __init__(
        self,
        *,
        kb_path: Path,
        egress_proxy: str | None = None,
        max_body_bytes: int = 5_000_000,
        client: aiohttp.ClientSession | None = None,
        egress: EgressPolicy | None = None,
    ) -> None:
        self._kb_path = kb_path
        self._http = EgressClient(egress_proxy, egress, client)
        self._proxy = self._http.proxy  # ddgs is told it too
        self._max_body_bytes = max_body_bytes

    async def send(
        self, provider: str, query: str, request: HttpRequest, timeout_s: float
    ) -> RawResponse:
        started = time.perf_counter()
        if request.url.startswith("kb:"):
            response = await self._from_index(provider, request)
        elif request.url.startswith("ddgs:"):
            response = await self._from_ddgs(provider, request, timeout_s)
        else:
            response = await self._over_http(provider, request, timeout_s)
        elapsed = (time.perf_counter() - started) * 1000
        return RawResponse(response.status, response.headers, response.body, elapsed)

    async def _from_index(self, provider: str, request: HttpRequest) -> RawResponse:
        params = request.params
        limit = int(params.get("limit", "10"))
        since = params.get("since")
        try:
            results = await asyncio.to_thread(
                functools.partial(
                    kb.search,
                    self._kb_path,
                    params.get("q", ""),
                    limit,
                    sources=[name for name in params.get("sources", "").split(",") if name],
                    tags=[tag for tag in params.get("tags", "").split(",") if tag],
                    since=datetime.fromisoformat(since) if since else None,
                )
            )
        except kb.NotSearchable as exc:
            raise NoResults(str(exc), provider=provider) from None
        if not results and not await asyncio.to_thread(kb.document_count, self._kb_path):
            # Say how to fill it: an empty answer alone reads as "nothing matched".
            raise NoResults(
                f"the knowledge base {self._kb_path} is empty: fill it with `sleuth index PATH`",
                provider=provider,
            )
        return RawResponse(200, {"content-type": "application/json"}, {"results": results})

    async def _from_ddgs(
        self, provider: str, request: HttpRequest, timeout_s: float
    ) -> RawResponse:
        from ddgs.exceptions import DDGSException

        params = request.params
        if self._proxy is not None and not _ddgs_takes_proxy():
            raise EgressDenied(
                f"{provider}: this ddgs version takes no proxy, so its calls would bypass "
                "egress_proxy; refused",
                provider=provider,
            )
        try:
            results = await asyncio.wait_for(
                asyncio.to_thread(_ddgs_text, params, self._proxy, timeout_s), timeout_s
            )
        except TimeoutError as exc:
            raise ProviderTimeout(
                f"{provider} did not answer within {timeout_s:.1f}s", provider=provider
            ) from exc
        except DDGSException as exc:
            raise _ddgs_error(provider, exc) from exc
        return RawResponse(200, {"content-type": "application/json"}, {"results": results})

    async def _over_http(
        self, provider: str, request: HttpRequest, timeout_s: float
    ) -> RawResponse:
        import aiohttp  # here: see the imports

        url = yarl.URL(request.url).update_query(dict(request.params))
        method, body = request.method, request.json
        try:
            for _ in range(_MAX_REDIRECTS + 1):
                async with self._http.request(
                    method, url, timeout_s=timeout_s, headers=request.headers, json=body
                ) as response:
                    location = response.headers.get("Location")
                    if response.status in _REDIRECTS and location:
                        url = _redirected(provider, url, location)
                        if response.status == 303 or (
                            response.status in (301, 302) and method == "POST"
                        ):
                            method, body = "GET", None  # as browsers (and httpx) do
                        continue
                    content = await self._read_capped(provider, response)
                    headers = {key.lower(): value for key, value in response.headers.items()}
                    return RawResponse(
                        response.status,
                        headers,
                        decode_body(content, headers.get("content-type", "")),
                    )
        except TimeoutError as exc:  # aiohttp's timeouts are TimeoutErrors too
            raise ProviderTimeout(
                f"{provider} did not answer within {timeout_s:.1f}s", provider=provider
            ) from exc
        except (aiohttp.ClientProxyConnectionError, aiohttp.ClientHttpProxyError) as exc:
            raise ProviderUnavailable(
                f"egress proxy refused or failed the call to {provider}: {exc}", provider=provider
            ) from exc
        except aiohttp.ClientConnectorDNSError as exc:
            raise ProviderUnavailable(
                f"cannot reach {provider}: cannot resolve {exc.host}: {exc.os_error}",
                provider=provider,
            ) from exc
        except aiohttp.ClientError as exc:
            raise ProviderUnavailable(
                f"cannot reach {provider}: {type(exc).__name__}: {exc}", provider=provider
            ) from exc
        except EgressDenied as exc:  # raised by the resolver, which knows no provider
            raise EgressDenied(exc.message, provider=provider) from None
        raise BadResponse(
            f"{provider} redirected more than {_MAX_REDIRECTS} times", provider=provider
        )

    async def _read_capped(self, provider: str, response: aiohttp.ClientResponse) -> bytes:
        if (response.content_length or 0) > self._max_body_bytes:
            raise self._too_big(provider, response.status)
        chunks = bytearray()
        async for chunk in response.content.iter_chunked(65536):
            chunks.extend(chunk)
            if len(chunks) > self._max_body_bytes:
                raise self._too_big(provider, response.status)
        return bytes(chunks)

    def _too_big(self, provider: str, status: int) -> BadResponse:
        return BadResponse(
            f"{provider} sent a body over the {self._max_body_bytes}-byte limit",
            provider=provider,
            http_status=status,
        )

    async def aclose(self) -> None:
        await self._http.aclose()


class EgressClient:
    """HTTP(S) out of sleuth, routed as configured and nothing else; provider calls
    (`HttpTransport`) and page reads (`sleuth.extract`) both go through one.

    `proxy`: every request goes through it. `policy`: every connection is checked
    against it, by a resolver that hands aiohttp only checked addresses (so nothing
    resolves twice), and each request's destination is checked here first when the
    resolver cannot see it: an address literal (aiohttp connects to one without
    asking), or any destination through the proxy. `session`: a ready aiohttp session,
    only without proxy and policy (sleuth cannot vouch for how a session it did not
    build routes its calls). Requests never follow redirects: the caller follows
    them, so each hop comes back here and is checked.

    The session is made on first use in the running event loop: a session belongs to
    its loop, and `Sleuth.search_sync` runs a loop per call.
    """

    def __init__(
        self,
        proxy: str | None = None,
        policy: EgressPolicy | None = None,
        session: aiohttp.ClientSession | None = None,
    ) -> None:
        if session is not None and (proxy is not None or policy is not None):
            raise ConfigError(
                "sleuth builds its own HTTP client when an egress proxy or policy is set; "
                "a client handed in could bypass them"
            )
        self.proxy = checked_proxy(proxy)
        self._socks = self.proxy is not None and self.proxy.startswith("socks")
        if self._socks and find_spec("aiohttp_socks") is None:
            raise ConfigError(
                "egress_proxy is a socks proxy, which cannot be used without the "
                "aiohttp-socks package"
            )
        self._policy = policy
        #: Hosts whose hop check passed (without a proxy, it would pass again).
        self._passed: set[str] = set()
        self._given = session
        self._session: aiohttp.ClientSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None

    @contextlib.asynccontextmanager
    async def request(
        self,
        method: str,
        url: yarl.URL,
        *,
        timeout_s: float,
        headers: Mapping[str, str] | None = None,
        json: Any = None,
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """One request, its destination checked, redirects not followed; aiohttp's
        errors (and `EgressDenied`) are the caller's to map."""
        import aiohttp  # here: see the imports

        await self._check_hop(url, timeout_s)
        async with self._client_session().request(
            method,
            url,
            headers=dict(headers or {}),
            json=json,
            proxy=None if self._socks else self.proxy,
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=timeout_s),
        ) as response:
            yield response

    async def _check_hop(self, url: yarl.URL, timeout_s: float) -> None:
        """The egress check of one hop that the resolver cannot make: an address
        literal (aiohttp connects to one without asking the resolver), and, through a
        proxy, the destination before the proxy is asked."""
        if url.host in self._passed:
            return
        await self._check_new_hop(url, timeout_s)
        if self.proxy is None and url.host is not None:
            # Without a proxy the check depends on the host alone (a name is checked
            # by the resolver on each new connection): it passes again.
            if len(self._passed) >= _PASSED_HOSTS:
                self._passed.clear()
            self._passed.add(url.host)

    async def _check_new_hop(self, url: yarl.URL, timeout_s: float) -> None:
        if url.host is not None and _AMBIGUOUS_ADDRESS.fullmatch(url.host):
            raise EgressDenied(
                f"egress refused: {url.host} is no address to connect to (a leading zero "
                "reads as octal to some resolvers); write addresses without leading zeros"
            )
        if self._policy is None or url.host is None:
            return
        port = url.port or (443 if url.scheme == "https" else 80)
        if self.proxy is not None:
            await egress.check_before_proxy(url.host, port, self._policy, timeout_s)
        elif (address := egress.literal_address(url.host)) is not None:
            self._policy.check(url.host, address)

    def _client_session(self) -> aiohttp.ClientSession:
        """The session of the running loop, made on first use there."""
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        if self._session is None or self._session_loop is not loop or self._session.closed:
            self._session = build_session(self.proxy if self._socks else None, self._policy)
            self._session_loop = loop
        return self._session

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            with contextlib.suppress(RuntimeError):  # its loop is gone: nothing is left open
                await session.close()


def _redirected(provider: str, url: yarl.URL, location: str) -> yarl.URL:
    target = url.join(yarl.URL(location))
    if target.scheme not in ("http", "https"):
        raise EgressDenied(
            f"egress refused: {provider} was sent to a {target.scheme}: URL; sleuth follows "
            "only http or https",
            provider=provider,
        )
    return target


def checked_proxy(proxy: str | None) -> str | None:
    """`proxy` when it is a URL aiohttp and ddgs can route through; `ConfigError` if
    not, so that a typo fails at start-up and never sends calls direct."""
    if proxy is None:
        return None
    # The messages never repeat the URL: it may carry the proxy's password.
    try:
        url = yarl.URL(proxy)
        port_ok = url.explicit_port is None or 0 < url.explicit_port < 65536
    except ValueError:
        raise ConfigError("egress_proxy is not a valid URL") from None
    if url.scheme not in _PROXY_SCHEMES or not url.host or not port_ok:
        raise ConfigError(
            "egress_proxy must be an http://, https://, socks5:// or socks5h:// URL with a "
            "host and a valid port"
        )
    return proxy


def build_session(socks: str | None, policy: EgressPolicy | None) -> aiohttp.ClientSession:
    """The one session, routed as configured and nothing else.

    `trust_env=False`: HTTP(S)_PROXY, ALL_PROXY and NO_PROXY cannot send calls around
    the configured proxy (or through one nobody configured), and .netrc adds no
    credentials; the CA bundle variables (SSL_CERT_FILE, SSL_CERT_DIR) still count.
    An http(s) proxy is given per request; a socks proxy is the connector itself.
    No cookie jar: the session serves every search of every tenant, so a cookie one
    back end set on one call would be sent on the next, whoever asked.
    """
    import aiohttp  # here: see the imports

    from sleuth.transport_resolver import CheckedResolver

    verify = ssl_context()
    connector: aiohttp.BaseConnector
    if socks is not None:
        from aiohttp_socks import ProxyConnector

        connector = ProxyConnector.from_url(socks, ssl=verify, limit=_MAX_CONNECTIONS, rdns=True)
    else:
        resolver = CheckedResolver(policy) if policy is not None else None
        connector = aiohttp.TCPConnector(
            ssl=verify, limit=_MAX_CONNECTIONS, resolver=resolver, use_dns_cache=policy is None
        )
    return aiohttp.ClientSession(
        connector=connector,
        trust_env=False,
        headers={"User-Agent": USER_AGENT},
        cookie_jar=aiohttp.DummyCookieJar(),
    )


def warm_up() -> None:
    """Import aiohttp and read the certificate bundle now, off a first call's deadline."""
    import aiohttp  # noqa: F401

    ssl_context()


def ssl_context() -> ssl.SSLContext:
    """Certificates from SSL_CERT_FILE / SSL_CERT_DIR when set, else certifi's bundle.

    One context per process and bundle: reading the bundle takes tens of milliseconds
    (hundreds on a busy machine), which the first call of every session would
    otherwise spend on the event loop. `Sleuth.warm_up` makes it off the loop."""
    return _ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _ssl_context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    if cafile or capath:
        return ssl.create_default_context(cafile=cafile, capath=capath)
    return ssl.create_default_context(cafile=certifi.where())


def _ddgs_takes_proxy() -> bool:
    """Whether the installed ddgs can be told a proxy (checked, not assumed: without it
    ddgs would call out directly)."""
    from ddgs import DDGS

    try:
        parameters = inspect.signature(DDGS).parameters.values()
    except (TypeError, ValueError):  # no signature to read: assume the worst
        return False
    return any(p.name == "proxy" or p.kind is p.VAR_KEYWORD for p in parameters)


def _ddgs_text(params: Mapping[str, str], proxy: str | None, timeout_s: float) -> list[Any]:
    """One ddgs text search (in a worker thread). The proxy is passed explicitly; ddgs
    and its HTTP library (primp) then ignore NO_PROXY. Without an egress proxy ddgs
    reads DDGS_PROXY and primp the HTTP(S)_PROXY variables, which sleuth cannot stop
    (see docs/safety.md)."""
    from ddgs import DDGS  # imported on first use: only deployments that use DuckDuckGo pay
    from ddgs.exceptions import DDGSException

    try:
        return DDGS(proxy=proxy, timeout=math.ceil(timeout_s)).text(
            params["q"],
            region=params.get("region", "wt-wt"),
            safesearch=params.get("safesearch", "moderate"),
            timelimit=params.get("timelimit"),
            max_results=int(params.get("max_results", "10")),
            backend=params.get("backend", "duckduckgo"),
        )
    except DDGSException as exc:
        # ddgs says exactly this for an empty result list, and also when DuckDuckGo
        # refused or throttled the request; both read as "nothing here" (see notes).
        if str(exc) == "No results found.":
            return []
        raise


def _ddgs_error(provider: str, exc: BaseException) -> ProviderError:
    """ddgs's exceptions as contract errors."""
    from ddgs.exceptions import RatelimitException, TimeoutException

    cause = exc.args[0] if exc.args else None
    if isinstance(exc, RatelimitException):
        return RateLimited(f"{provider} is rate limited: {exc}", provider=provider)
    if isinstance(exc, TimeoutException) or isinstance(cause, TimeoutException):
        return ProviderTimeout(f"{provider} timed out: {exc}", provider=provider)
    if str(exc) == "query is mandatory.":
        return ProviderRejected(f"{provider} refused an empty query", provider=provider)
    return ProviderUnavailable(f"{provider} failed: {type(exc).__name__}: {exc}", provider=provider)


class ReplayTransport:
    """Answers from recorded exchanges, in order per (provider, query), the last one
    repeating; a call with no matching line is a `ReplayMiss`."""

    def __init__(self, entries: Iterable[Mapping[str, Any]], source: str = "cassette") -> None:
        self._answers: dict[tuple[str, str], deque[RawResponse]] = defaultdict(deque)
        for line_no, entry in enumerate(entries, start=1):
            if "page" in entry:  # a fetched page's line: `sleuth.extract.cassette` reads it
                continue
            try:
                key = (str(entry["provider"]), str(entry["query"]))
                answer = RawResponse(
                    int(entry["status"]),
                    {k.lower(): str(v) for k, v in (entry.get("headers") or {}).items()},
                    entry.get("body"),
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise ConfigError(f"{source} line {line_no}: missing or bad {exc}") from exc
            self._answers[key].append(answer)

    @classmethod
    def from_file(cls, cassette: Path) -> ReplayTransport:
        return cls(read_cassette(cassette), source=f"cassette {cassette}")

    async def send(
        self, provider: str, query: str, request: HttpRequest, timeout_s: float
    ) -> RawResponse:
        queue = self._answers.get((provider, query))
        if not queue:
            raise ReplayMiss(
                f"the cassette has no answer for provider {provider!r} and query {query!r}",
                provider=provider,
            )
        # Lines for one call are answered in order ("a 429, then a 200"); the last one
        # keeps answering, so a replayed service can be asked the same thing again.
        return queue.popleft() if len(queue) > 1 else queue[0]

    async def aclose(self) -> None:
        return None


class RecordingTransport:
    """Passes calls to `inner` and appends each answered exchange to `cassette`, with
    secrets redacted as the call log redacts them (`sleuth.redaction`): the key the
    request sent (a back end may quote it in an error body), the values of
    `secret_env` and key-shaped strings. No header named like a credential is kept."""

    def __init__(self, inner: Transport, cassette: Path, secret_env: Iterable[str] = ()) -> None:
        self._inner = inner
        self._cassette = cassette
        self._secret_env = frozenset(secret_env)

    async def send(
        self, provider: str, query: str, request: HttpRequest, timeout_s: float
    ) -> RawResponse:
        response = await self._inner.send(provider, query, request, timeout_s)
        body = request.json if isinstance(request.json, Mapping) else None
        secrets = secret_values(self._secret_env) | sent_secrets(
            request.headers, request.params, body
        )
        headers = {
            k: v
            for k, v in response.headers.items()
            if k in _RECORDED_HEADERS and not secret_name(k)
        }
        line = {
            "provider": provider,
            "query": redact_text(query, secrets),
            "status": response.status,
            "headers": redact(headers, secrets),
            "body": redact(response.body, secrets),
        }
        await asyncio.to_thread(self._append, json.dumps(line, ensure_ascii=False))
        return response

    def _append(self, line: str) -> None:
        self._cassette.parent.mkdir(parents=True, exist_ok=True)
        with self._cassette.open("a", encoding="utf-8") as out:
            out.write(line + "\n")

    async def aclose(self) -> None:
        await self._inner.aclose()


class CapturingTransport:
    """Passes calls to `inner` and keeps each answer in memory, by provider."""

    def __init__(self, inner: Transport) -> None:
        self._inner = inner
        self.captured: dict[str, RawResponse] = {}

    async def send(
        self, provider: str, query: str, request: HttpRequest, timeout_s: float
    ) -> RawResponse:
        response = await self._inner.send(provider, query, request, timeout_s)
        self.captured[provider] = response
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def read_cassette(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read cassette {path}: {exc.strerror}") from exc
    entries = []
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"cassette {path} line {line_no} is not JSON: {exc.msg}") from exc
        if not isinstance(entry, dict):
            raise ConfigError(f"cassette {path} line {line_no} is not a JSON object")
        entries.append(entry)
    return entries
