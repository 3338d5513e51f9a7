"""The HTTP service's header, query and path parameters as the error contract names
them: a refused `Last-Event-ID` says which header and what it may hold.

>>> parameter_error({"loc": ("header", "last-event-id"), "msg": "bad"}).field
'Last-Event-ID'
>>> parameter_error({"loc": ("path", "task_id"), "msg": "Field required"}).message
'task_id (path): Field required'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sleuth.errors import InvalidRequest

__all__ = ["LAST_EVENT_ID_PATTERN", "parameter_error"]

#: An event's seq, as `id:` sent it: ASCII digits only (`str.isdigit` also takes "²"
#: and "٣"), at most 15 of them, so every store can count past it (SQLite's integers
#: end at 2**63, Redis's stream ids at 2**64) and a JSON number holds it exactly.
LAST_EVENT_ID_PATTERN = r"^[0-9]{0,15}$"

#: What each named parameter may hold, in words, by its lower-case wire name.
_ALLOWED: dict[str, tuple[str, str]] = {
    "last-event-id": (
        "Last-Event-ID",
        "the seq of the last event received: ASCII digits 0-9, at most 15 of them",
    ),
    "idempotency-key": ("Idempotency-Key", "any text of at most 200 characters"),
}


def parameter_error(error: Mapping[str, Any]) -> InvalidRequest:
    """A FastAPI validation error of a header, query or path parameter, named as the
    client sends it, with what it may hold when sleuth says so."""
    where, name = str(error["loc"][0]), str(error["loc"][-1])
    shown, allowed = _ALLOWED.get(name.lower(), (name, ""))
    message = f"{shown} ({where}): {allowed}" if allowed else f"{shown} ({where}): {error['msg']}"
    return InvalidRequest(message, field=shown)
