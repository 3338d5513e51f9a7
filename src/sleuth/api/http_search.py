"""`POST /v1/search`, the service's busiest route, answered without the framework's
layers: `LeanSearch` is plain ASGI in front of FastAPI's router.

It takes the requests it can answer exactly as FastAPI's route for them would: a JSON
body that is a valid search (held to the JSON Schema's types, as `strict_search`
holds it). It reads that body once (orjson), checks the key, runs the search and
writes the JSON pydantic serialised, with the same status, headers and error bodies.
Any other request it hands on, with the body it read, to FastAPI's route, which stays
for the OpenAPI document and answers every refusal (a bad body, a wrong content type)
in its own words. Under wrk at 16 connections, with the core answering a canned
response (bench/http_layer.py), the server spent a median 0.71 ms of CPU a request
through the framework's path (dependency solving, the route machinery) and 0.31 ms
through this one, pydantic's serialisation its largest part.

The checks keep the route's order for a valid body (the body, then the key, then the
search), and a body the route would refuse reaches the route before any key is looked
at here, so that its rate-limit token is taken once, there.
"""

from __future__ import annotations

import asyncio

import orjson
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from sleuth.api.body_limits import Refused, read_body
from sleuth.api.http_callers import Caller, Service, identify, presented_key
from sleuth.api.http_errors import error_response
from sleuth.api.strict_body import schema_typed
from sleuth.contract import SearchRequest
from sleuth.errors import SearchError, SearchTimeout
from sleuth.observe import call_context

__all__ = ["PATH", "LeanSearch", "answer_search"]

PATH = "/v1/search"

_JSON_HEADERS = [(b"content-type", b"application/json")]


async def answer_search(
    svc: Service, who: Caller, request: SearchRequest, arrived: float | None
) -> bytes:
    """The search's response as JSON, within the service's deadline (`SearchTimeout`
    past it); `arrived` is when the request reached the app, which the deadline counts
    from."""
    timeout = svc.settings.serve.search_timeout_s + svc.settings.deadline_s
    try:
        async with asyncio.timeout(timeout):
            with call_context(tenant=who.tenant, tool_name="http_search", key=who.key):
                response = await svc.sleuth.search(request, arrived=arrived)
    except TimeoutError:
        raise SearchTimeout(
            f"the search took longer than {timeout:g}s; submit it as a task instead"
        ) from None
    # Serialised by pydantic in one step: for 20 results model_dump_json and orjson
    # over model_dump took the same (~120 us), json.dumps over it twice as long.
    return response.model_dump_json().encode()


class LeanSearch:
    """ASGI middleware that answers `POST /v1/search` itself (see the module docstring).
    It sits inside `BodyLimits`, so that the body it reads is held to `serve.limits`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not _is_json_search(scope):
            await self.app(scope, receive, send)
            return
        try:
            body, receive = await read_body(receive)
        except Refused as refused:
            await error_response(refused.error, close=True)(scope, receive, send)
            return
        request = None if body is None else _valid_search(body)
        if request is None:
            await self.app(scope, receive, send)  # refused by the route, in its words
            return
        svc: Service = scope["app"].state.service
        try:
            presented = await presented_key(Request(scope)) if svc.auth_required else None
            who = await identify(svc, presented)
            arrived: float | None = scope.get("state", {}).get("arrived")
            answer = await answer_search(svc, who, request, arrived)
        except SearchError as exc:
            await error_response(exc)(scope, receive, send)
            return
        headers = [(b"content-length", b"%d" % len(answer)), *_JSON_HEADERS]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})


def _is_json_search(scope: Scope) -> bool:
    """A POST to the search path with a JSON body (FastAPI reads a body without a
    content type as JSON too)."""
    if scope["type"] != "http" or scope["method"] != "POST":
        return False
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    if path != PATH:
        return False
    name: bytes
    value: bytes
    for name, value in scope["headers"]:
        if name == b"content-type":
            return value.partition(b";")[0].strip().lower() == b"application/json"
    return True


def _valid_search(body: bytes) -> SearchRequest | None:
    """The body as a search held to its JSON Schema's types, or None for any body the
    route would refuse (it says why). orjson reads only strict UTF-8 JSON, a subset of
    what the route reads: what it does not read, the route does. (With orjson, reading
    and typing a search body took 7-12 us, with json and `parse_request` 13-16 us.)"""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    typed = orjson.dumps(schema_typed(data, SearchRequest))
    try:
        return SearchRequest.model_validate_json(typed, strict=True)
    except ValidationError:
        return None
