"""The `tasks:` and `serve:` sections of sleuth.yaml: how the service runs tasks and
whom it lets in. Kept apart from `tasks.py` and `api/http.py` so that `config.py` can
name them without importing the service.

>>> TaskSettings().workers, ServeSettings().auth_required("127.0.0.1")
(4, False)
>>> ServeSettings().auth_required("0.0.0.0")
True
"""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["KeyLimit", "ServeSettings", "TaskSettings", "WireLimits"]


class TaskSettings(BaseModel):
    """The `tasks:` section: asynchronous search tasks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workers: int = Field(
        4, ge=1, le=256, description="Tasks one process runs at once (the concurrency limit)."
    )
    queue_max: int = Field(
        1000,
        ge=1,
        description="Pending tasks accepted before a submit is refused with 429 and "
        "Retry-After (never dropped silently).",
    )
    queue_full_retry_after_s: float = Field(
        2.0, gt=0, description="Retry-After sent with a queue-full refusal."
    )
    lease_s: float = Field(
        15.0,
        gt=0,
        le=3600,
        description="How long a worker owns a running task without renewing; a task "
        "whose worker died (kill -9) is run again once this has passed.",
    )
    poll_s: float = Field(
        0.5,
        gt=0,
        le=60,
        description="How often an idle worker looks for tasks submitted elsewhere "
        "(a submit in the same process wakes it at once).",
    )
    max_attempts: int = Field(
        3,
        ge=1,
        le=20,
        description="A task claimed this many times whose workers all died fails as "
        "task_abandoned instead of being run again.",
    )
    retention_s: float = Field(
        7 * 86400.0, gt=0, description="How long finished tasks and their events are kept."
    )
    expire_every_s: float = Field(300.0, gt=0, description="How often expired tasks are deleted.")


class KeyLimit(BaseModel):
    """Requests one API key may make: a token bucket."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    per_minute: float = Field(120.0, gt=0, description="Sustained requests per minute.")
    burst: int = Field(30, ge=1, description="Requests allowed at once above the rate.")


class WireLimits(BaseModel):
    """The `serve.limits:` section: what one connection may hold of the server, so that
    a huge body or a slow client cannot starve the others (docs/service.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_body_bytes: int = Field(
        262_144,
        ge=1024,
        description="Largest request body (413 before it is read). The largest valid "
        "search, 20 context turns of 2,000 Chinese characters as JSON escapes, is about "
        "240 KiB.",
    )
    max_header_bytes: int = Field(
        16_384, ge=1024, description="Largest request line and headers together (431)."
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        description="The request line and headers must arrive within this long of the "
        "connection opening or of the request's first byte (408, then closed).",
    )
    body_timeout_s: float = Field(
        15.0, gt=0, description="The whole body must arrive within this long (408)."
    )
    keep_alive_s: int = Field(
        5, ge=1, description="An idle kept-alive connection is closed after this long."
    )
    max_connections: int = Field(
        4096,
        ge=1,
        description="Connections held at once. At the cap, a new connection closes the "
        "oldest one still sending its headers (408); with none, it is refused (503). "
        "Keep it under the process's open-file limit (ulimit -n).",
    )


class ServeSettings(BaseModel):
    """The `serve:` section: the HTTP service (and MCP over it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = Field("127.0.0.1", description="Address `sleuth serve` binds to.")
    port: int = Field(8080, ge=0, le=65535, description="Port `sleuth serve` binds to.")
    auth: Literal["auto", "on", "off"] = Field(
        "auto",
        description="API keys: on, off, or auto (on whenever the server binds to an "
        "address other than loopback). 'off' is refused on a non-loopback address.",
    )
    rate_limit: KeyLimit = Field(
        default_factory=KeyLimit, description="Per-key request limit (429 with Retry-After)."
    )
    search_timeout_s: float = Field(
        30.0,
        gt=0,
        description="Longest a POST /v1/search may take, over the search deadline, "
        "before it answers 504.",
    )
    limits: WireLimits = Field(
        default_factory=WireLimits, description="Sizes and times on the wire."
    )
    shutdown_grace_s: float = Field(
        10.0,
        ge=0,
        description="On shutdown, running tasks get this long to finish; the rest go "
        "back to the queue for the next start.",
    )
    processes: int = Field(
        0,
        ge=0,
        le=64,
        description="Worker processes `sleuth serve` runs on its one port, sharing the "
        "store (SQLite or Redis); 0: one per core. A memory store belongs to one "
        "process, so with it `sleuth serve` runs one.",
    )

    def auth_required(self, host: str | None = None) -> bool:
        """Whether requests need a key when the server binds to `host`."""
        if self.auth != "auto":
            return self.auth == "on"
        return not is_loopback(host or self.host)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
