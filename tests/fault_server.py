"""A local HTTP server that impersonates a search provider and misbehaves on request.

A helper for tests, not a test module. The server speaks just enough HTTP/1.1 over
asyncio streams, in its own thread with its own event loop, so it can do what a
well-behaved server library cannot: hold a request forever, trickle a body, promise
more bytes than it sends, reset a connection. Healthy and empty answers have the
SearXNG JSON shape (`tests/data/searxng/`), with the request's `q` as their `query`,
so the `searxng` provider's `base_url` can point at it.

Choosing what a request gets, first match wins:

1. the query parameter `fault=<mode>` (an unknown mode answers 404 listing them);
2. the first path segment, when it names a mode: `GET /503/search?q=…`, so
   `base_url = server.url_for("503")` makes a provider fail that way every time;
3. the next mode queued with `server.queue("504", "504", "ok")`, one per request;
4. `server.default_mode` (`"ok"` unless set).

Modes (`MODES`):

    ok          200, SearXNG JSON with results
    slow        the same, after `delay` seconds (a busy but healthy back end)
    empty       200, SearXNG JSON with an empty result list
    timeout     reads the request, never answers (until the client leaves or `hold`)
    trickle     200 with the full Content-Length, then `chunk` bytes every `interval` s
    429         Retry-After: `retry_after` (seconds), JSON error body
    500 502 503 504
                the status, with the bodies such servers and proxies send
    451         "unavailable for legal reasons ... geoblocked" (JSON)
    400         a content-policy refusal (JSON, code `policy_violation`)
    401         invalid API key, with WWW-Authenticate
    malformed   200, Content-Type JSON, a body that is not JSON
    truncated   200, Content-Length of the whole body, half of it, then close (FIN)
    html        200, an HTML results page instead of JSON
    captcha     200, a bot-check / CAPTCHA page
    huge        200, a `size`-byte JSON body (50 MiB by default), streamed in 64 KiB chunks
    reset       reads the request, then closes with RST (SO_LINGER 0)

Connection refused is not a mode (a listening server cannot refuse): use
`server.refused_url`, or `refused_url()` alone, a port bound with nothing listening.
The per-request knobs `retry_after`, `chunk`, `interval`, `size`, `hold` and `delay`
can be given as query parameters; their defaults are the constructor's arguments.

Every request is kept in `server.requests` (method, path, query, headers, mode).

>>> import httpx
>>> with FaultServer() as server:
...     httpx.get(server.url_for("503") + "/search", params={"q": "x"}).status_code
503
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl, urlsplit

import pytest

SEARXNG_DATA = Path(__file__).parent / "data" / "searxng"
MODES = (
    *("ok", "slow", "empty", "timeout", "trickle", "429", "500", "502", "503", "504", "451"),
    *("400", "401", "malformed", "truncated", "html", "captcha", "huge", "reset"),
)
MiB = 1024 * 1024

_NGINX = (  # what nginx sends when its upstream fails
    "<html>\r\n<head><title>{0}</title></head>\r\n<body>\r\n"
    "<center><h1>{0}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)
# A JSON-looking body a parser chokes on (the doubled comma), as a buggy proxy might send.
_MALFORMED = b'{"query": "q", "results": [{"url": "https://example.org/a", "title": "A"},, ]'
_HTML_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Search results</title></head>
<body><form action="/search"><input name="q"></form>
<ol><li><a href="https://example.org/a">Example A</a><p>An HTML page, not the JSON API.</p></li>
</ol></body></html>
"""
_CAPTCHA_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Attention required: are you a robot?</title>
<script src="https://www.google.com/recaptcha/api.js" async defer></script></head>
<body><h1>Please verify you are a human</h1>
<p>Our systems have detected unusual traffic from your computer network.
Please complete the CAPTCHA below to continue.</p>
<form method="post" action="/sorry"><div class="g-recaptcha" data-sitekey="6Lc-fake"></div>
<input type="submit" value="Continue"></form></body></html>
"""


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names lower-cased
    mode: str


@contextlib.contextmanager
def refused_url() -> Iterator[str]:
    """A URL whose port is bound but not listening: every connection is refused (RST).

    Holding the port bound keeps anything else from listening there meanwhile.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


@dataclass
class _Request:
    method: str
    target: str
    headers: dict[str, str]
    query: dict[str, str] = field(default_factory=dict)


