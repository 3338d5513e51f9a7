"""The MCP server: sleuth's search as tools an agent calls, over stdio or streamable HTTP.

A thin adapter over `Sleuth` and `TaskRunner`, on the official SDK's low-level
`Server` (so the schemas it lists are exactly the contract's, from `sleuth.tools`):

    web_search          SearchRequest → the SearchResponse as structured content, and a
                        text block: the summary with [n] citation marks, then the
                        numbered sources
    search_task_submit  SearchRequest (+ idempotency_key) → the Task (task_id, status)
    search_task_status  task_id → the Task; another tenant's task is "not found"
    extract_page        a URL → the page's main text (api/mcp_extract.py)
    each declared tool  its arguments → its SearchResponse or CompositeResponse as
                        structured content, and the same text (`tools:`, tools_dir;
                        listed afresh on each tools/list, so an edited file shows)

A caller's mistake or a refusal (invalid input, a refused query, an unknown task, a
full queue) is a tool result with `isError: true` whose text is the error contract as
JSON, `{"errors": [SearchError, ...]}`, naming the field and the allowed values, so
the agent can correct itself. It has no structured content: clients (the MCP
Inspector among them) check structured content against the tool's output schema,
which describes a success, and would show their own schema complaint instead of
sleuth's message. Arguments are held to the input schema's JSON types: `true`,
`"5"` or `5.0` for `max_results`, `"yes"` for `no_cache` are refused by name. An
unknown tool name is a protocol error. Back-end failures are not errors here: they
travel inside the response.

Over HTTP the server runs stateless with JSON responses: every POST is answered on
its own, with no session to pin a client to one replica and no SSE stream to keep
open, which is what a load-balanced multi-replica deployment needs; tasks live in the
shared store, so `search_task_status` answers on any replica. What stateless gives up
(server-to-client requests, streamed progress) these tools do not use.

Mounting in the FastAPI app: the endpoint is made with the app and started in its
lifespan, once the Sleuth and the TaskRunner exist (a fresh SDK session manager per
lifespan, so an app can be started again). It must be a `Route` for the exact path,
not a `Mount`, which would answer `/mcp` with a redirect to `/mcp/`:

    from starlette.routing import Route
    from sleuth.api.mcp import McpEndpoint, build_mcp

    mcp = McpEndpoint(host=bound_host, authenticate=tenant_of_key)   # in create_app
    app.router.routes.append(Route("/mcp", endpoint=mcp))

    # in the lifespan, after the runner is made:
    await stack.enter_async_context(mcp.serving(build_mcp(core, runner)))

`authenticate(request)` returns the caller's tenant or raises a `SearchError`
(`Unauthorized`, `TooManyRequests`), which answers the HTTP request with the error
contract and its status before any MCP message is read; the tools then see that
tenant's tasks only. A POST's body is then read whole by the endpoint, under the app's
body limits (`sleuth.api.body_limits.read_first`), before the SDK sees it.

`sleuth mcp` serves stdio with `run_stdio(settings)`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any, NamedTuple

from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from sleuth import __version__
from sleuth.api.answer_text import render_composite_text, render_text
from sleuth.api.body_limits import read_first
from sleuth.api.mcp_extract import read_page_tool
from sleuth.api.service_gc import settle_for_service
from sleuth.config import Settings
from sleuth.contract import ErrorInfo, SearchResponse, Task
from sleuth.errors import InvalidRequest, SearchError
from sleuth.gateway import Sleuth, parse_request
from sleuth.observe import call_context
from sleuth.service_settings import is_loopback
from sleuth.stages.results.project import served_include
from sleuth.store import open_store
from sleuth.tasks import DEFAULT_TENANT, TaskRunner
from sleuth.tools import (
    EXTRACT_PAGE,
    IDEMPOTENCY_KEY_MAX_CHARS,
    SEARCH_TASK_STATUS,
    SEARCH_TASK_SUBMIT,
    WEB_SEARCH,
    mcp_tools,
)
from sleuth.workflows.composite import CompositeResponse
from sleuth.workflows.toolbox import ToolBox

__all__ = [
    "Authenticate",
    "McpEndpoint",
    "McpHttp",
    "build_mcp",
    "mcp_http_app",
    "run_stdio",
    "serve_stdio",
]

log = logging.getLogger(__name__)

#: Who is calling: given the HTTP request a tool call came in on (None over stdio),
#: the tenant whose tasks it may see.
TenantOf = Callable[[Request | None], str]

#: Checks an HTTP request's credentials: the caller's tenant, or a `SearchError`.
Authenticate = Callable[[Request], Awaitable[str]]

#: Where `McpEndpoint` leaves the authenticated tenant for the tools (the request's state).
_TENANT_STATE = "sleuth_tenant"

#: A stdio client closes stdin and gives the server about 2 s before SIGTERM; running
#: tasks get less than that, then go back to the queue for the next process.
_STDIO_GRACE_S = 1.0

_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")

_INSTRUCTIONS = (
    "sleuth answers questions from many search back ends with cited, ranked results. "
    "Call web_search with the user's question in its full original wording; use "
    "search_task_submit and search_task_status for searches that may run long, and "
    "extract_page to read a result's page."
)


def _default_tenant(request: Request | None) -> str:
    """The tenant `McpEndpoint` authenticated; the default one over stdio or without auth."""
    if request is None:
        return DEFAULT_TENANT
    found = request.scope.get("state", {}).get(_TENANT_STATE, DEFAULT_TENANT)
    return str(found)


def _dump(model: SearchResponse | Task | CompositeResponse) -> dict[str, Any]:
    return model.model_dump(mode="json")


def _error_result(error: SearchError) -> types.CallToolResult:
    details: list[ErrorInfo] = (
        error.details if isinstance(error, InvalidRequest) else [error.info()]
    )
    return _error_result_of(details)


def _error_result_of(details: list[ErrorInfo]) -> types.CallToolResult:
    payload = {"errors": [d.model_dump(mode="json", exclude_none=True) for d in details]}
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(payload, ensure_ascii=False))],
        is_error=True,
    )


def _error_info_result(error: ErrorInfo) -> types.CallToolResult:
    return _error_result_of([error])


def _task_result(task: Task) -> types.CallToolResult:
    data = _dump(task)
    line = f"task {task.task_id}: {task.status}"
    if task.error is not None:
        line += f" ({task.error.code}: {task.error.message})"
    text = line if task.result is None else f"{line}\n\n{render_text(task.result)}"
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=data)


def build_mcp(
    sleuth: Sleuth, runner: TaskRunner, *, tenant: TenantOf | None = None
) -> Server[dict[str, Any]]:
    """The MCP server over `sleuth` and `runner` (both owned and closed by the caller).

    `tenant(request)` names the tenant of a call from its HTTP request (None over
    stdio); default: the tenant `McpEndpoint` authenticated, else `DEFAULT_TENANT`. A
    `SearchError` it raises becomes the call's tool error.
    """
    tenant_of = tenant or _default_tenant
    served = list(sleuth.settings.projection.optional)
    listed = [types.Tool.model_validate(tool) for tool in mcp_tools(served)]
    schemas = {tool.name: tool.input_schema for tool in listed}
    toolbox = ToolBox(sleuth)

    def declared() -> list[types.Tool]:
        return [types.Tool.model_validate(forms["mcp"]) for forms in toolbox.definitions()]

    def input_schema(name: str) -> dict[str, Any] | None:
        if name in schemas:
            return schemas[name]
        return next((tool.input_schema for tool in declared() if tool.name == name), None)

    async def list_tools(
        ctx: ServerRequestContext[dict[str, Any], Any],
        params: types.PaginatedRequestParams | None,
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[*listed, *declared()])

    async def declared_tool(
        name: str, arguments: Mapping[str, Any], owner: str
    ) -> types.CallToolResult:
        with call_context(tenant=owner, tool_name="mcp_tool"):
            answer = await toolbox.call(name, arguments)
        text = (
            render_composite_text(answer)
            if isinstance(answer, CompositeResponse)
            else render_text(answer)
        )
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=_dump(answer)
        )

    async def web_search(arguments: Mapping[str, Any], owner: str) -> types.CallToolResult:
        with call_context(tenant=owner, tool_name="web_search"):
            response = await sleuth.search(parse_request(arguments, strict=True))
        return types.CallToolResult(
            content=[types.TextContent(text=render_text(response))],
            structured_content=_dump(response),
        )

    async def submit(arguments: Mapping[str, Any], owner: str) -> types.CallToolResult:
        request = dict(arguments)
        key = request.pop("idempotency_key", None)
        if key is not None and (
            not isinstance(key, str) or not 1 <= len(key) <= IDEMPOTENCY_KEY_MAX_CHARS
        ):
            raise InvalidRequest(
                f"idempotency_key: expected a string of 1..{IDEMPOTENCY_KEY_MAX_CHARS} "
                f"characters (got {key!r:.60})",
                field="idempotency_key",
                allowed=[f"1..{IDEMPOTENCY_KEY_MAX_CHARS} characters"],
            )
        task, _created = await runner.submit(
            parse_request(request, strict=True), tenant=owner, idempotency_key=key
        )
        return _task_result(task)

    async def status(arguments: Mapping[str, Any], owner: str) -> types.CallToolResult:
        unknown = sorted(set(arguments) - {"task_id"})
        task_id = arguments.get("task_id")
        if unknown or not isinstance(task_id, str) or not task_id:
            field = unknown[0] if unknown else "task_id"
            raise InvalidRequest(
                f"{field}: expected only task_id, a non-empty string (got {dict(arguments)!r:.80})",
                field=field,
                allowed=["task_id"],
            )
        return _task_result(await runner.get(task_id, owner))

    async def extract_page(arguments: Mapping[str, Any], owner: str) -> types.CallToolResult:
        page, result = await read_page_tool(sleuth, arguments, owner)
        if result is None:
            return _error_info_result(page.error or SearchError("unread").info())
        return result

    handlers = {
        WEB_SEARCH.name: web_search,
        EXTRACT_PAGE.name: extract_page,
        SEARCH_TASK_SUBMIT.name: submit,
        SEARCH_TASK_STATUS.name: status,
    }

    async def call_tool(
        ctx: ServerRequestContext[dict[str, Any], Any],
        params: types.CallToolRequestParams,
    ) -> types.CallToolResult:
        handler = handlers.get(params.name)
        if handler is None and params.name not in toolbox.names():
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"unknown tool {params.name!r}; tools: "
                f"{', '.join([*handlers, *toolbox.names()])}",
            )
        request = ctx.request if isinstance(ctx.request, Request) else None
        try:
            if handler is None:
                return await declared_tool(params.name, params.arguments or {}, tenant_of(request))
            return await handler(params.arguments or {}, tenant_of(request))
        except InvalidRequest as exc:
            return _error_result(served_include(exc, served))
        except SearchError as exc:
            return _error_result(exc)
        except Exception as exc:  # the agent gets the error contract, never a stack trace
            log.exception("MCP tool %s failed", params.name)
            return _error_result(SearchError(f"internal error: {type(exc).__name__}"))

    return Server(
        "sleuth",
        version=__version__,
        title="sleuth search",
        instructions=_INSTRUCTIONS,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


class McpHttp(NamedTuple):
    """The streamable HTTP endpoint of one MCP server."""

    #: Serve at exactly one path: `Route("/mcp", endpoint=app)`.
    app: ASGIApp
    #: Enter once, in the host application's lifespan (the SDK's session manager
    #: must run while requests are served; it cannot be restarted).
    lifespan: Callable[[], AbstractAsyncContextManager[None]]


def mcp_http_app(server: Server[Any], *, host: str = "127.0.0.1") -> McpHttp:
    """The server as a stateless streamable HTTP endpoint with JSON responses.

    `host` is the address the HTTP service binds to. On a loopback address (where API
    keys may be off) the Host and Origin headers must be loopback ones too, so a web
    page cannot reach the endpoint through DNS rebinding; elsewhere API keys guard it.
    """
    security = None
    if is_loopback(host):
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{name}{port}" for name in _LOOPBACK for port in ("", ":*")],
            allowed_origins=[f"http://{name}{port}" for name in _LOOPBACK for port in ("", ":*")],
        )
    manager = StreamableHTTPSessionManager(
        app=server, stateless=True, json_response=True, security_settings=security
    )
    # An object, not a bound method: Starlette's Route would wrap a method as a
    # request/response endpoint instead of calling it as an ASGI app.
    return McpHttp(app=StreamableHTTPASGIApp(manager), lifespan=manager.run)


class McpEndpoint:
    """The `/mcp` route's ASGI app: made with the web app, serving once `serving(server)`
    runs in the app's lifespan (until then, and after, it answers 503).

    With `authenticate`, every HTTP request (initialize, tools/list, tools/call) must
    pass it first; its tenant is what the tools see.
    """

    def __init__(self, *, host: str = "127.0.0.1", authenticate: Authenticate | None = None):
        self.host = host
        self._authenticate = authenticate
        self._app: ASGIApp | None = None

    @asynccontextmanager
    async def serving(self, server: Server[Any]) -> AsyncIterator[None]:
        """Serve `server` for the duration of the block (the host app's lifespan)."""
        http = mcp_http_app(server, host=self.host)
        async with http.lifespan():
            self._app = http.app
            try:
                yield
            finally:
                self._app = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self._app
        if app is None:
            unavailable = ErrorInfo(
                code="service_unavailable",
                category="recoverable",
                message="the MCP endpoint is starting or stopping",
                retry_after_s=1.0,
            )
            await _refusal(unavailable, 503, {"Retry-After": "1"})(scope, receive, send)
            return
        if self._authenticate is not None and scope["type"] == "http":
            try:
                tenant = await self._authenticate(Request(scope, receive))
            except SearchError as exc:
                headers = {}
                if exc.retry_after_s is not None:
                    headers["Retry-After"] = str(max(1, round(exc.retry_after_s)))
                if exc.status_hint == 401:
                    headers["WWW-Authenticate"] = "Bearer"
                await _refusal(exc.info(), exc.status_hint, headers)(scope, receive, send)
                return
            scope.setdefault("state", {})[_TENANT_STATE] = tenant
        if scope["type"] == "http" and scope["method"] == "POST":
            # Read here, under serve.limits: a chunked body past max_body_bytes is then
            # 413 from the app's handler, not a 500 from the SDK's catch-all around its
            # own read.
            receive = await read_first(receive)
        await app(scope, receive, send)


def _refusal(error: ErrorInfo, status: int, headers: dict[str, str]) -> JSONResponse:
    return JSONResponse(error.model_dump(mode="json"), status_code=status, headers=headers)


async def serve_stdio(settings: Settings) -> None:
    """Serve MCP on this process's stdin and stdout until the client closes stdin.

    Tasks run in this process, in the configured store (SQLite by default, so a task
    left unfinished is finished by the next `sleuth mcp` or `sleuth serve`).
    """
    async with AsyncExitStack() as stack:
        sleuth = await stack.enter_async_context(Sleuth(settings))
        # stdout carries the protocol: `observe.log_to: auto` logs to stderr here.
        sleuth.observer.start(auto="stderr")
        stack.callback(sleuth.observer.close)
        # As `sleuth serve` does: a replayed run keeps breakers and cache in memory, but
        # tasks live in the configured store, whatever answers the back ends' calls.
        store = sleuth.store if settings.replay is None else open_store(settings.store)
        if store is not sleuth.store:
            stack.push_async_callback(store.aclose)
        runner = TaskRunner(sleuth, store)
        await runner.start()
        grace_s = min(settings.serve.shutdown_grace_s, _STDIO_GRACE_S)
        stack.push_async_callback(runner.stop, grace_s)
        server = build_mcp(sleuth, runner)
        settle_for_service()  # once warmed up, as `sleuth serve` does
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(settings: Settings) -> None:
    """`sleuth mcp`: serve stdio, then close the store and connections."""
    asyncio.run(serve_stdio(settings))
