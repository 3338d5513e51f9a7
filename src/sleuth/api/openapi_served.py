"""The OpenAPI document as this deployment serves it: what FastAPI derives from the
contract, narrowed to what the server really accepts here and completed where the
models cannot say it.

- `providers`: the enabled back ends' names, at least one (an unknown, disabled or
  empty list is refused with 422).
- `include`: the fields this deployment serves (`projection.always` and
  `projection.optional`), not every field the contract knows.
- The events stream: each server-sent event's `id`, `event` and `data` (the
  `TaskEvent` as JSON), as OpenAPI 3.2's `itemSchema` says it.
- 408, 413 and 503 on every operation: the wire limits (`sleuth.api.body_limits`,
  `sleuth.api.wire_protocol`) answer them anywhere.

What JSON Schema cannot say stays in words in the description: the guard refuses a
query with nothing searchable in it (only punctuation, invisible characters or markup)
and one the content policy blocks.
"""

from __future__ import annotations

import copy
from typing import Any

from sleuth.config import Settings
from sleuth.contract import ErrorInfo

__all__ = ["served_openapi"]

_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorInfo"}}}
_WIRE = {
    "408": "The headers or the body came too slowly (serve.limits).",
    "413": "The body is larger than serve.limits.max_body_bytes.",
    "503": "serve.limits.max_connections are open and none is slow; see Retry-After.",
}
_QUERY_WORDS = (
    " Refused with 422 (field `query`) when nothing searchable remains after the guard "
    "removes control and invisible characters and markup, or only punctuation does; "
    "refused with 400 `policy_violation` when the content policy blocks it."
)


def served_openapi(document: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """`document` (FastAPI's) with the narrowing and completions above."""
    served = copy.deepcopy(document)
    schemas = served["components"]["schemas"]
    request = schemas["SearchRequest"]["properties"]
    enabled = [name for name, conf in settings.providers.items() if conf.enabled]
    request["providers"]["anyOf"][0] = {
        "type": "array",
        "items": {"type": "string", "enum": enabled},
        "minItems": 1,
    }
    projection = settings.projection
    request["include"]["items"]["enum"] = list(
        dict.fromkeys([*projection.always, *projection.optional])
    )
    request["query"]["description"] += _QUERY_WORDS
    schemas.setdefault("ErrorInfo", ErrorInfo.model_json_schema())
    for path, operations in served["paths"].items():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for status, what in _WIRE.items():
                responses.setdefault(status, {"description": what, "content": _ERROR})
            if path.endswith("/events"):
                stream = responses["200"]["content"]["text/event-stream"]
                stream.pop("schema", None)
                stream["itemSchema"] = _event_schema()
    return served


def _event_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["id", "event", "data"],
        "properties": {
            "id": {"type": "string", "pattern": "^[0-9]+$", "description": "The event's seq."},
            "event": {"type": "string", "description": "The event's kind (docs/service.md)."},
            "data": {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": {"$ref": "#/components/schemas/TaskEvent"},
            },
        },
    }
