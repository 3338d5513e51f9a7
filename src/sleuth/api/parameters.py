"""The HTTP service's parameters and bodies as the error contract names them: a
refused `Last-Event-ID` says which header and what it may hold; a body that is not a
JSON object says "send a JSON object with content-type application/json".

>>> parameter_error({"loc": ("header", "last-event-id"), "msg": "bad"}).field
'Last-Event-ID'
>>> parameter_error({"loc": ("path", "task_id"), "msg": "Field required"}).message
'task_id (path): Field required'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sleuth.errors import InvalidRequest

__all__ = ["LAST_EVENT_ID_PATTERN", "body_refusal", "parameter_error", "unreadable_body"]

_SEND = "send a JSON object with content-type application/json"

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


def body_refusal(
    errors: Sequence[Mapping[str, Any]], content_type: str | None
) -> InvalidRequest | None:
    """The refusal of a body that is not a JSON object at all (FastAPI's errors at
    `loc` "body"), or None when it is one and its fields are what is wrong.

    >>> body_refusal([{"loc": ("body",), "type": "missing"}], None).message
    'body: empty; send a JSON object with content-type application/json'
    """
    kinds = {str(e.get("type")) for e in errors if tuple(e.get("loc", ())) == ("body",)}
    if any(e.get("type") == "json_invalid" for e in errors):
        return InvalidRequest(f"body: not valid JSON; {_SEND}", field="body")
    if "missing" in kinds:
        return InvalidRequest(f"body: empty; {_SEND}", field="body")
    media = (content_type or "").split(";")[0].strip().lower()
    if kinds and media != "application/json":
        shown = f"content-type {media}" if media else "no content-type"
        return InvalidRequest(f"body: sent with {shown}; {_SEND}", field="body")
    if kinds:
        return InvalidRequest(f"body: not a JSON object; {_SEND}", field="body")
    return None


def unreadable_body(cause: BaseException) -> InvalidRequest:
    """A body FastAPI could not decode: not UTF-8, or JSON nested past what a parser
    follows."""
    if isinstance(cause, UnicodeDecodeError):
        why = "not UTF-8"
    elif isinstance(cause, RecursionError):
        why = "JSON nested too deep"
    else:
        why = "not valid JSON"
    return InvalidRequest(f"body: {why}; {_SEND}", field="body")
