"""`sleuth serve`'s HTTP/1.1 protocol: uvicorn's httptools protocol with the header
limits of `serve.limits`, which uvicorn does not have.

- The request line and headers must arrive within `header_timeout_s` of the
  connection opening (or of a kept-alive request's first byte): a client that sends
  them slowly, or opens a connection and sends nothing, gets 408 and is closed.
- Together they may hold `max_header_bytes`: past that, 431 and closed.
- At `max_connections` held at once, a new connection closes the oldest one still
  sending its headers (it gets 408: a slow client makes room for a quick one); when
  every connection is past its headers, the new one gets 503 and is closed.

As one of the workers of `sleuth serve --processes N`, it also closes a keep-alive
connection after its response when the worker holds more than its share of them
(`sleuth.api.connection_share`).

Bodies are the app's to limit (`sleuth.api.body_limits`), as only it knows the route.
The refusals are the error contract's JSON, written straight to the socket: no
request exists yet to answer through the app.

Under thousands of slow clients that reconnect as soon as they are closed, a new
connection waits in the kernel's accept queue behind theirs, so what each costs the
event loop is what a quick client waits (bench/wire_limits.py). Hence: the refusals
are built once, as bytes; one timer per server sweeps the waiting connections, oldest
first, instead of one timer per connection.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections import OrderedDict
from typing import Any, Protocol

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from sleuth.api.connection_share import ConnectionShare
from sleuth.errors import RequestTimeout, RequestTooLarge, SearchError, TooManyConnections
from sleuth.service_settings import WireLimits

__all__ = ["limited_protocol"]

_REASONS = {
    408: b"Request Timeout",
    431: b"Request Header Fields Too Large",
    503: b"Service Unavailable",
}

#: A connection past its header deadline is refused within this share of
#: `header_timeout_s` after it (the sweep's period): 0.5 s of the default 10 s.
_SWEEP_SHARE = 0.05


class _Refusable(Protocol):
    def refuse_slow_headers(self) -> None: ...


class _Waiting:
    """One server's connections still sending their headers, each with its deadline,
    oldest first (every deadline is its start plus the same timeout, so insertion
    order is deadline order), and the one timer that refuses those past it.

    An OrderedDict, not a dict: a dict emptied from the front keeps the removed slots
    ahead of its first entry until it is resized, so finding the oldest would cost a
    scan of every connection closed since."""

    def __init__(self, loop: asyncio.AbstractEventLoop, limits: WireLimits) -> None:
        self.loop = loop
        self.timeout_s = limits.header_timeout_s
        self.period_s = limits.header_timeout_s * _SWEEP_SHARE
        self.deadlines: OrderedDict[_Refusable, float] = OrderedDict()
        self.sweep_at: asyncio.TimerHandle | None = None

    def add(self, connection: _Refusable) -> None:
        if connection in self.deadlines:
            return  # the deadline runs from the connection opening
        self.deadlines[connection] = self.loop.time() + self.timeout_s
        if self.sweep_at is None:
            self.sweep_at = self.loop.call_at(
                self.deadlines[connection] + self.period_s, self._sweep
            )

    def remove(self, connection: _Refusable) -> None:
        self.deadlines.pop(connection, None)

    def oldest_other_than(self, connection: _Refusable) -> _Refusable | None:
        for oldest in self.deadlines:
            if oldest is not connection:
                return oldest
        return None

    def _sweep(self) -> None:
        self.sweep_at = None
        now = self.loop.time()
        late = []
        for connection, deadline in self.deadlines.items():
            if deadline > now:
                break
            late.append(connection)
        for connection in late:
            connection.refuse_slow_headers()
        if self.deadlines:
            first = next(iter(self.deadlines.values()))
            self.sweep_at = self.loop.call_at(max(first, now) + self.period_s, self._sweep)


def limited_protocol(
    limits: WireLimits, share: ConnectionShare | None = None
) -> type[HttpToolsProtocol]:
    """A protocol class for `uvicorn.run(http=...)` that enforces `limits`; with
    `share` (a worker of `sleuth serve --processes N`), a worker holding more than its
    share of the connections closes one after its next response
    (`sleuth.api.connection_share`)."""

    slow_headers = _refusal(
        RequestTimeout(
            f"headers: not received within {limits.header_timeout_s:g}s "
            "(serve.limits.header_timeout_s)",
            field="headers",
        )
    )
    headers_too_large = _refusal(
        RequestTooLarge(
            f"headers: larger than {limits.max_header_bytes} bytes (serve.limits.max_header_bytes)",
            field="headers",
        ),
        status=431,
    )
    too_many = _refusal(
        TooManyConnections(
            f"{limits.max_connections} connections are open "
            "(serve.limits.max_connections); retry shortly",
            retry_after_s=1.0,
        )
    )
    #: Per server (a protocol class may serve several): its waiting connections.
    servers: weakref.WeakKeyDictionary[Any, _Waiting] = weakref.WeakKeyDictionary()

    class LimitedProtocol(HttpToolsProtocol):
        _waiting: _Waiting
        _header_bytes = 0
        _leaving = False  # told to close after its response, to even the workers out

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if share is not None:
                share.held(len(self.connections))
            waiting = servers.get(self.server_state)
            if waiting is None:
                waiting = servers[self.server_state] = _Waiting(self.loop, limits)
            self._waiting = waiting
            if len(self.connections) > limits.max_connections:
                oldest = waiting.oldest_other_than(self)
                if oldest is None:
                    self._refuse(too_many)
                    return
                oldest.refuse_slow_headers()
            waiting.add(self)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._header_bytes = 0
            self._waiting.add(self)  # a kept-alive connection's next request

        def on_url(self, url: bytes) -> None:
            self._count(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count(len(name) + len(value) + 4)
            super().on_header(name, value)

        def _count(self, size: int) -> None:
            self._header_bytes += size
            if self._header_bytes > limits.max_header_bytes:
                self._refuse(headers_too_large)

        def on_headers_complete(self) -> None:
            self._waiting.remove(self)
            before = self.cycle
            super().on_headers_complete()
            cycle = self.cycle
            if (
                share is not None
                and cycle is not before  # a request was taken (not an upgrade)
                and cycle is not None
                and cycle.keep_alive
                and not self._leaving
                and share.should_leave()
            ):
                cycle.keep_alive = False  # answered with Connection: close, then closed
                self._leaving = True

        def data_received(self, data: bytes) -> None:
            if self.transport.is_closing():
                return  # refused: the rest is not read
            super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            self._waiting.remove(self)
            super().connection_lost(exc)
            if share is not None:
                share.held(len(self.connections))
                if self._leaving:
                    share.left()

        def refuse_slow_headers(self) -> None:
            self._refuse(slow_headers)

        def _refuse(self, response: bytes) -> None:
            self._waiting.remove(self)
            if not self.transport.is_closing():
                self.transport.write(response)
                self.transport.close()

    return LimitedProtocol


def _refusal(error: SearchError, status: int | None = None) -> bytes:
    """The whole HTTP response that refuses a connection with `error`, then closes it."""
    code = status or error.status_hint
    body = json.dumps(error.info().model_dump(mode="json")).encode()
    head = b"HTTP/1.1 %d %s\r\n" % (code, _REASONS.get(code, b"Error"))
    head += b"content-type: application/json\r\nconnection: close\r\n"
    if error.retry_after_s is not None:
        head += b"retry-after: %d\r\n" % max(1, round(error.retry_after_s))
    return head + b"content-length: %d\r\n\r\n" % len(body) + body
