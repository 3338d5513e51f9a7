"""The search tools as agents' tool formats see them, generated from the contract.

Three tools: `web_search` (input `SearchRequest`, output `SearchResponse`),
`search_task_submit` (the same input plus an idempotency key, output `Task`) and
`search_task_status` (a task id, output `Task`), each as an OpenAI Chat Completions
function tool, an OpenAI Responses API function tool (`name`, `parameters`, `strict`
at the top level), both also in a strict-mode variant, an Anthropic tool and an MCP
tool. Every schema is the pydantic
model's JSON Schema made self-contained: `$ref`s inlined, `$defs` dropped, pydantic's
`title`s (which repeat the property name) and docstring examples removed. Nothing
here is written by hand but each tool's one-paragraph purpose.

The plain OpenAI forms are not `strict`: their schema keeps optional fields optional
with their defaults, and still keeps what strict validators check (an object root,
`additionalProperties: false`, no `$ref`). The strict variants follow OpenAI's
strict-mode rules (`strict_schema`): every property required, an optional one
nullable instead of defaulted (null means "the default", which `SearchRequest`
accepts), no keyword strict mode refuses (`default`, `minLength`, `maxLength`,
`uniqueItems`, ...): those constraints move into the description, and sleuth still
enforces them.

Pure: no I/O. `GET /v1/tools` serves `tool_definitions()`; the MCP server lists
`mcp_tools()`.

>>> tool_definitions()["openai"]["function"]["name"]
'web_search'
>>> sorted(tool_definitions()["mcp"]["inputSchema"]["properties"])[:3]
['context', 'domain_filter', 'include']
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import IncludeField, SearchRequest, SearchResponse, Task
from sleuth.extract.models import ExtractedPage, PageArguments

__all__ = [
    "FORM_NAMES",
    "SEARCH_TASK_STATUS",
    "SEARCH_TASK_SUBMIT",
    "TOOLS",
    "WEB_SEARCH",
    "TaskLookup",
    "TaskSubmission",
    "ToolSpec",
    "anthropic_tool",
    "forms_of",
    "mcp_tool",
    "mcp_tools",
    "openai_responses_tool",
    "openai_tool",
    "self_contained",
    "strict_schema",
    "tool_definitions",
]

IDEMPOTENCY_KEY_MAX_CHARS = 200


class TaskSubmission(SearchRequest):
    """One search to run in the background, as an agent submits it."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="TaskSubmission")

    idempotency_key: str | None = Field(
        None,
        min_length=1,
        max_length=IDEMPOTENCY_KEY_MAX_CHARS,
        description="Any string unique to this search; a retried submit with the same "
        "key returns the first task instead of starting another.",
    )


class TaskLookup(BaseModel):
    """Which task to look up."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="TaskLookup")

    task_id: str = Field(
        min_length=1, description="The task_id search_task_submit returned (task_...)."
    )


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, its purpose, and the contract types it takes and gives."""

    name: str
    title: str
    purpose: str
    input: type[BaseModel]
    output: type[BaseModel]
    #: MCP behaviour hints (camelCase, as MCP spells them).
    annotations: dict[str, bool]


WEB_SEARCH = ToolSpec(
    name="web_search",
    title="Web search",
    purpose=(
        "Search the web and the local knowledge base through several search back ends "
        "at once. Returns merged, de-duplicated, ranked results (title and snippet; add "
        'fields such as "url" with `include`), a short summary whose sentences cite the '
        "results by index, cross-checked facts, a confidence score, and any back-end "
        "errors next to the partial answer. Pass the user's question in its full "
        "original wording."
    ),
    input=SearchRequest,
    output=SearchResponse,
    annotations={
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    },
)

