"""Request bodies held to `serve.limits`: too large is 413 before a byte of it is
read, too slow is 408; both close the connection, so the rest is never read either.

A declared `Content-Length` over `max_body_bytes` is refused at once. A body without
one (chunked) is counted as it comes and refused when it passes the limit; the whole
body must arrive within `body_timeout_s` of the first read. A refusal raised while
the app reads is `Refused`, a Starlette `HTTPException` (the one kind FastAPI's body
parsing lets through unchanged) carrying the contract's error, which the app's
handler answers with (`refusal_response`). An app that catches every exception while
it reads (the MCP SDK's POST handler, which answers them 500) gets its body read first,
whole, by `read_first`: the refusal is raised outside it.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sleuth.errors import InvalidRequest, RequestTimeout, RequestTooLarge, SearchError
from sleuth.service_settings import WireLimits

__all__ = ["BodyLimits", "Refused", "read_body", "read_first", "too_large", "too_slow"]


def too_large(limit: int) -> RequestTooLarge:
    return RequestTooLarge(
        f"body: larger than {limit} bytes (serve.limits.max_body_bytes); send less",
        field="body",
    )


def too_slow(timeout_s: float) -> RequestTimeout:
    return RequestTimeout(
        f"body: not received within {timeout_s:g}s (serve.limits.body_timeout_s); send it at once",
        field="body",
    )


class Refused(HTTPException):
    """A request refused on the wire, with the error to answer; the connection closes."""

    def __init__(self, error: SearchError) -> None:
        super().__init__(error.status_hint, error.message, headers={"Connection": "close"})
        self.error = error


class BodyLimits:
    """ASGI middleware over the app: see the module docstring."""

    def __init__(self, app: ASGIApp, limits: WireLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limits.max_body_bytes
        declared = _content_length(scope)
        if declared == -1:
            error: SearchError = InvalidRequest(
                "Content-Length: not a byte count (ASCII digits)", field="Content-Length"
            )
            await _refuse(send, error)
            return
        if declared is not None and declared > limit:
            await _refuse(send, too_large(limit))
            return
        await self.app(scope, _limited(receive, limit, self.limits.body_timeout_s), send)


def _limited(receive: Receive, limit: int, timeout_s: float) -> Receive:
    received = 0
    deadline: float | None = None  # set at the first read
    complete = False

    async def limited() -> Message:
        nonlocal received, deadline, complete
        if complete:  # the body is in: what comes next is a disconnect, whenever it comes
            return await receive()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s if deadline is None else deadline
        try:
            async with asyncio.timeout_at(deadline):
                message = await receive()
        except TimeoutError:
            raise Refused(too_slow(timeout_s)) from None
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise Refused(too_large(limit))
            complete = not message.get("more_body", False)
        return message

    return limited


async def read_first(receive: Receive) -> Receive:
    """Read the request's whole body now, through `receive` (and so under its limits:
    `Refused` is raised here), and return a receive that hands it on as one message,
    then what `receive` gives after."""
    _, replay = await read_body(receive)
    return replay


async def read_body(receive: Receive) -> tuple[bytes | None, Receive]:
    """`read_first`, also returning the body read: None when a disconnect cut it short."""
    body = bytearray()
    pending: deque[Message] = deque()
    complete = False
    while not complete:
        message = await receive()
        if message["type"] != "http.request":
            pending.append(message)  # a disconnect: the body ends where it is
            break
        body += message.get("body", b"")
        complete = not message.get("more_body", False)
    whole = bytes(body)
    pending.appendleft({"type": "http.request", "body": whole, "more_body": not complete})

    async def replay() -> Message:
        return pending.popleft() if pending else await receive()

    return (whole if complete else None), replay


def _content_length(scope: Scope) -> int | None:
    """The declared length, None without one, -1 for one that is not a byte count."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isascii() and text.isdigit() else -1
    return None


async def _refuse(send: Send, error: SearchError) -> None:
    body = json.dumps(error.info().model_dump(mode="json")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": error.status_hint, "headers": headers})
    await send({"type": "http.response.body", "body": body})
