"""The only place that performs provider I/O.

`HttpTransport` sends a provider's `HttpRequest` with one shared httpx client
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
transport and appends every exchange to a cassette. httpx errors become
`SearchError`s here, in one place.

A cassette line:

    {"provider": "wikipedia", "query": "original query", "status": 200,
     "headers": {"content-type": "application/json"}, "body": {...}}

Lines match on provider and the request's original query; several matching lines
answer successive calls in file order (a 429 and then a 200, say).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import ssl
import time
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import httpcore
import httpx

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

USER_AGENT = "sleuth/0.1 (search for AI agents)"
_PROXY_SCHEMES = ("http", "https", "socks5", "socks5h")
# Generous: waiting for a pooled connection is sleuth's own queue, not the provider's
# slowness, and 64 searches over three providers keep ~200 requests out at once.
_LIMITS = httpx.Limits(max_connections=512, max_keepalive_connections=128)
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
    """The JSON value when the response says JSON and is; the text otherwise."""
    text = content.decode("utf-8", errors="replace")
    if "json" in content_type.lower():
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
    return text


class HttpTransport:
    """Real I/O: httpx for HTTP(S), the SQLite index for `kb:` requests.

    `egress_proxy`: every HTTP and ddgs call goes through it. `egress`: the address
    policy every HTTP connection is checked against; None checks nothing (tests
    against local servers, and deployments that turn `egress.check_addresses` off).
    `client`: a ready httpx client, only without proxy and policy (sleuth cannot
    vouch for how a client it did not build routes its calls). Raises `ConfigError`
    for an unusable proxy URL.
    """

    def __init__(
        self,
        *,
        kb_path: Path,
        egress_proxy: str | None = None,
        max_body_bytes: int = 5_000_000,
        client: httpx.AsyncClient | None = None,
        egress: EgressPolicy | None = None,
    ) -> None:
        if client is not None and (egress_proxy is not None or egress is not None):
            raise ConfigError(
                "HttpTransport builds its own client when an egress proxy or policy is set; "
                "a client handed in could bypass them"
            )
        self._kb_path = kb_path
        self._proxy = _checked_proxy(egress_proxy)
        self._max_body_bytes = max_body_bytes
        self._client = client or _build_client(self._proxy, egress)

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
        limit = int(request.params.get("limit", "10"))
        results = await asyncio.to_thread(
            kb.search, self._kb_path, request.params.get("q", ""), limit
        )
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
        try:
            async with self._client.stream(
                request.method,
                request.url,
                params=dict(request.params),
                headers=dict(request.headers),
                json=request.json,
                timeout=timeout_s,
            ) as response:
                content = await self._read_capped(provider, response)
        except httpx.TimeoutException as exc:
            raise ProviderTimeout(
                f"{provider} did not answer within {timeout_s:.1f}s", provider=provider
            ) from exc
        except httpx.ProxyError as exc:
            raise ProviderUnavailable(
                f"egress proxy refused or failed the call to {provider}: {exc}", provider=provider
            ) from exc
        except httpx.UnsupportedProtocol as exc:  # a redirect to file:, gopher:, ...
            raise EgressDenied(
                f"egress refused: {provider} was sent to a URL that is not http or https ({exc})",
                provider=provider,
            ) from exc
        except httpx.TransportError as exc:
            raise ProviderUnavailable(
                f"cannot reach {provider}: {type(exc).__name__}: {exc}", provider=provider
            ) from exc
        except EgressDenied as exc:  # raised below httpx, which knows no provider
            raise EgressDenied(exc.message, provider=provider) from None
        except httpx.InvalidURL as exc:
            # "012.0.0.1": a leading zero reads as octal to some resolvers. Neither an
            # address to connect to nor a fault of the back end: an egress refusal.
            raise EgressDenied(
                f"egress refused: {provider}'s URL is not a valid http(s) URL ({exc}); "
                "write addresses without leading zeros",
                provider=provider,
            ) from exc
        headers = {key.lower(): value for key, value in response.headers.items()}
        body = decode_body(content, headers.get("content-type", ""))
        return RawResponse(response.status_code, headers, body)

    async def _read_capped(self, provider: str, response: httpx.Response) -> bytes:
        chunks = bytearray()
        async for chunk in response.aiter_bytes():
            chunks.extend(chunk)
            if len(chunks) > self._max_body_bytes:
                raise BadResponse(
                    f"{provider} sent a body over the {self._max_body_bytes}-byte limit",
                    provider=provider,
                    http_status=response.status_code,
                )
        return bytes(chunks)

    async def aclose(self) -> None:
        await self._client.aclose()


def _checked_proxy(proxy: str | None) -> str | None:
    """`proxy` when it is a URL httpx and ddgs can route through; `ConfigError` if not,
    so that a typo fails at start-up and never sends calls direct."""
    if proxy is None:
        return None
    # The messages never repeat the URL: it may carry the proxy's password.
    try:
        url = httpx.URL(proxy)
    except httpx.InvalidURL:
        raise ConfigError("egress_proxy is not a valid URL") from None
    port_ok = url.port is None or 0 < url.port < 65536  # httpx lets 99999 through
    if url.scheme not in _PROXY_SCHEMES or not url.host or not port_ok:
        raise ConfigError(
            "egress_proxy must be an http://, https://, socks5:// or socks5h:// URL with a "
            "host and a valid port"
        )
    return proxy


def _build_client(proxy: str | None, policy: EgressPolicy | None) -> httpx.AsyncClient:
    """The one httpx client, routed as configured and nothing else.

    `trust_env=False`: HTTP(S)_PROXY, ALL_PROXY and NO_PROXY cannot send calls around
    the configured proxy (or through one nobody configured), and .netrc adds no
    credentials; the CA bundle variables (SSL_CERT_FILE, SSL_CERT_DIR) still count.
    """
    verify = httpx.create_ssl_context(trust_env=True)
    hooks: dict[str, list[Any]] = {}
    transport: httpx.AsyncHTTPTransport
    try:
        if policy is not None and proxy is None:
            transport = _CheckedTransport(policy, verify)
        else:
            transport = httpx.AsyncHTTPTransport(
                verify=verify, limits=_LIMITS, proxy=proxy, trust_env=False
            )
    except ImportError:  # a socks5 proxy without httpx's socks extra
        raise ConfigError(
            "egress_proxy is a socks proxy, which cannot be used without httpx's socks "
            "extra (the socksio package)"
        ) from None
    if policy is not None and proxy is not None:
        hooks["request"] = [partial(_check_destination, policy)]
    return httpx.AsyncClient(
        transport=transport,
        trust_env=False,
        headers={"User-Agent": USER_AGENT},
        follow_redirects=True,
        event_hooks=hooks,
    )


async def _check_destination(policy: EgressPolicy, request: httpx.Request) -> None:
    """Before a call (or a redirect) goes to the proxy: check where it is headed."""
    timeout = request.extensions.get("timeout", {}).get("connect")
    await egress.check_before_proxy(
        request.url.host, request.url.port or _default_port(request.url), policy, timeout
    )


def _default_port(url: httpx.URL) -> int:
    return 443 if url.scheme == "https" else 80


class _CheckedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport whose connections go only to addresses the policy allows.

    httpx takes no network backend, so the connection pool it built is replaced by
    one with `_CheckedBackend`; should a future httpx keep its pool elsewhere, this
    refuses to start rather than run unchecked.
    """

    def __init__(self, policy: EgressPolicy, verify: ssl.SSLContext) -> None:
        super().__init__(verify=verify, limits=_LIMITS, trust_env=False)
        if not isinstance(getattr(self, "_pool", None), httpcore.AsyncConnectionPool):
            raise ConfigError(
                "this httpx version keeps its connection pool elsewhere: the egress check "
                "cannot be installed, and sleuth will not connect unchecked"
            )
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=verify,
            max_connections=_LIMITS.max_connections,
            max_keepalive_connections=_LIMITS.max_keepalive_connections,
            keepalive_expiry=_LIMITS.keepalive_expiry,
            network_backend=_CheckedBackend(policy),
        )


class _CheckedBackend(httpcore.AsyncNetworkBackend):
    """Resolves each connection's host itself, checks every address, and connects to a
    checked one: no second lookup happens between the check and the connection.

    TLS still verifies the certificate against the host name (httpcore passes the
    URL's host as the server name, not the address connected to).
    """

    def __init__(self, policy: EgressPolicy) -> None:
        self._policy = policy
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await asyncio.wait_for(
                egress.allowed_addresses(host, port, self._policy), timeout
            )
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"resolving {host} timed out") from exc
        except OSError as exc:  # the name does not resolve: as httpcore would report it
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        failure: httpcore.ConnectError | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError as exc:  # the next address may answer
                failure = exc
        raise failure or httpcore.ConnectError(f"{host} resolves to no address")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


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
