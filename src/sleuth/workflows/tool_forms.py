"""A declared tool as agents' tool formats see it: its parameters as a JSON Schema,
and the OpenAI, Anthropic and MCP forms `sleuth.tools.forms_of` makes of it.

The schema says what `check_arguments` enforces: each parameter's JSON type, its
enum, bounds and length, which are required, and no other keys. Its output schema is
`SearchResponse` for a tool of one search, `CompositeResponse` for a composite. Pure.

>>> from sleuth.workflows.tool_models import ToolDefinition
>>> tool = ToolDefinition.model_validate({"name": "kb", "description": "d",
...     "parameters": {"topic": {"required": True, "description": "what about"}},
...     "search": {"query": "{{topic}}"}})
>>> input_schema(tool)["required"], forms(tool)["openai"]["function"]["name"]
(['topic'], 'kb')
"""

from __future__ import annotations

from typing import Any

from sleuth.contract import SearchResponse
from sleuth.tools import forms_of, self_contained
from sleuth.workflows.composite import CompositeResponse
from sleuth.workflows.tool_models import ParameterSpec, ToolDefinition

__all__ = ["forms", "input_schema", "output_schema"]

# A declared tool searches (and a composite fans out): as read-only as web_search.
_ANNOTATIONS = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": True,
}


def _property(name: str, spec: ParameterSpec) -> dict[str, Any]:
    prop: dict[str, Any] = {"type": spec.type, "description": spec.description or name}
    if spec.enum is not None:
        prop["enum"] = list(spec.enum)
    if spec.default is not None:
        prop["default"] = spec.default
    if spec.minimum is not None:
        prop["minimum"] = spec.minimum
    if spec.maximum is not None:
        prop["maximum"] = spec.maximum
    if spec.type == "string" and spec.enum is None:
        prop["minLength"] = 1
        prop["maxLength"] = spec.max_length
    return prop


def input_schema(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: _property(name, spec) for name, spec in tool.parameters.items()},
        "required": [name for name, spec in tool.parameters.items() if spec.required],
        "additionalProperties": False,
    }


def output_schema(tool: ToolDefinition) -> dict[str, Any]:
    model = CompositeResponse if tool.composite else SearchResponse
    return self_contained(model.model_json_schema())


def forms(tool: ToolDefinition) -> dict[str, dict[str, Any]]:
    """The tool in each of `sleuth.tools.FORM_NAMES`."""
    return forms_of(
        name=tool.name,
        title=tool.title or tool.name.replace("_", " "),
        purpose=tool.description,
        input_schema=input_schema(tool),
        output_schema=output_schema(tool),
        annotations=_ANNOTATIONS,
    )
