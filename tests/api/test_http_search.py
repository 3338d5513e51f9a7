"""The lean `POST /v1/search` answers exactly as FastAPI's route for it does, and hands
the route every request it does not answer itself, body and all.

A JSON body goes the lean way; the same body sent as `application/sleuth+json`, which
FastAPI reads as JSON too, goes the framework's way: the two answers are compared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send
from test_http import QUERY, make_key, serving, settings

from sleuth.api.http_search import LeanSearch

LEAN = {"content-type": "application/json"}
FRAMEWORK = {"content-type": "application/sleuth+json"}
VOLATILE = {"task_id", "timings", "latency_ms"}


def stable(value: Any) -> Any:
    """The answer without what differs from one search to the next (ids, durations)."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def seen(answer: httpx.Response) -> tuple[int, dict[str, str], Any]:
    headers = {
        name: answer.headers[name]
        for name in ("content-type", "www-authenticate", "retry-after", "connection")
        if name in answer.headers
    }
    return answer.status_code, headers, stable(answer.json())


async def test_a_search_is_answered_as_the_framework_route_answers_it(tmp_path: Path) -> None:
    body = json.dumps({"query": QUERY, "max_results": 5, "include": ["url", "published_at"]})
    async with serving(settings(tmp_path, cache={"enabled": False})) as client:
        lean = await client.post("/v1/search", content=body, headers=LEAN)
        framework = await client.post("/v1/search", content=body, headers=FRAMEWORK)

    assert lean.status_code == 200 and lean.json()["results"]
    assert seen(lean) == seen(framework)
    assert lean.headers["content-length"] == str(len(lean.content))


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ({"query": QUERY}, None),
        ({"query": QUERY}, "sk_not_a_key"),
        ({"query": QUERY, "max_results": "5"}, None),  # refused for its body, or its key?
        ({"query": QUERY, "max_results": "5"}, "valid"),
        ({"query": QUERY, "time_range": "today"}, "valid"),
        ({"max_results": 3}, "valid"),
    ],
)
async def test_keys_and_bodies_are_refused_as_the_framework_route_refuses_them(
    tmp_path: Path, body: dict[str, Any], key: str | None
) -> None:
    conf = settings(tmp_path, serve={"auth": "on"}, cache={"enabled": False})
    if key == "valid":
        key = await make_key(conf, "acme")
    auth = {"Authorization": f"Bearer {key}"} if key else {}
    async with serving(conf) as client:
        lean = await client.post("/v1/search", json=body, headers={**LEAN, **auth})
        framework = await client.post(
            "/v1/search", content=json.dumps(body), headers={**FRAMEWORK, **auth}
        )

    assert lean.status_code in (401, 422)
    assert seen(lean) == seen(framework)


async def test_the_rate_limit_counts_a_lean_search_once(tmp_path: Path) -> None:
    conf = settings(tmp_path, serve={"auth": "on", "rate_limit": {"per_minute": 6, "burst": 2}})
    key = {"X-API-Key": await make_key(conf, "acme")}
    async with serving(conf) as client:
        codes = [
            (await client.post("/v1/search", json={"query": QUERY}, headers=key)).status_code
            for _ in range(3)
        ]

    assert codes == [200, 200, 429]


class Recorder:
    """An inner app that records what reaches it and answers 204."""

    def __init__(self) -> None:
        self.reached: list[tuple[str, str, bytes]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.reached.append((scope["method"], scope["path"], body))
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


async def call(
    app: LeanSearch, method: str, path: str, chunks: list[bytes], content_type: bytes | None
) -> int:
    scope: Scope = {
        "type": "http",
        "method": method,
        "path": path,
        "root_path": "",
        "headers": [(b"content-type", content_type)] if content_type else [],
    }
    messages: list[Message] = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]

    async def receive() -> Message:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    status: int = sent[0]["status"]
    return status


@pytest.mark.parametrize(
    ("method", "path", "chunks", "content_type"),
    [
        ("POST", "/v1/search", [b"{oops"], b"application/json"),
        ("POST", "/v1/search", [b"[1, 2]"], b"application/json"),
        ("POST", "/v1/search", [b'{"query": "x", ', b'"max_results": "5"}'], b"application/json"),
        ("POST", "/v1/search", ['{"query": "é"}'.encode("utf-16")], b"application/json"),
        ("POST", "/v1/search", [b'{"query": "x"}'], b"text/plain"),
        ("POST", "/v1/search/", [b'{"query": "x"}'], b"application/json"),
        ("POST", "/v1/tasks", [b'{"query": "x"}'], b"application/json"),
        ("PUT", "/v1/search", [b'{"query": "x"}'], b"application/json"),
    ],
)
async def test_what_it_does_not_answer_reaches_the_route_with_its_whole_body(
    method: str, path: str, chunks: list[bytes], content_type: bytes | None
) -> None:
    inner = Recorder()

    status = await call(LeanSearch(inner), method, path, chunks, content_type)

    assert status == 204
    assert inner.reached == [(method, path, b"".join(chunks))]
