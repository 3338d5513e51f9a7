"""`POST /v1/tools/{name}`: call a declared tool (`tools:`, `tools_dir`) through
`ToolBox`. The route only; the app (`sleuth.api.http`) includes it with its own
dependencies, as it does /v1/extract.

The body is the tool's arguments as a JSON object. The answer is the tool's result:
a `SearchResponse` for a tool of one search, a `CompositeResponse` for a composite
(200 even when some part failed: the failure is named inside). 404 names the
declared tools when there is no such tool; 422 names the bad parameter and its
allowed values.
"""

# No `from __future__ import annotations`: FastAPI must see the dependencies, which
# are this function's parameters, not module names, when it reads the signature.

import asyncio
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path
from fastapi.responses import Response

from sleuth.contract import ErrorInfo, SearchResponse
from sleuth.errors import InvalidRequest, SearchTimeout
from sleuth.observe import call_context
from sleuth.workflows.composite import CompositeResponse
from sleuth.workflows.tool_models import TOOL_NAME_PATTERN
from sleuth.workflows.toolbox import ToolBox

__all__ = ["routes"]

_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorInfo, "description": "An API key is needed."},
    404: {"model": ErrorInfo, "description": "No declared tool of that name (names them)."},
    422: {"model": ErrorInfo, "description": "An argument is invalid (names the parameter)."},
    429: {"model": ErrorInfo, "description": "The key's rate limit; see Retry-After."},
    504: {"model": ErrorInfo, "description": "Took too long."},
}


def routes(service: Callable[..., Any], caller: Callable[..., Any]) -> APIRouter:
    """The route, given the app's `service` and `caller` (key check) dependencies."""
    router = APIRouter()

    @router.post(
        "/v1/tools/{name}",
        # For the OpenAPI document: the answer is written as it is, not re-validated.
        response_model=SearchResponse | CompositeResponse,
        responses=_RESPONSES,
        tags=["tools"],
    )
    async def call_tool(
        name: Annotated[str, Path(pattern=TOOL_NAME_PATTERN, description="A declared tool.")],
        svc: Annotated[Any, Depends(service)],
        who: Annotated[Any, Depends(caller)],
        arguments: Annotated[
            dict[str, Any] | None,
            Body(description="The tool's arguments, as its parameters (GET /v1/tools) say."),
        ] = None,
    ) -> Response:
        """Call a declared tool with its arguments (no body: no arguments)."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):  # FastAPI lets some non-objects through
            raise InvalidRequest("body: expected a JSON object of arguments", field="body")
        timeout = svc.settings.serve.search_timeout_s + svc.settings.deadline_s
        try:
            async with asyncio.timeout(timeout):
                with call_context(tenant=who.tenant, tool_name="http_tool"):
                    answer = await ToolBox(svc.sleuth).call(name, arguments)
        except TimeoutError:
            raise SearchTimeout(f"the tool took longer than {timeout:g}s") from None
        return Response(answer.model_dump_json(), media_type="application/json")

    return router
