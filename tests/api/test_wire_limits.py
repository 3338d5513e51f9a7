"""Limits on the wire, over real sockets against uvicorn with sleuth's protocol: a body
over the limit is refused before it is sent, slow headers and bodies get 408, big
headers 431, and at the connection cap a slow client makes room for a quick one."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from live import uvicorn_thread
from test_http import QUERY, settings

from sleuth.api.http import create_app
from sleuth.api.wire_protocol import limited_protocol
from sleuth.service_settings import WireLimits

LIMITS = WireLimits(
    max_body_bytes=4096,
    max_header_bytes=2048,
    header_timeout_s=0.4,
    body_timeout_s=0.4,
    max_connections=4,
)


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    conf = settings(tmp_path, serve={"limits": LIMITS.model_dump()})
    app = create_app(conf, bound_host="127.0.0.1")
    with uvicorn_thread(app, http=limited_protocol(LIMITS)) as url:
        yield url


def connect(base: str) -> socket.socket:
    parts = urlsplit(base)
    return socket.create_connection((parts.hostname or "", parts.port or 80), timeout=5)


def answer(sock: socket.socket) -> tuple[int, dict[str, str], dict[str, Any]]:
    """Status, headers and JSON body of the one response on `sock`, read to its close."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, json.loads(body)


def test_a_declared_200_mb_body_is_refused_before_it_is_sent(base: str) -> None:
    with connect(base) as sock:
        sock.sendall(
            b"POST /v1/search HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            b"Content-Length: 209715200\r\n\r\n"
        )
        started = time.monotonic()
        status, headers, error = answer(sock)  # answered and closed with no body sent
    assert time.monotonic() - started < 2
    assert status == 413 and headers["connection"] == "close"
    assert (error["code"], error["field"]) == ("request_too_large", "body")
    assert "4096 bytes" in error["message"]


def test_a_chunked_body_is_cut_when_it_passes_the_limit(base: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"query": "' + b"a" * 3000
        yield b"a" * 3000 + b'"}'

    answered = httpx.post(
        f"{base}/v1/search", content=chunks(), headers={"content-type": "application/json"}
    )
    assert answered.status_code == 413
    assert answered.json()["code"] == "request_too_large"


def test_a_slow_body_gets_408(base: str) -> None:
    with connect(base) as sock:
        sock.sendall(
            b"POST /v1/search HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            b'Content-Length: 40\r\n\r\n{"query": '
        )
        status, _, error = answer(sock)
    assert status == 408
    assert (error["code"], error["field"]) == ("request_timeout", "body")


@pytest.mark.parametrize("sent", [b"", b"POST /v1/search HTTP/1.1\r\nHost: t\r\n"])
def test_slow_or_absent_headers_get_408_and_the_connection_closes(base: str, sent: bytes) -> None:
    with connect(base) as sock:
        sock.sendall(sent)
        started = time.monotonic()
        status, _, error = answer(sock)
    assert 0.3 < time.monotonic() - started < 3
    assert status == 408
    assert (error["code"], error["field"]) == ("request_timeout", "headers")


def test_headers_over_the_limit_get_431(base: str) -> None:
    with connect(base) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Junk: " + b"j" * 4000 + b"\r\n\r\n")
        status, _, error = answer(sock)
    assert status == 431 and error["code"] == "request_too_large"


def test_at_the_connection_cap_the_oldest_slow_client_makes_room(base: str) -> None:
    slow = [connect(base) for _ in range(LIMITS.max_connections)]
    for sock in slow:
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
    time.sleep(0.05)
    try:
        quick = httpx.post(f"{base}/v1/search", json={"query": QUERY}, timeout=5)
        status, _, error = answer(slow[0])
    finally:
        for sock in slow:
            sock.close()
    assert quick.status_code == 200 and quick.json()["results"]
    assert status == 408 and error["field"] == "headers"


def test_every_slow_connection_gets_its_408_not_only_the_oldest(base: str) -> None:
    slow = [connect(base) for _ in range(LIMITS.max_connections - 1)]
    try:
        for index, sock in enumerate(slow):
            sock.sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
            time.sleep(0.1 * index)  # deadlines spread over the sweep's periods
        answers = [answer(sock) for sock in slow]
    finally:
        for sock in slow:
            sock.close()
    assert [(status, error["field"]) for status, _, error in answers] == [(408, "headers")] * 3


def test_a_kept_alive_connections_next_request_must_send_its_headers_in_time(base: str) -> None:
    with connect(base) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        first = sock.recv(65536)
        time.sleep(0.6)  # idle, not slow: past header_timeout_s, within keep_alive_s
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
        status, _, error = answer(sock)
    assert first.startswith(b"HTTP/1.1 200")
    assert status == 408 and error["field"] == "headers"


MCP_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
}


def padded_mcp_call(size: int) -> Iterator[bytes]:
    """A JSON-RPC tools/call sent in two chunks (no Content-Length), `size` bytes or so."""
    yield b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "web_search", '
    yield b'"arguments": {"query": "' + b"a" * size + b'"}}}'


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "declared"])
def test_an_mcp_body_over_the_limit_gets_413(base: str, chunked: bool) -> None:
    body = padded_mcp_call(LIMITS.max_body_bytes * 2)
    content = body if chunked else b"".join(body)
    with httpx.Client(timeout=5) as client:
        answered = client.post(f"{base}/mcp", content=content, headers=MCP_HEADERS)
    assert ("content-length" in answered.request.headers) is not chunked
    assert answered.status_code == 413 and answered.headers["connection"] == "close"
    error = answered.json()
    assert (error["code"], error["field"]) == ("request_too_large", "body")
    assert "4096 bytes" in error["message"]
