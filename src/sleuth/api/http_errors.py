"""A `SearchError` as the HTTP answer: the error contract's JSON with the status its
class names, Retry-After when it says when to come back, WWW-Authenticate for a 401."""

from __future__ import annotations

from fastapi.responses import JSONResponse

from sleuth.errors import SearchError

__all__ = ["error_response"]


def error_response(error: SearchError, *, close: bool = False) -> JSONResponse:
    headers = {"Connection": "close"} if close else {}
    if error.retry_after_s is not None:
        headers["Retry-After"] = str(max(1, round(error.retry_after_s)))
    if error.status_hint == 401:
        headers["WWW-Authenticate"] = "Bearer"
    body = error.info().model_dump(mode="json")
    return JSONResponse(body, status_code=error.status_hint, headers=headers)
