"""What the HTTP routes share: the `Service` (core, store, task runner, auth decision)
and who is asking (`Caller`, from the key presented), for FastAPI's routes and for the
lean search route (`sleuth.api.http_search`) alike.

Keys: whenever auth is on, a key comes as `Authorization: Bearer <key>` or `X-API-Key`,
read by FastAPI's own security schemes (which also describe them in the OpenAPI
document), and each key has its own rate limit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from fastapi.security import APIKeyHeader, HTTPBearer
from starlette.requests import HTTPConnection, Request

from sleuth import keys
from sleuth.config import Settings
from sleuth.gateway import Sleuth
from sleuth.store import Store
from sleuth.tasks import DEFAULT_TENANT, TaskRunner

__all__ = ["Caller", "Service", "api_key", "bearer", "identify", "presented_key", "service_of"]


@dataclass
class Service:
    """What the routes share: the core, the task runner and the auth decision."""

    settings: Settings
    sleuth: Sleuth
    store: Store
    runner: TaskRunner
    auth_required: bool


@dataclass(frozen=True)
class Caller:
    """Who is asking: the tenant whose tasks and figures the request may see, and
    whether it is an operator (an `admin` key, or anyone when auth is off), who also
    sees the whole service's."""

    tenant: str
    admin: bool = False
    #: The key's prefix (never the key), for the usage ledger and the audit log.
    key: str | None = None


bearer = HTTPBearer(auto_error=False, description="An API key from `sleuth keys create`.")
api_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="The same key.")


def service_of(connection: HTTPConnection) -> Service:
    """The app's `Service` (set by its lifespan)."""
    found: Service = connection.app.state.service
    return found


async def presented_key(request: Request) -> str | None:
    """The key the request came with, read as the routes' security schemes read it:
    a bearer token first, else X-API-Key."""
    credentials = await bearer(request)
    return credentials.credentials if credentials is not None else await api_key(request)


async def identify(svc: Service, presented: str | None) -> Caller:
    """Who is asking: the key's tenant, after its rate limit; the default tenant when
    auth is off."""
    if not svc.auth_required:
        return Caller(DEFAULT_TENANT, admin=True)
    record = await keys.authenticate(svc.store, presented)
    await keys.admit(svc.store, record, svc.settings.serve.rate_limit, time.time())
    return Caller(record.tenant, admin=record.role == "admin", key=record.prefix)