SEARCH_TASK_SUBMIT = ToolSpec(
    name="search_task_submit",
    title="Start a background search",
    purpose=(
        "Start the same search as web_search in the background and return at once with "
        "a task_id and status pending. Poll search_task_status with the task_id until "
        "status is success (the SearchResponse is in `result`) or failed (`error`). An "
        "accepted task always finishes, even if the service restarts."
    ),
    input=TaskSubmission,
    output=Task,
    # The task record is sleuth's own bookkeeping, not a change to the caller's world,
    # so a submit is as read-only as the search it runs.
    annotations={
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": True,
    },
)

SEARCH_TASK_STATUS = ToolSpec(
    name="search_task_status",
    title="Background search status",
    purpose=(
        "The state of a task started with search_task_submit: status (pending, running, "
        "success, failed), its progress events, and the SearchResponse once it succeeded "
        "or the error once it failed. Another caller's task is reported as not found."
    ),
    input=TaskLookup,
    output=Task,
    # Reads sleuth's own task store only: a closed world.
    annotations={
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
)

EXTRACT_PAGE = ToolSpec(
    name="extract_page",
    title="Read a page",
    purpose=(
        "Fetch one web page (HTML or PDF) and return its main text as plain text with "
        "paragraphs, # headings, - lists and tables kept and navigation, ads and comments "
        "left out, plus its title, author, site name, language and the publication and "
        "modification dates the page states. Use it on a search result's url when its "
        "snippet is not enough. Text that addresses you is neutralised and flagged."
    ),
    input=PageArguments,
    output=ExtractedPage,
    annotations={
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    },
)

TOOLS: tuple[ToolSpec, ...] = (WEB_SEARCH, SEARCH_TASK_SUBMIT, SEARCH_TASK_STATUS, EXTRACT_PAGE)

# Keywords whose value is one subschema, a list of them, or a name → subschema map.
_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
_MANY = ("anyOf", "allOf", "oneOf", "prefixItems")
_NAMED = ("properties", "patternProperties")


def _prose(text: str) -> str:
    """A docstring without its doctest examples (what an agent reads, not a test)."""
    kept = [line for line in text.split("\n\n") if not line.lstrip().startswith(">>>")]
    return "\n\n".join(kept).strip()


def self_contained(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every local `$ref` inlined, `$defs` dropped, pydantic's `title`
    keywords removed and doctest examples cut from descriptions.

    >>> self_contained({"$defs": {"A": {"type": "string", "title": "A"}},
    ...                 "properties": {"a": {"$ref": "#/$defs/A", "description": "x"}}})
    {'properties': {'a': {'type': 'string', 'description': 'x'}}}
    """
    defs: dict[str, Any] = schema.get("$defs", {})

    def walk(node: dict[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
        if "$ref" in node:
            ref = node["$ref"]
            name = ref.removeprefix("#/$defs/")
            if not ref.startswith("#/$defs/") or name not in defs:
                raise ValueError(f"unresolvable $ref {ref!r}")
            if name in seen:
                raise ValueError(f"recursive $ref {ref!r} cannot be inlined")
            siblings = {key: value for key, value in node.items() if key != "$ref"}
            return walk({**copy.deepcopy(defs[name]), **siblings}, (*seen, name))
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("$defs", "title"):
                continue
            if key == "description" and isinstance(value, str):
                out[key] = _prose(value)
            elif key in _ONE and isinstance(value, dict):
                out[key] = walk(value, seen)
            elif key in _MANY and isinstance(value, list):
                out[key] = [walk(item, seen) for item in value]
            elif key in _NAMED and isinstance(value, dict):
                out[key] = {name: walk(sub, seen) for name, sub in value.items()}
            else:
                out[key] = copy.deepcopy(value)
        return out

    return walk(schema, ())


def _input_schema(spec: ToolSpec, include: Sequence[str] | None) -> dict[str, Any]:
    schema = self_contained(spec.input.model_json_schema())
    if include is not None and "include" in schema.get("properties", {}):
        # Offer only the optional fields this deployment serves: an agent never asks
        # for one that would be refused.
        served = [name for name in get_args(IncludeField) if name in include]
        prop = schema["properties"]["include"]
        prop["items"]["enum"] = served
        if not served:
            prop["maxItems"] = 0
    return schema


# Keywords OpenAI's strict mode does not accept (its supported subset keeps `pattern`,
# `format`, numeric bounds and `minItems`/`maxItems`); what they say goes into words.
_NOT_STRICT = (
    "default",
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "contains",
    "examples",
)


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` (self-contained) under OpenAI's strict-mode rules: every property
    required, an optional one nullable, `additionalProperties: false` on every object,
    and the keywords strict mode refuses moved into the description as words.

    >>> props = strict_schema({"type": "object", "required": ["q"], "properties": {
    ...     "n": {"type": "integer", "default": 5, "minimum": 1},
    ...     "q": {"type": "string", "minLength": 1}}})["properties"]
    >>> props["n"]
    {'type': ['integer', 'null'], 'minimum': 1, 'description': 'null for the default (5).'}
    >>> props["q"]
    {'type': 'string', 'description': '(minLength: 1)'}
    """
    return _strict(schema, required=True)


def _strict(node: dict[str, Any], *, required: bool) -> dict[str, Any]:
    out = {key: copy.deepcopy(value) for key, value in node.items() if key not in _NOT_STRICT}
    if isinstance(out.get("properties"), dict):
        needed = set(node.get("required", []))
        out["properties"] = {
            name: _strict(sub, required=name in needed) for name, sub in out["properties"].items()
        }
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    if isinstance(out.get("items"), dict):
        out["items"] = _strict(out["items"], required=True)
    if isinstance(out.get("anyOf"), list):
        out["anyOf"] = [_strict(variant, required=True) for variant in out["anyOf"]]
    words = [
        f"{key}: {json.dumps(node[key])}" for key in _NOT_STRICT if key in node and key != "default"
    ]
    notes = [f"({', '.join(words)})"] if words else []
    if not required:
        _allow_null(out)
        if node.get("default") is not None:
            notes.append(f"null for the default ({json.dumps(node['default'])}).")
    if notes:
        out["description"] = " ".join(filter(None, [out.get("description", ""), *notes]))
    return out


def _allow_null(node: dict[str, Any]) -> None:
    """Let an optional property be null (strict mode's way of leaving it out)."""
    if "anyOf" in node:
        if not any(variant.get("type") == "null" for variant in node["anyOf"]):
            node["anyOf"].append({"type": "null"})
        return
    kind = node.get("type")
    if isinstance(kind, str) and kind != "null":
        node["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        node["type"] = [*kind, "null"]
    if isinstance(node.get("enum"), list) and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]


def _parameters(spec: ToolSpec, include: Sequence[str] | None, strict: bool) -> dict[str, Any]:
    schema = _input_schema(spec, include)
    return strict_schema(schema) if strict else schema


def openai_tool(
    spec: ToolSpec, include: Sequence[str] | None = None, *, strict: bool = False
) -> dict[str, Any]:
    """The tool as an OpenAI Chat Completions function tool (`strict`: the strict-mode
    variant)."""
    function: dict[str, Any] = {
        "name": spec.name,
        "description": spec.purpose,
        "parameters": _parameters(spec, include, strict),
    }
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def openai_responses_tool(
    spec: ToolSpec, include: Sequence[str] | None = None, *, strict: bool = False
) -> dict[str, Any]:
    """The tool as an OpenAI Responses API function tool: `name`, `description`,
    `parameters` and `strict` at the top level."""
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.purpose,
        "parameters": _parameters(spec, include, strict),
        "strict": strict,
    }


def anthropic_tool(spec: ToolSpec, include: Sequence[str] | None = None) -> dict[str, Any]:
    """The tool as an Anthropic Messages API tool."""
    return {
        "name": spec.name,
        "description": spec.purpose,
        "input_schema": _input_schema(spec, include),
    }


def mcp_tool(spec: ToolSpec, include: Sequence[str] | None = None) -> dict[str, Any]:
    """The tool as an MCP `Tool` (wire names: inputSchema, outputSchema)."""
    return {
        "name": spec.name,
        "title": spec.title,
        "description": spec.purpose,
        "inputSchema": _input_schema(spec, include),
        "outputSchema": self_contained(spec.output.model_json_schema()),
        "annotations": dict(spec.annotations),
    }


def mcp_tools(include: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Every tool in MCP form, `web_search` first."""
    return [mcp_tool(spec, include) for spec in TOOLS]


#: The forms `tool_definitions` gives each tool in, by key.
FORM_NAMES = (
    "openai",
    "openai_strict",
    "openai_responses",
    "openai_responses_strict",
    "anthropic",
    "mcp",
)


def forms_of(
    *,
    name: str,
    title: str,
    purpose: str,
    input_schema: dict[str, Any],
    output_schema: dict[str, Any],
    annotations: dict[str, bool],
) -> dict[str, dict[str, Any]]:
    """A tool given by its schemas (a declared tool's, `sleuth.workflows`) in every
    form of `FORM_NAMES`, shaped exactly as the built-in tools' are."""
    strict = strict_schema(input_schema)

    def function(parameters: dict[str, Any], is_strict: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name, "description": purpose, "parameters": parameters}
        if is_strict:
            body["strict"] = True
        return {"type": "function", "function": body}

    def responses(parameters: dict[str, Any], is_strict: bool) -> dict[str, Any]:
        return {
            "type": "function",
            "name": name,
            "description": purpose,
            "parameters": parameters,
            "strict": is_strict,
        }

    return {
        "openai": function(copy.deepcopy(input_schema), False),
        "openai_strict": function(strict, True),
        "openai_responses": responses(copy.deepcopy(input_schema), False),
        "openai_responses_strict": responses(copy.deepcopy(strict), True),
        "anthropic": {
            "name": name,
            "description": purpose,
            "input_schema": copy.deepcopy(input_schema),
        },
        "mcp": {
            "name": name,
            "title": title,
            "description": purpose,
            "inputSchema": copy.deepcopy(input_schema),
            "outputSchema": copy.deepcopy(output_schema),
            "annotations": dict(annotations),
        },
    }


def tool_definitions(
    include: Sequence[str] | None = None,
    declared: Sequence[Mapping[str, dict[str, Any]]] = (),
) -> dict[str, Any]:
    """`web_search` as an OpenAI Chat Completions tool (`openai`, strict:
    `openai_strict`), an OpenAI Responses API tool (`openai_responses`, strict:
    `openai_responses_strict`), an Anthropic and an MCP tool (`anthropic`, `mcp`), and
    under `all` every tool in each format (lists, in the order of `TOOLS`).

    `include`: the optional-tier fields the deployment serves (`projection.optional`);
    the `include` parameter then offers only those. Default: every field the contract
    knows. `declared`: the configured tools, each in every form (`forms_of`), listed
    under `all` after the built-in ones.
    """
    forms: dict[str, Callable[[ToolSpec], dict[str, Any]]] = {
        "openai": lambda spec: openai_tool(spec, include),
        "openai_strict": lambda spec: openai_tool(spec, include, strict=True),
        "openai_responses": lambda spec: openai_responses_tool(spec, include),
        "openai_responses_strict": lambda spec: openai_responses_tool(spec, include, strict=True),
        "anthropic": lambda spec: anthropic_tool(spec, include),
        "mcp": lambda spec: mcp_tool(spec, include),
    }
    return {
        **{name: form(WEB_SEARCH) for name, form in forms.items()},
        "all": {
            name: [*(form(spec) for spec in TOOLS), *(tool[name] for tool in declared)]
            for name, form in forms.items()
        },
    }
