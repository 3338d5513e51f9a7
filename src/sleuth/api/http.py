"""The HTTP service: a thin FastAPI adapter over `Sleuth` and `TaskRunner`.

    POST   /v1/search              one search, answered within the request's deadline
    POST   /v1/tasks               202 with a task_id at once (Idempotency-Key honoured)
    GET    /v1/tasks/{id}          status, result or error, events, timestamps
    GET    /v1/tasks/{id}/events   server-sent events until the task is finished
    DELETE /v1/tasks/{id}          cancel
    GET    /v1/tools               the tools (built-in and declared) as OpenAI, Anthropic
                                   and MCP definitions
    POST   /v1/tools/{name}        call a declared tool (api/http_tools.py)
    GET    /v1/workflows           the workflows of workflows_dir (api/http_workflows.py)
    POST   /v1/workflows/{name}/runs   start a run: 202 with its task
    GET    /v1/usage, /v1/audit    calls, cost, savings, failures per period; the audit log
    POST   /v1/feedback            a result was clicked or used (click-through prior)
    GET    /healthz, /readyz       liveness; readiness (the store answers)
    GET    /metrics, /dashboard    Prometheus metrics; the dashboard (see api/dashboard)
    /mcp                           MCP over streamable HTTP (see api/mcp.py)

Every failure answers with the error contract (`SearchError` JSON) and the status its
class names (`status_hint`); a refusal with `retry_after_s` also sends Retry-After.
Keys: whenever auth is on (`serve.auth`, on by default off loopback), every route but
the health checks and the dashboard's page and script (which hold no data) needs
`Authorization: Bearer <key>` or `X-API-Key`, and each key has its own rate limit. No
pipeline logic lives here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from sleuth.api import dashboard, http_extract, http_tools, http_usage, http_workflows
from sleuth.api.body_limits import BodyLimits, Refused
from sleuth.api.http_callers import (
    Caller,
    Service,
    api_key,
    bearer,
    identify,
    presented_key,
    service_of,
)
from sleuth.api.http_errors import error_response
from sleuth.api.http_search import PATH as SEARCH_PATH
from sleuth.api.http_search import LeanSearch, answer_search
from sleuth.api.mcp import McpEndpoint, build_mcp
from sleuth.api.openapi_served import served_openapi
from sleuth.api.parameters import (
    LAST_EVENT_ID_PATTERN,
    body_refusal,
    parameter_error,
    unreadable_body,
)
from sleuth.api.strict_body import schema_typed
from sleuth.config import Settings, load_settings
from sleuth.contract import (
    ErrorInfo,
    SearchRequest,
    SearchResponse,
    Task,
    describe_validation_error,
)
from sleuth.errors import InvalidRequest, SearchError
from sleuth.extract.models import ExtractRequest
from sleuth.feedback import Feedback
from sleuth.gateway import Sleuth, parse_request
from sleuth.stages.results.project import served_include
from sleuth.store import Store, open_store
from sleuth.tasks import TaskRunner
from sleuth.tools import tool_definitions
from sleuth.workflows.toolbox import ToolBox

__all__ = ["Service", "create_app"]

log = logging.getLogger(__name__)

#: How often shows are flushed to the store and click priors read back.
_PRIORS_EVERY_S = 30.0

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorInfo, "description": what}
    for status, what in {
        401: "An API key is needed and none or a bad one came.",
        404: "No such task (for this key's tenant).",
        422: "The request is invalid; the error names the field and the allowed values.",
        429: "A rate limit or the task queue is full; see Retry-After.",
    }.items()
}


async def service(request: Request) -> Service:
    """The app's `Service`, as a dependency (a coroutine: FastAPI would run a plain
    function on its thread pool, a thread hop per request)."""
    return service_of(request)


async def caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    key: Annotated[str | None, Depends(api_key)],
) -> Caller:
    presented = credentials.credentials if credentials is not None else key
    return await identify(service_of(request), presented)


async def mcp_tenant(request: Request) -> str:
    """`identify` for the /mcp route, a plain ASGI route where dependencies do not run."""
    return (await identify(service_of(request), await presented_key(request))).tenant


async def strict_search(request: Request, body: SearchRequest) -> SearchRequest:
    """The search body held to its JSON Schema's types, as the OpenAPI document says
    (`"5"`, `0` or `"yes"` for an integer or a boolean are refused by name); FastAPI's
    own reading coerces them. `5.0` is an integer to JSON Schema, so it is one here."""
    data = schema_typed(await request.json(), SearchRequest)
    try:
        return parse_request(data, strict=True)
    except InvalidRequest as exc:
        raise served_include(exc, service_of(request).settings.projection.optional) from None


Asker = Annotated[Caller, Depends(caller)]
Searched = Annotated[SearchRequest, Depends(strict_search)]
Svc = Annotated[Service, Depends(service)]


def create_app(
    settings: Settings | None = None,
    *,
    sleuth: Sleuth | None = None,
    bound_host: str | None = None,
    workers: bool = True,
) -> FastAPI:
    """The service's ASGI app. `bound_host` is the address the server listens on (it
    decides `serve.auth: auto`); `workers=False` serves without running tasks here."""
    settings = settings or load_settings()
    host = bound_host or settings.serve.host
    auth_required = settings.serve.auth_required(host)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            core = sleuth or Sleuth(settings)
            if sleuth is None:
                stack.push_async_callback(core.aclose)
            await core.warm_up()
            # The service's call log goes to stdout unless `observe.log_to` says otherwise.
            core.observer.start(auto="stdout")
            stack.callback(core.observer.close)
            # A replayed run keeps breakers and cache in memory (see Sleuth.store), but
            # tasks and keys always live in the configured store: they must outlive it.
            store = core.store if settings.replay is None else open_store(settings.store)
            if store is not core.store:
                stack.push_async_callback(store.aclose)
            runner = TaskRunner(core, store, settings.tasks)
            app.state.service = Service(settings, core, store, runner, auth_required)
            if workers:
                await runner.start()
                stack.push_async_callback(runner.stop, settings.serve.shutdown_grace_s)
            priors = asyncio.create_task(_refresh_priors(core, store))
            stack.callback(priors.cancel)
            # Entered after the runner, so MCP stops taking calls before the runner stops.
            await stack.enter_async_context(mcp.serving(build_mcp(core, runner)))
            yield

    mcp = McpEndpoint(host=host, authenticate=mcp_tenant)
    # FastAPIOffline: /docs and /redoc load Swagger UI and ReDoc from the package's own
    # copies (under /static-offline-docs), not from a CDN, so they work offline.
    app = FastAPIOffline(
        title="sleuth",
        summary="Search for AI agents: many back ends, one strict contract, cited results.",
        version="0.1.0",
        lifespan=lifespan,
    )
    derived = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = served_openapi(derived(), settings)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    # Innermost first: the lean search route reads its body under BodyLimits.
    app.add_middleware(LeanSearch)
    app.add_middleware(BodyLimits, limits=settings.serve.limits)
    app.add_middleware(_StampArrival)
    _install_error_handlers(app)
    _install_routes(app)
    app.include_router(dashboard.routes(service, caller))
    app.include_router(http_extract.routes(service, caller))
    app.include_router(http_usage.routes(service, caller))
    app.include_router(http_tools.routes(service, caller))
    app.include_router(http_workflows.routes(service, caller))
    # A Route, not a Mount: a Mount would answer /mcp with a redirect to /mcp/.
    app.router.routes.append(Route("/mcp", endpoint=mcp, methods=["GET", "POST", "DELETE"]))
    return app


class _StampArrival:
    """Notes when each request reached the app, so that a search's deadline counts
    from there: reading the body, checking the key and waiting for the loop included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope.setdefault("state", {})["arrived"] = time.perf_counter()
        await self.app(scope, receive, send)


