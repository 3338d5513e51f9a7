"""The OpenAPI document as this deployment serves it: what FastAPI derives from the
contract, narrowed to what the server really accepts here and completed where the
models cannot say it.

- `providers`: the enabled back ends' names, at least one (an unknown, disabled or
  empty list is refused with 422).
- `include`: the fields this deployment serves (`projection.optional`, and any
  `projection.always` field the contract lets a request name), not every field the
  contract knows.
- `domain_filter`: domains, or the names of the configured `kb.sources`; a domain
  only with a provider that returns web pages (a request naming only the knowledge
  base, `local`, may not filter by domain), and a source name or a `tags` entry only
  with one that holds sources (`sleuth.stages.scope`); a request that names no
  providers is held to the configured chain.
- A `SearchRequest` field with a default also takes `null` for that default (as
  strict-mode tool callers send it).
- Headers are strings: FastAPI's `null` branch of an optional header is dropped.
- The events stream: each server-sent event's `id`, `event` and `data` (the
  `TaskEvent` as JSON), as OpenAPI 3.2's `itemSchema` says it.
- 401 and 429 on every operation that needs a key (the key check and its rate
  limit answer them); 408, 413 and 503 on every operation, which the wire limits
  (`sleuth.api.body_limits`, `sleuth.api.wire_protocol`) answer anywhere.

What JSON Schema cannot say stays in words in the description: the guard refuses a
query with nothing searchable in it (only punctuation, invisible characters or markup)
and one the content policy blocks.
"""

from __future__ import annotations

import copy
from typing import Any, get_args

from sleuth import providers as registry
from sleuth.config import Settings
from sleuth.contract import DOTTED_PATTERN, ErrorInfo, IncludeField

__all__ = ["served_openapi"]

_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorInfo"}}}
_WIRE = {
    "408": "The headers or the body came too slowly (serve.limits).",
    "413": "The body is larger than serve.limits.max_body_bytes.",
    "503": "serve.limits.max_connections are open and none is slow; see Retry-After.",
}
_KEYED = {
    "401": "An API key is needed and none or a bad one came.",
    "429": "The key's rate limit is reached; see Retry-After.",
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
    nameable = get_args(IncludeField)
    request["include"]["items"]["enum"] = [
        name
        for name in dict.fromkeys([*projection.optional, *projection.always])
        if name in nameable
    ]
    request["query"]["description"] += _QUERY_WORDS
    required = set(schemas["SearchRequest"].get("required", ()))
    for name, prop in request.items():
        if name not in required:
            request[name] = _nullable(prop)
    names = _names_pattern(list(settings.kb.sources))
    entry = request["domain_filter"]["anyOf"][0]["items"]
    entry.pop("pattern", None)
    entry["anyOf"] = [{"pattern": DOTTED_PATTERN}, *([{"pattern": names}] if names else [])]
    schemas["SearchRequest"]["allOf"] = _scope_rules(enabled, settings.chain, names)
    schemas.setdefault("ErrorInfo", ErrorInfo.model_json_schema())
    for path, operations in served["paths"].items():
        for operation in operations.values():
            for parameter in operation.get("parameters", ()):
                if parameter.get("in") == "header":
                    parameter["schema"] = _not_null(parameter["schema"])
            responses = operation.setdefault("responses", {})
            wire = {**_WIRE, **(_KEYED if operation.get("security") else {})}
            for status, what in wire.items():
                responses.setdefault(status, {"description": what, "content": _ERROR})
            if path.endswith("/events"):
                stream = responses["200"]["content"]["text/event-stream"]
                stream.pop("schema", None)
                stream["itemSchema"] = _event_schema()
    return served


_META = ("title", "description", "default")


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    if any(branch.get("type") == "null" for branch in prop.get("anyOf", ())):
        return prop
    meta = {key: prop[key] for key in _META if key in prop}
    shape = {key: value for key, value in prop.items() if key not in _META}
    return {"anyOf": [shape, {"type": "null"}], **meta}


def _names_pattern(sources: list[str]) -> str | None:
    """A pattern of the source names as the contract takes them: any case, spaces
    around. (Names hold only letters, digits, '_' and '-': nothing to escape.)"""
    if not sources:
        return None
    spelled = [
        "".join(f"[{c}{c.upper()}]" if c.upper() != c else c for c in name) for name in sources
    ]
    return f"^ *(?:{'|'.join(spelled)}) *$"


def _scope_rules(enabled: list[str], chain: list[str], names: str | None) -> list[dict[str, Any]]:
    """What the gateway refuses (`sleuth.stages.scope.refusal`), said in JSON Schema:
    domains over providers that return no web pages; source names and tags over
    providers that hold no sources."""
    infos = {name: registry.get(name).info for name in enabled}
    pageless = [name for name, info in infos.items() if not info.remote]
    sourceless = [name for name, info in infos.items() if not info.sources]
    chain_infos = [registry.get(name).info for name in chain]
    rules = []
    if pageless:
        only_names: dict[str, Any] = (
            {"type": "array", "items": {"pattern": names}}
            if names
            else {"type": "array", "maxItems": 0}
        )
        rules.append(
            {
                "if": _providers_within(pageless, all(not i.remote for i in chain_infos)),
                "then": {
                    "properties": {"domain_filter": {"anyOf": [only_names, {"type": "null"}]}}
                },
            }
        )
    if sourceless:
        none: dict[str, Any] = {"anyOf": [{"type": "array", "maxItems": 0}, {"type": "null"}]}
        only_domains = {"type": "array", "items": {"pattern": DOTTED_PATTERN}}
        rules.append(
            {
                "if": _providers_within(sourceless, not any(i.sources for i in chain_infos)),
                "then": {
                    "properties": {
                        "tags": none,
                        "domain_filter": {"anyOf": [only_domains, {"type": "null"}]},
                    }
                },
            }
        )
    return rules


def _providers_within(names: list[str], chain_too: bool) -> dict[str, Any]:
    """A request whose providers are all of `names` (or, `chain_too`, names none)."""
    given = {
        "properties": {"providers": {"type": "array", "items": {"enum": names}}},
        "required": ["providers"],
    }
    if not chain_too:
        return given
    unnamed = [
        {"not": {"required": ["providers"]}},
        {"properties": {"providers": {"type": "null"}}, "required": ["providers"]},
    ]
    return {"anyOf": [given, *unnamed]}


def _not_null(schema: dict[str, Any]) -> dict[str, Any]:
    branches = [b for b in schema.get("anyOf", ()) if b.get("type") != "null"]
    if "anyOf" not in schema or len(branches) != 1:
        return schema
    rest = {key: value for key, value in schema.items() if key != "anyOf"}
    return {**branches[0], **rest}


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
