"""`GET /v1/usage` and `GET /v1/audit`: the usage ledger and the audit log. The routes
only; the app (`sleuth.api.http`) includes them with its own dependencies.

A tenant's key sees its own tenant's figures only (naming another tenant is
`forbidden`); an operator's key (role admin, or anyone when auth is off) sees every
tenant's, or one tenant's with `tenant=`.
"""

# No `from __future__ import annotations`: FastAPI must see the dependencies, which
# are this function's parameters, not module names, when it reads the signature.

import time
from collections.abc import Callable
from datetime import date
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse

from sleuth.call_log import iso_time
from sleuth.contract import ErrorInfo
from sleuth.errors import Forbidden, InvalidRequest
from sleuth.store.usage_records import AuditEntry
from sleuth.usage.prices import format_micros
from sleuth.usage.report import GROUPS, Group, requested_range

__all__ = ["routes"]

_DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorInfo, "description": "An API key is needed."},
    403: {"model": ErrorInfo, "description": "A tenant's key asked for another tenant."},
    422: {"model": ErrorInfo, "description": "A parameter is invalid (names it)."},
}


def _day(description: str) -> Any:
    # A string with JSON Schema's `date` format rather than a `date`: pydantic would
    # also take a number there (seconds since the epoch), which the schema does not say.
    return Query(pattern=_DATE, description=description, json_schema_extra={"format": "date"})


def _date(value: str | None, field: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InvalidRequest(
            f"{field}: {value!r} is not a date; allowed: YYYY-MM-DD", field=field
        ) from None


def _scope(who: Any, tenant: str | None) -> str | None:
    """The tenant whose figures the caller gets: its own, unless it is an operator."""
    if who.admin:
        return tenant
    if tenant is not None and tenant != who.tenant:
        raise Forbidden(f"tenant: a key of tenant {who.tenant!r} sees only its own usage")
    return str(who.tenant)


def routes(service: Callable[..., Any], caller: Callable[..., Any]) -> APIRouter:
    """The routes, given the app's `service` and `caller` (key check) dependencies."""
    router = APIRouter()

    @router.get("/v1/usage", responses=_ERRORS, tags=["usage"])
    async def usage(
        svc: Annotated[Any, Depends(service)],
        who: Annotated[Any, Depends(caller)],
        period: Annotated[
            Literal["day", "month"], Query(description="day or month (UTC).")
        ] = "day",
        since: Annotated[str | None, _day("First day (UTC), YYYY-MM-DD.")] = None,
        until: Annotated[str | None, _day("Last day included (UTC), YYYY-MM-DD.")] = None,
        tenant: Annotated[
            str | None, Query(max_length=64, description="Operators: one tenant.")
        ] = None,
        by: Annotated[
            list[Group] | None, Query(description="Group each period by these (repeatable).")
        ] = None,
    ) -> JSONResponse:
        """Calls, cost, cache savings and failures per day or month; the caller's
        tenant's, or (operators) everyone's."""
        start, end = requested_range(
            period, _date(since, "since"), _date(until, "until"), time.time()
        )
        report = await svc.sleuth.ledger.report(
            svc.sleuth.store,
            since=start,
            until=end,
            period=period,
            tenant=_scope(who, tenant),
            by=[group for group in GROUPS if group in (by or [])],
        )
        return JSONResponse(report)

    @router.get("/v1/audit", responses=_ERRORS, tags=["usage"])
    async def audit(
        svc: Annotated[Any, Depends(service)],
        who: Annotated[Any, Depends(caller)],
        since: Annotated[str | None, _day("First day (UTC), YYYY-MM-DD.")] = None,
        until: Annotated[str | None, _day("Last day included (UTC), YYYY-MM-DD.")] = None,
        tenant: Annotated[
            str | None, Query(max_length=64, description="Operators: one tenant.")
        ] = None,
        limit: Annotated[
            int, Query(ge=1, le=1000, description="Newest first, at most this many.")
        ] = 100,
    ) -> JSONResponse:
        """The audit log, newest first: who searched, with which key and tool, when,
        which providers, what it cost."""
        start, end = requested_range(
            "day", _date(since, "since"), _date(until, "until"), time.time()
        )
        entries = await svc.sleuth.ledger.audit_entries(
            svc.sleuth.store, since=start, until=end, tenant=_scope(who, tenant), limit=limit
        )
        return JSONResponse({"entries": [json_entry(entry) for entry in entries]})

    return router


def json_entry(entry: AuditEntry) -> dict[str, Any]:
    """An audit entry as JSON, its time in ISO 8601 and its cost as decimal strings."""
    data: dict[str, Any] = {
        "at": iso_time(entry.at),
        "tenant": entry.tenant,
        "key": entry.key,
        "adapter": entry.adapter,
        "tool": entry.tool,
        "workflow": entry.workflow,
        "task_id": entry.task_id,
        "status": entry.status,
        "error_code": entry.error_code,
        "providers": list(entry.providers),
        "cache": entry.cache,
        "cost": {c: format_micros(n) for c, n in sorted(entry.cost_micros.items())},
        "unpriced_calls": entry.unpriced_calls,
        "query_hash": entry.query_hash,
    }
    if entry.query is not None:
        data["query"] = entry.query
    return data