class FaultServer:
    """The misbehaving provider; a context manager that starts and stops its thread."""

    def __init__(
        self,
        *,
        default_mode: str = "ok",
        retry_after_s: int = 2,
        trickle_chunk: int = 32,
        trickle_interval_s: float = 0.2,
        huge_bytes: int = 50 * MiB,
        hold_s: float = 60.0,
        slow_s: float = 0.1,
    ) -> None:
        self.default_mode = default_mode
        self.retry_after_s = retry_after_s
        self.trickle_chunk = trickle_chunk
        self.trickle_interval_s = trickle_interval_s
        self.huge_bytes = huge_bytes
        self.hold_s = hold_s
        self.slow_s = slow_s
        self.requests: list[Received] = []
        self.port = 0
        self._queue: deque[str] = deque()
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._startup_error: OSError | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._handlers: set[asyncio.Task[Any]] = set()
        self._refused: contextlib.ExitStack | None = None
        self.refused_url = ""

    # -- the test's side ---------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url_for(self, mode: str) -> str:
        """The base URL whose every request gets `mode` (append `/search` and so on)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
        return f"{self.url}/{mode}"

    def queue(self, *modes: str) -> None:
        """The next requests that name no mode get these, in order, then the default."""
        unknown = [mode for mode in modes if mode not in MODES]
        if unknown:
            raise ValueError(f"unknown modes {unknown}; modes: {', '.join(MODES)}")
        with self._lock:
            self._queue.extend(modes)

    def start(self) -> Self:
        self._refused = contextlib.ExitStack()
        self.refused_url = self._refused.enter_context(refused_url())
        self._thread = threading.Thread(target=self._run, name="fault-server", daemon=True)
        self._thread.start()
        # Generous: a thread of a busy test process can wait long for the GIL.
        if not self._ready.wait(timeout=60):
            self.stop()
            raise RuntimeError("the fault server did not start within 60 s")
        if self._startup_error is not None:
            self.stop()
            raise self._startup_error
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections, and join the thread."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop finished meanwhile
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=10)
            if self._thread.is_alive():
                raise RuntimeError("the fault server's thread did not stop within 10 s")
            self._thread = None
        if self._refused is not None:
            self._refused.close()
            self._refused = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- the server's thread -----------------------------------------------------------

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        except OSError as exc:
            self._startup_error = exc
            self._ready.set()
            return
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()
            for handler in list(self._handlers):
                handler.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)
        await server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            request = await _read_request(reader)
            mode = self._mode_for(request)
            path = urlsplit(request.target).path
            self.requests.append(
                Received(request.method, path, request.query, request.headers, mode)
            )
            await self._answer(mode, request, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client left or sent something that is not HTTP; nothing to answer
        except asyncio.CancelledError:
            writer.transport.abort()  # shutting down: do not wait for a slow reader
            raise
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    def _mode_for(self, request: _Request) -> str:
        if "fault" in request.query:
            return request.query["fault"]
        first = urlsplit(request.target).path.strip("/").split("/")[0]
        if first in MODES:
            return first
        with self._lock:
            return self._queue.popleft() if self._queue else self.default_mode

    async def _answer(
        self,
        mode: str,
        request: _Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        knobs = request.query
        query = knobs.get("q", "")
        if mode == "ok":
            await _send(writer, 200, _searxng("search_ok.json", query))
        elif mode == "slow":
            await asyncio.sleep(float(knobs.get("delay", self.slow_s)))
            await _send(writer, 200, _searxng("search_ok.json", query))
        elif mode == "empty":
            await _send(writer, 200, _searxng("search_empty.json", query))
        elif mode == "timeout":
            await _hold(reader, float(knobs.get("hold", self.hold_s)))
        elif mode == "trickle":
            chunk = int(knobs.get("chunk", self.trickle_chunk))
            interval = float(knobs.get("interval", self.trickle_interval_s))
            await _trickle(writer, _searxng("search_ok.json", query), chunk, interval)
        elif mode == "429":
            retry_after = knobs.get("retry_after", str(self.retry_after_s))
            body = _json({"error": "too many requests", "retry_after": int(retry_after)})
            await _send(writer, 429, body, {"Retry-After": retry_after})
        elif mode == "500":
            await _send(writer, 500, _json({"error": "internal server error"}))
        elif mode in ("502", "504"):
            title = f"{mode} {HTTPStatus(int(mode)).phrase}"
            await _send(writer, int(mode), _NGINX.format(title).encode(), _HTML)
        elif mode == "503":
            await _send(writer, 503, b"Service Unavailable: engines overloaded\n", _TEXT)
        elif mode == "451":
            message = "unavailable for legal reasons: geoblocked in your region"
            await _send(writer, 451, _json({"error": {"code": 451, "message": message}}))
        elif mode == "400":
            message = "the query violates the content policy and was refused"
            body = _json({"error": {"code": "policy_violation", "message": message}})
            await _send(writer, 400, body)
        elif mode == "401":
            body = _json({"error": {"code": "unauthorized", "message": "invalid API key"}})
            await _send(writer, 401, body, {"WWW-Authenticate": 'Bearer realm="search"'})
        elif mode == "malformed":
            await _send(writer, 200, _MALFORMED)
        elif mode == "truncated":
            body = _searxng("search_ok.json", query)
            writer.write(_head(200, len(body), _JSON) + body[: len(body) // 2])
            await writer.drain()
        elif mode == "html":
            await _send(writer, 200, _HTML_PAGE.encode(), _HTML)
        elif mode == "captcha":
            await _send(writer, 200, _CAPTCHA_PAGE.encode(), _HTML)
        elif mode == "huge":
            await _huge(writer, query, int(knobs.get("size", self.huge_bytes)))
        elif mode == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        else:
            message = f"unknown fault mode {mode!r}; modes: {', '.join(MODES)}"
            await _send(writer, 404, _json({"error": message}))


_JSON = {"Content-Type": "application/json; charset=utf-8"}
_HTML = {"Content-Type": "text/html; charset=utf-8"}
_TEXT = {"Content-Type": "text/plain; charset=utf-8"}


async def _read_request(reader: asyncio.StreamReader) -> _Request:
    head = await reader.readuntil(b"\r\n\r\n")
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, target, _version = request_line.split(" ", 2)
    headers = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    if int(headers.get("content-length", "0") or 0):
        await reader.readexactly(int(headers["content-length"]))
    query = dict(parse_qsl(urlsplit(target).query, keep_blank_values=True))
    return _Request(method, target, headers, query)


def _head(status: int, length: int, headers: dict[str, str]) -> bytes:
    lines = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        f"Content-Length: {length}",
        "Connection: close",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _send(
    writer: asyncio.StreamWriter,
    status: int,
    body: bytes,
    headers: dict[str, str] | None = None,
) -> None:
    writer.write(_head(status, len(body), {**_JSON, **(headers or {})}) + body)
    await writer.drain()


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def _searxng(sample: str, query: str) -> bytes:
    payload = json.loads((SEARXNG_DATA / sample).read_text(encoding="utf-8"))
    payload["query"] = query
    return _json(payload)


async def _hold(reader: asyncio.StreamReader, hold_s: float) -> None:
    """Answer nothing until the client hangs up or `hold_s` passes."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(reader.read(), hold_s)


