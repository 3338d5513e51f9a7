"""`sleuth serve`'s HTTP/1.1 protocol: uvicorn's httptools protocol with the header
limits of `serve.limits`, which uvicorn does not have.

- The request line and headers must arrive within `header_timeout_s` of the
  connection opening (or of a kept-alive request's first byte): a client that sends
  them slowly, or opens a connection and sends nothing, gets 408 and is closed.
- Together they may hold `max_header_bytes`: past that, 431 and closed.
- At `max_connections` held at once, a new connection closes the oldest one still
  sending its headers (it gets 408: a slow client makes room for a quick one); when
  every connection is past its headers, the new one gets 503 and is closed.

Bodies are the app's to limit (`sleuth.api.body_limits`), as only it knows the route.
The refusals are the error contract's JSON, written straight to the socket: no
request exists yet to answer through the app.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from sleuth.errors import RequestTimeout, RequestTooLarge, SearchError, TooManyConnections
from sleuth.service_settings import WireLimits

__all__ = ["limited_protocol"]

_REASONS = {
    408: b"Request Timeout",
    431: b"Request Header Fields Too Large",
    503: b"Service Unavailable",
}


def limited_protocol(limits: WireLimits) -> type[HttpToolsProtocol]:
    """A protocol class for `uvicorn.run(http=...)` that enforces `limits`."""

    #: Per server: the connections still sending their headers, oldest first.
    waiting: weakref.WeakKeyDictionary[Any, dict[LimitedProtocol, None]]
    waiting = weakref.WeakKeyDictionary()

    class LimitedProtocol(HttpToolsProtocol):
        _header_timer: asyncio.TimerHandle | None = None
        _header_bytes = 0

        def _waiting(self) -> dict[LimitedProtocol, None]:
            return waiting.setdefault(self.server_state, {})

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections and not self._make_room():
                self._refuse(
                    TooManyConnections(
                        f"{limits.max_connections} connections are open "
                        "(serve.limits.max_connections); retry shortly",
                        retry_after_s=1.0,
                    )
                )
                return
            self._expect_headers()

        def _make_room(self) -> bool:
            """Close the oldest connection still sending its headers; False when none is."""
            queue = self._waiting()
            for oldest in queue:
                if oldest is not self:
                    oldest._refuse(_slow_headers(limits.header_timeout_s))
                    return True
            return False

        def _expect_headers(self) -> None:
            self._header_bytes = 0
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(
                    limits.header_timeout_s,
                    self._refuse,
                    _slow_headers(limits.header_timeout_s),
                )
            self._waiting()[self] = None

        def _headers_done(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            self._waiting().pop(self, None)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._expect_headers()  # a kept-alive connection's next request

        def on_url(self, url: bytes) -> None:
            self._count(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count(len(name) + len(value) + 4)
            super().on_header(name, value)

        def _count(self, size: int) -> None:
            self._header_bytes += size
            if self._header_bytes > limits.max_header_bytes:
                self._refuse(
                    RequestTooLarge(
                        f"headers: larger than {limits.max_header_bytes} bytes "
                        "(serve.limits.max_header_bytes)",
                        field="headers",
                    ),
                    status=431,
                )

        def on_headers_complete(self) -> None:
            self._headers_done()
            super().on_headers_complete()

        def data_received(self, data: bytes) -> None:
            if self.transport.is_closing():
                return  # refused: the rest is not read
            super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            self._headers_done()
            super().connection_lost(exc)

        def _refuse(self, error: SearchError, status: int | None = None) -> None:
            self._headers_done()
            if self.transport.is_closing():
                return
            code = status or error.status_hint
            body = json.dumps(error.info().model_dump(mode="json")).encode()
            head = b"HTTP/1.1 %d %s\r\n" % (code, _REASONS.get(code, b"Error"))
            head += b"content-type: application/json\r\nconnection: close\r\n"
            if error.retry_after_s is not None:
                head += b"retry-after: %d\r\n" % max(1, round(error.retry_after_s))
            head += b"content-length: %d\r\n\r\n" % len(body)
            self.transport.write(head + body)
            self.transport.close()

    return LimitedProtocol


def _slow_headers(timeout_s: float) -> RequestTimeout:
    return RequestTimeout(
        f"headers: not received within {timeout_s:g}s (serve.limits.header_timeout_s)",
        field="headers",
    )