async def _refresh_priors(core: Sleuth, store: Store) -> None:
    while True:
        await asyncio.sleep(_PRIORS_EVERY_S)
        try:
            await core.feedback.flush(store)
            core.click_priors = await core.feedback.priors(store)
        except Exception:  # priors are a refinement; a broken read keeps the last ones
            log.exception("click priors could not be refreshed")


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(SearchError)
    async def on_search_error(request: Request, exc: SearchError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(_describe(request, exc))

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(exc, Refused):
            return error_response(exc.error, close=True)
        if exc.status_code == 400 and exc.__cause__ is not None:
            # FastAPI's "error parsing the body": not UTF-8, or JSON nested too deep.
            return error_response(unreadable_body(exc.__cause__))
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        info = ErrorInfo(
            code=code, category="non_recoverable", message=f"{request.url.path}: {exc.detail}"
        )
        headers = dict(exc.headers or {})
        if exc.status_code == 405:  # every method the path takes, as RFC 9110 asks
            headers["Allow"] = ", ".join(allowed_methods(app, request.scope))
        return JSONResponse(
            info.model_dump(mode="json"), status_code=exc.status_code, headers=headers
        )


def allowed_methods(app: FastAPI, scope: Scope) -> list[str]:
    """The methods the routes at the request's path take (one route per method here)."""
    methods: set[str] = set()
    for route in app.router.routes:
        match, _ = route.matches(scope)
        if match is not Match.NONE:
            methods.update(getattr(route, "methods", None) or ())
    return sorted(methods)


def _describe(request: Request, exc: RequestValidationError) -> InvalidRequest:
    """FastAPI's validation failure as the contract's InvalidRequest, naming the field
    and its allowed values (the body is validated again by its model for the words)."""
    errors = exc.errors()
    in_body = [e for e in errors if e.get("loc", ("",))[0] == "body"]
    if in_body and (refused := body_refusal(in_body, request.headers.get("content-type"))):
        return refused
    model = _BODIES.get(request.url.path, SearchRequest)
    if in_body and isinstance(exc.body, dict):
        try:
            model.model_validate(exc.body)
        except ValidationError as invalid:
            error = InvalidRequest.from_details(describe_validation_error(invalid, model))
            return served_include(error, service_of(request).settings.projection.optional)
    first = errors[0] if errors else {}
    if first.get("loc", ("",))[0] in ("header", "query", "path"):
        return parameter_error(first)
    where = ".".join(str(part) for part in first.get("loc", ()) if part != "body") or "request"
    return InvalidRequest(f"{where}: {first.get('msg', 'invalid')}", field=where.split(".")[0])


#: The body model of each route that takes one other than a SearchRequest.
_BODIES: dict[str, type[BaseModel]] = {
    "/v1/feedback": Feedback,
    "/v1/extract": ExtractRequest,
}


def _install_routes(app: FastAPI) -> None:
    @app.post(
        SEARCH_PATH,
        response_model=SearchResponse,
        responses={**_ERRORS, 504: {"model": ErrorInfo, "description": "Took too long."}},
        tags=["search"],
    )
    async def search(body: Searched, svc: Svc, who: Asker, request: Request) -> Response:
        """Run one search and answer with the projected, cited result."""
        # Most searches are answered by LeanSearch in front of this route (the same
        # contract, fewer layers); this one takes what it hands on.
        arrived: float | None = getattr(request.state, "arrived", None)
        answer = await answer_search(svc, who, body, arrived)
        return Response(answer, media_type="application/json")

    @app.post(
        "/v1/tasks",
        status_code=202,
        response_model=Task,
        responses={**_ERRORS, 200: {"model": Task, "description": "The same key's task."}},
        tags=["tasks"],
    )
    async def submit(
        body: Searched,
        svc: Svc,
        who: Asker,
        response: Response,
        idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
    ) -> Task:
        """Accept a search to run in the background; poll it or follow its events."""
        task, created = await svc.runner.submit(
            body, tenant=who.tenant, idempotency_key=idempotency_key
        )
        response.status_code = 202 if created else 200
        response.headers["Location"] = f"/v1/tasks/{task.task_id}"
        return task

    @app.get("/v1/tasks/{task_id}", response_model=Task, responses=_ERRORS, tags=["tasks"])
    async def get_task(task_id: str, svc: Svc, who: Asker) -> Task:
        """The task: status, result or error, its events and timestamps."""
        return await svc.runner.get(task_id, who.tenant)

    @app.delete("/v1/tasks/{task_id}", response_model=Task, responses=_ERRORS, tags=["tasks"])
    async def cancel_task(task_id: str, svc: Svc, who: Asker) -> Task:
        """Cancel the task (a finished one is returned as it is)."""
        return await svc.runner.cancel(task_id, who.tenant)

    @app.get(
        "/v1/tasks/{task_id}/events",
        response_class=StreamingResponse,
        responses={
            **_ERRORS,
            200: {
                "description": "Server-sent events: `id` is the event's seq, `event` its "
                "kind, `data` the TaskEvent JSON; the stream ends when the task does.",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            },
        },
        tags=["tasks"],
    )
    async def task_events(
        task_id: str,
        svc: Svc,
        who: Asker,
        last_event_id: Annotated[
            str | None,
            Header(
                alias="Last-Event-ID",
                pattern=LAST_EVENT_ID_PATTERN,
                description="Resume after this event's seq (ASCII digits, at most 15).",
            ),
        ] = None,
    ) -> StreamingResponse:
        """Follow the task: accepted, started, each provider, each stage, done."""
        after = int(last_event_id) if last_event_id else 0
        await svc.runner.get(task_id, who.tenant, events=False)  # 404 before the stream

        async def stream() -> AsyncIterator[str]:
            async for event in svc.runner.follow(task_id, who.tenant, after):
                data = event.model_dump_json()
                yield f"id: {event.seq}\nevent: {event.kind}\ndata: {data}\n\n"

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    @app.get("/v1/tools", tags=["tools"])
    async def tools(svc: Svc, who: Asker) -> dict[str, Any]:
        """The search tools as OpenAI, Anthropic and MCP definitions, from the contract
        (offering the optional fields this deployment serves); the declared tools
        follow the built-in ones under `all`."""
        declared = ToolBox(svc.sleuth).definitions()
        return tool_definitions(include=svc.settings.projection.optional, declared=declared)

    @app.post("/v1/feedback", status_code=202, responses=_ERRORS, tags=["feedback"])
    async def feedback(body: Feedback, svc: Svc, who: Asker) -> dict[str, str]:
        """Report a result the agent clicked or used; it raises its domain's trust."""
        domain = await svc.sleuth.feedback.record(svc.store, body)
        return {"domain": domain, "action": body.action}

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get(
        "/readyz",
        tags=["health"],
        responses={503: {"model": ErrorInfo, "description": "The store does not answer."}},
    )
    async def readyz(svc: Svc) -> JSONResponse:
        """Ready to serve: the store answers; reports the task queue depth."""
        try:
            pending = await svc.store.count_tasks("pending")
        except Exception as exc:
            log.exception("readiness check failed")
            error = SearchError(f"the store does not answer: {type(exc).__name__}")
            return JSONResponse(error.info().model_dump(mode="json"), status_code=503)
        return JSONResponse({"status": "ready", "pending_tasks": pending})