async def _trickle(writer: asyncio.StreamWriter, body: bytes, chunk: int, interval: float) -> None:
    writer.write(_head(200, len(body), _JSON))
    for start in range(0, len(body), max(1, chunk)):
        writer.write(body[start : start + chunk])
        await writer.drain()
        if start + chunk < len(body):
            await asyncio.sleep(interval)


async def _huge(writer: asyncio.StreamWriter, query: str, size: int) -> None:
    """Exactly `size` bytes of valid SearXNG JSON: one result repeated, never all in memory."""
    head = _json({"query": query, "number_of_results": 0})[:-1] + b', "results": ['
    tail = b"]}"
    item = _json(json.loads(_searxng("search_ok.json", query))["results"][0])
    room = size - len(head) - len(tail)
    if room < len(item):
        raise ValueError(f"size {size} is too small for one result")
    count = (room + 1) // (len(item) + 1)  # n items and n - 1 commas
    padding = room - count * len(item) - (count - 1)
    writer.write(_head(200, size, _JSON) + head + item)
    per_batch = max(1, (64 * 1024) // (len(item) + 1))
    batch = (b"," + item) * per_batch
    left = count - 1
    while left > 0:
        n = min(left, per_batch)
        writer.write(batch if n == per_batch else (b"," + item) * n)
        await writer.drain()
        left -= n
    writer.write(b" " * padding + tail)
    await writer.drain()


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    """A started `FaultServer`, stopped after the test.

    Use it with `pytest_plugins = ["fault_server"]` in a conftest.py, or start one
    yourself: `with FaultServer() as server: ...`.
    """
    with FaultServer() as server:
        yield server
