"""The operator's routes: Prometheus metrics and the dashboard, served by sleuth itself.

    GET /metrics            Prometheus text format (`sleuth.metrics`); breaker states,
                            queue depth and task counts are read from the store on scrape
    GET /dashboard          one HTML page: inline CSS, no data, no external asset
    GET /dashboard/app.js   its script, the only one the page's CSP allows
    GET /dashboard/data     the figures as JSON (shape: docs/observability.md)

Keys: when auth is on, /metrics and /dashboard/data need a key like every other route
(`Authorization: Bearer` or `X-API-Key`). A tenant's key sees its own tenant's figures
on /dashboard/data (`scope: tenant`: its searches, errors and hot keywords; no breakers
or task counts, which are the whole service's); an operator's key (`sleuth keys create
--role admin`) sees everyone's (`scope: global`), and only it may read /metrics (403
`forbidden` for a tenant's key). With auth off, everyone is the operator.

The page and its script hold no data and are public; the page asks for the key when
the data answers 401, keeps it in the tab's sessionStorage and sends it as a Bearer
header. A key never goes in a URL, where access logs and browser history would keep it.

The page draws every value with textContent (never innerHTML), and its
Content-Security-Policy allows only `/dashboard/app.js` as script and only its own
inline style (by hash), so a keyword or an error message carrying `<script>` or
`onerror=` can neither become markup nor run.

No `from __future__ import annotations` here: FastAPI reads the routes' annotations at
run time, and they name the dependencies passed to `routes()`.
"""

import base64
import hashlib
import re
from collections.abc import Callable
from importlib.resources import files
from typing import Annotated, Any, Protocol

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.exceptions import HTTPException as StarletteHTTPException

from sleuth.errors import Forbidden
from sleuth.gateway import Sleuth
from sleuth.store import Store

__all__ = ["CSP", "PAGE", "SCRIPT", "routes"]

PAGE = files(__name__).joinpath("index.html").read_text(encoding="utf-8")
SCRIPT = files(__name__).joinpath("app.js").read_text(encoding="utf-8")


def _style_hash(page: str) -> str:
    found = re.search(r"<style>(.*?)</style>", page, re.S)
    digest = hashlib.sha256((found.group(1) if found else "").encode()).digest()
    return "'sha256-" + base64.b64encode(digest).decode() + "'"


#: Nothing may load but the page's own script, its inline style and its data; the
#: favicon is the empty `data:,` (so the browser asks for no /favicon.ico).
CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        f"style-src {_style_hash(PAGE)}",
        "img-src data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)

_PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}


class Asking(Protocol):
    """What these routes need of the HTTP app's `Caller`."""

    @property
    def tenant(self) -> str: ...

    @property
    def admin(self) -> bool: ...


def _operator(who: Asking) -> None:
    if not who.admin:
        raise Forbidden(
            "this key is a tenant's; the service-wide figures need an operator's key "
            "(sleuth keys create --tenant T --role admin)"
        )


class Served(Protocol):
    """What these routes need of the HTTP app's `Service`."""

    sleuth: Sleuth
    store: Store


def routes(service: Callable[..., Any], caller: Callable[..., Any]) -> APIRouter:
    """The routes, given the app's dependencies: `service` (the shared `Service`) and
    `caller` (the key check, which passes everyone when auth is off)."""
    router = APIRouter(include_in_schema=False)

    def dashboard_on(svc: Served) -> None:
        if not svc.sleuth.observer.settings.dashboard:
            raise StarletteHTTPException(404, "the dashboard is off (observe.dashboard)")

    @router.get("/metrics")
    async def metrics(
        svc: Annotated[Served, Depends(service)], who: Annotated[Asking, Depends(caller)]
    ) -> Response:
        _operator(who)
        observer = svc.sleuth.observer
        if observer.metrics is None:
            raise StarletteHTTPException(404, "metrics are off (observe.metrics)")
        # Breakers live in the core's store (in memory for a replayed run), tasks in
        # the service's.
        await observer.states(svc.sleuth.store, svc.store)
        return Response(observer.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    @router.get("/dashboard")
    async def page(svc: Annotated[Served, Depends(service)]) -> HTMLResponse:
        dashboard_on(svc)
        return HTMLResponse(PAGE, headers=_PAGE_HEADERS)

    @router.get("/dashboard/app.js")
    async def script(svc: Annotated[Served, Depends(service)]) -> Response:
        dashboard_on(svc)
        headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
        return Response(SCRIPT, media_type="text/javascript", headers=headers)

    @router.get("/dashboard/data")
    async def data(
        svc: Annotated[Served, Depends(service)], who: Annotated[Asking, Depends(caller)]
    ) -> JSONResponse:
        dashboard_on(svc)
        tenant = None if who.admin else who.tenant
        figures = await svc.sleuth.observer.dashboard_data(
            svc.sleuth.store, svc.store, tenant=tenant
        )
        return JSONResponse(figures, headers={"Cache-Control": "no-store"})

    return router
