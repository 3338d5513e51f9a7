"""The only place that performs provider I/O.

`HttpTransport` sends a provider's `HttpRequest` with one shared httpx client
(connection reuse, per-call timeouts, the optional egress proxy), answers `kb:`
requests from the local index, and `ddgs:` requests through the ddgs library
(DuckDuckGo has no JSON API; the library is the one I/O sleuth hands away, behind
the same proxy, timeout and error mapping). `ReplayTransport` answers from a JSON Lines
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
import json
import math
import time
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx

from sleuth import kb
from sleuth.errors import (
    BadResponse,
    ConfigError,
    ProviderError,
    ProviderRejected,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    ReplayMiss,
)
from sleuth.providers.base import HttpRequest

USER_AGENT = "sleuth/0.1 (search for AI agents)"
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
    """Real I/O: httpx for HTTP(S), the SQLite index for `kb:` requests."""

    def __init__(
        self,
        *,
        kb_path: Path,
        egress_proxy: str | None = None,
        max_body_bytes: int = 5_000_000,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self._kb_path = kb_path
        self._proxy = egress_proxy
        self._max_body_bytes = max_body_bytes
        self._client = client or httpx.AsyncClient(
            proxy=egress_proxy,
            headers={"User-Agent": USER_AGENT},
            follow_redirects=True,
            limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
        )

    async def send(
        self, provider: str, query: str, request: HttpRequest, timeout_s: float
    ) -> RawResponse:
        started = time.perf_counter()
        if request.url.startswith("kb:"):
            response = await self._from_index(request)
        elif request.url.startswith("ddgs:"):
            response = await self._from_ddgs(provider, request, timeout_s)
        else:
            response = await self._over_http(provider, request, timeout_s)
        elapsed = (time.perf_counter() - started) * 1000
        return RawResponse(response.status, response.headers, response.body, elapsed)

    async def _from_index(self, request: HttpRequest) -> RawResponse:
        limit = int(request.params.get("limit", "10"))
        results = await asyncio.to_thread(
            kb.search, self._kb_path, request.params.get("q", ""), limit
        )
        return RawResponse(200, {"content-type": "application/json"}, {"results": results})

    async def _from_ddgs(
        self, provider: str, request: HttpRequest, timeout_s: float
    ) -> RawResponse:
        from ddgs.exceptions import DDGSException

        params = request.params
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
        except httpx.TransportError as exc:
            raise ProviderUnavailable(
                f"cannot reach {provider}: {type(exc).__name__}: {exc}", provider=provider
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


def _ddgs_text(params: Mapping[str, str], proxy: str | None, timeout_s: float) -> list[Any]:
    """One ddgs text search (in a worker thread). The proxy is passed explicitly so that
    ddgs never falls back to its own DDGS_PROXY variable and around the audited egress."""
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
    """Answers from recorded exchanges; a call with no matching line is a `ReplayMiss`."""

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
                f"the cassette has no (more) answers for provider {provider!r} and query {query!r}",
                provider=provider,
            )
        return queue.popleft()

    async def aclose(self) -> None:
        return None


class RecordingTransport:
    """Passes calls to `inner` and appends each answered exchange to `cassette`."""

    def __init__(self, inner: Transport, cassette: Path) -> None:
        self._inner = inner
        self._cassette = cassette

    async def send(
        self, provider: str, query: str, request: HttpRequest, timeout_s: float
    ) -> RawResponse:
        response = await self._inner.send(provider, query, request, timeout_s)
        line = {
            "provider": provider,
            "query": query,
            "status": response.status,
            "headers": {k: v for k, v in response.headers.items() if k in _RECORDED_HEADERS},
            "body": response.body,
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
