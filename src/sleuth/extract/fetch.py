"""Getting a page's bytes through sleuth's own egress rules.

`HttpPageSource` goes through a `sleuth.transport.EgressClient`, as provider calls
do: the configured proxy or none, environment proxies ignored, and with an egress
policy every connection checked after DNS, so a page, or a redirect, that leads to a
private, loopback or link-local address is refused before a byte is sent. Redirects are
followed here, one by one, up to `max_redirects`, each target checked for an
http(s) scheme (a redirect to `file:` or `javascript:` ends the fetch). The body is
read decompressed (gzip, deflate, brotli) and refused past `max_bytes`, so a
compression bomb stops at the cap too; the whole fetch, redirects and a body that
trickles forever included, runs under one deadline.

`tls` says what the connection proved: `valid` when the page came over https with a
certificate that verified for its host, `none` over plain http; a certificate that
does not verify ends the fetch with `TlsInvalid` (the page is not read).
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urljoin, urlsplit

import yarl

from sleuth.egress import EgressPolicy
from sleuth.errors import (
    BadResponse,
    EgressDenied,
    InvalidRequest,
    ProviderTimeout,
    ProviderUnavailable,
    TlsInvalid,
    from_status,
)
from sleuth.extract.models import TlsInfo
from sleuth.transport import EgressClient

if TYPE_CHECKING:
    import aiohttp  # imported where a page is fetched (0.2 s), as in `sleuth.transport`

__all__ = ["Fetched", "HttpPageSource", "PageSource", "checked_url", "host_of"]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ACCEPT = "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.1"


@dataclass(frozen=True)
class Fetched:
    url: str
    final_url: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    tls: TlsInfo = field(default_factory=lambda: TlsInfo(status="none", reason="plain http"))


class PageSource(Protocol):
    async def get(self, url: str, *, timeout_s: float, max_bytes: int, user_agent: str) -> Fetched:
        """The page at `url` after redirects; raises a `SearchError` when it cannot."""
        ...

    async def aclose(self) -> None: ...


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def checked_url(url: str, field_name: str = "urls") -> str:
    """`url` when it is an absolute http(s) URL with a host; `InvalidRequest` if not.

    >>> checked_url("javascript:alert(1)")
    Traceback (most recent call last):
    sleuth.errors.InvalidRequest: urls: 'javascript:alert(1)' is not an http(s) URL; allowed: \
http, https
    """
    text = url.strip()
    try:
        parts = urlsplit(text)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError:
        parts, port_ok = urlsplit(""), False
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or not port_ok:
        shown = text if len(text) <= 80 else f"{text[:80]}…"
        raise InvalidRequest(
            f"{field_name}: {shown!r} is not an http(s) URL; allowed: http, https",
            field=field_name,
            allowed=["http", "https"],
        )
    return text


def _tls_failure(exc: BaseException) -> str | None:
    """The certificate problem behind a connection error, if that is what it was."""
    import aiohttp

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, aiohttp.ClientConnectorCertificateError):
            return str(seen.certificate_error)
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen.verify_message or str(seen)
        if "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return str(seen)
        seen = seen.__cause__ or seen.__context__
    return None


class HttpPageSource:
    """Pages over HTTP(S), with the egress proxy and address policy of provider calls."""

    def __init__(
        self,
        *,
        egress_proxy: str | None = None,
        egress: EgressPolicy | None = None,
        max_redirects: int = 5,
        client: EgressClient | None = None,
    ) -> None:
        self._client = client or EgressClient(egress_proxy, egress)
        self._max_redirects = max_redirects

    async def get(self, url: str, *, timeout_s: float, max_bytes: int, user_agent: str) -> Fetched:
        import aiohttp

        host = host_of(url)
        try:
            async with asyncio.timeout(timeout_s):
                return await self._follow(url, timeout_s, max_bytes, user_agent)
        except TimeoutError:  # the deadline, and aiohttp's own timeouts
            raise ProviderTimeout(
                f"{url} did not finish within {timeout_s:g}s", provider=host
            ) from None
        except EgressDenied as exc:  # raised below aiohttp, which knows no host
            raise EgressDenied(exc.message, provider=host) from None
        except aiohttp.InvalidURL as exc:
            raise BadResponse(
                f"{url} leads to a URL that is not http(s) or not valid: {exc}", provider=host
            ) from None
        except aiohttp.ClientError as exc:  # a certificate error is one too (and a ValueError)
            if (reason := _tls_failure(exc)) is not None:
                raise TlsInvalid(
                    f"the TLS certificate of {host} did not verify: {reason}", provider=host
                ) from None
            raise ProviderUnavailable(
                f"cannot reach {host}: {type(exc).__name__}: {exc}", provider=host
            ) from None
        except ValueError as exc:  # a URL yarl cannot read
            raise BadResponse(
                f"{url} leads to a URL that is not http(s) or not valid: {exc}", provider=host
            ) from None

    async def _follow(self, url: str, timeout_s: float, max_bytes: int, user_agent: str) -> Fetched:
        current = url
        headers = {"User-Agent": user_agent, "Accept": _ACCEPT}
        # The session keeps no cookies (it serves every tenant); a site that sets one
        # and redirects to where it checks it (a consent or cookie check) gets it back
        # within this fetch, from the host that set it, and never on another fetch.
        cookies: dict[str, dict[str, str]] = {}
        for _ in range(self._max_redirects + 1):
            own = cookies.get(host_of(current))
            sent = {**headers, "Cookie": _cookie_header(own)} if own else headers
            async with self._client.request(
                "GET", yarl.URL(current), timeout_s=timeout_s, headers=sent
            ) as response:
                location = response.headers.get("Location")
                if response.status in _REDIRECTS and location:
                    for morsel in response.cookies.values():
                        cookies.setdefault(host_of(current), {})[morsel.key] = morsel.value
                    target = urljoin(current, location)
                    try:
                        current = checked_url(target, "location")
                    except InvalidRequest:
                        raise BadResponse(
                            f"{current} redirects to {target[:100]!r}, which is not http(s)",
                            provider=host_of(url),
                        ) from None
                    continue
                return await self._answer(url, current, response, max_bytes)
        raise BadResponse(
            f"{url} redirects more than {self._max_redirects} times", provider=host_of(url)
        )

    async def _answer(
        self, url: str, current: str, response: aiohttp.ClientResponse, max_bytes: int
    ) -> Fetched:
        host = host_of(current)
        if not 200 <= response.status < 300:
            raise from_status(host, response.status, f"{current} could not be read")
        if (response.content_length or 0) > max_bytes:
            raise _too_large(current, host, max_bytes)
        body = bytearray()
        async for chunk in response.content.iter_chunked(65536):
            body.extend(chunk)
            if len(body) > max_bytes:
                raise _too_large(current, host, max_bytes)
        tls = (
            TlsInfo(status="valid", reason=f"certificate verified for {host}")
            if response.url.scheme == "https"
            else TlsInfo(status="none", reason="plain http")
        )
        return Fetched(
            url,
            str(response.url),
            response.status,
            {key.lower(): value for key, value in response.headers.items()},
            bytes(body),
            tls,
        )

    async def aclose(self) -> None:
        await self._client.aclose()


def _too_large(url: str, host: str, max_bytes: int) -> BadResponse:
    return BadResponse(
        f"{url} is larger than the {max_bytes}-byte limit (extract.max_bytes)", provider=host
    )


def _cookie_header(cookies: dict[str, str]) -> str:
    return "; ".join(f"{name}={value}" for name, value in cookies.items())
