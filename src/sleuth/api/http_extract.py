"""`POST /v1/extract`: read pages through `Sleuth.extract`. The route only; the app
(`sleuth.api.http`) includes it with its own dependencies, as it does the dashboard.

The answer is 200 with one page per URL, in order, even when some could not be read
(each failure is in its page's `error`); 422 only for a malformed request.
"""

# No `from __future__ import annotations`: FastAPI must see the dependencies, which
# are this function's parameters, not module names, when it reads the signature.

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from sleuth.api.strict_body import strict_model
from sleuth.contract import ErrorInfo
from sleuth.extract.models import ExtractRequest, ExtractResponse

__all__ = ["routes"]


async def strict_extract(request: Request, body: ExtractRequest) -> ExtractRequest:
    """The body held to its JSON Schema's types, as `/v1/search` holds its own (FastAPI
    has read `body` for the OpenAPI document and its own checks)."""
    return strict_model(ExtractRequest, await request.json())


def routes(service: Callable[..., Any], caller: Callable[..., Any]) -> APIRouter:
    """The route, given the app's `service` and `caller` (key check) dependencies."""
    router = APIRouter()

    @router.post(
        "/v1/extract",
        response_model=ExtractResponse,
        responses={
            401: {"model": ErrorInfo, "description": "An API key is needed."},
            422: {"model": ErrorInfo, "description": "The request is invalid (names the field)."},
            429: {"model": ErrorInfo, "description": "The key's rate limit; see Retry-After."},
        },
        tags=["extract"],
    )
    async def extract(
        body: Annotated[ExtractRequest, Depends(strict_extract)],
        svc: Annotated[Any, Depends(service)],
        _who: Annotated[Any, Depends(caller)],  # the key check and its rate limit
    ) -> JSONResponse:
        """Fetch pages through sleuth's egress rules and return their main text."""
        response = await svc.sleuth.extract(body)
        return JSONResponse(response.model_dump(mode="json"))

    return router
