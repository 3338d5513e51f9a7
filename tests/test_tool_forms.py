"""The tool definitions `/v1/tools` serves, checked by the vendors' own packages: the
OpenAI Chat Completions and Responses forms (plain and strict) against the `openai`
package's parameter types and its strict-schema helper, the Anthropic form against
`ToolParam` and the `anthropic` package's strict transform; a declared tool (typed
parameters with an enum, bounds and a default) is checked with the built-in ones."""

from __future__ import annotations

import copy
from typing import Any, get_type_hints

import pytest
from anthropic.lib._parse._transform import transform_schema
from anthropic.types import ToolParam
from openai.lib._pydantic import _ensure_strict_json_schema
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from openai.types.shared_params import FunctionDefinition
from pydantic import TypeAdapter

from sleuth.contract import SearchRequest
from sleuth.gateway import parse_request
from sleuth.tools import TOOLS, tool_definitions
from sleuth.workflows.arguments import check_arguments
from sleuth.workflows.tool_forms import forms
from sleuth.workflows.tool_models import ToolDefinition

DECLARED = ToolDefinition.model_validate(
    {
        "name": "internal_search",
        "description": "Customer complaints about a product in the last week",
        "parameters": {
            "product_name": {"type": "string", "required": True, "description": "The product"},
            "channel": {"type": "string", "enum": ["tickets", "feedback"], "default": "tickets"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
        },
        "search": {"query": "最近一周关于 {{product_name}} 的客户投诉 {{channel}}"},
    }
)
ALL = tool_definitions(declared=[forms(DECLARED)])["all"]


def keys_of(typed_dict: Any) -> set[str]:
    return set(get_type_hints(typed_dict))


def objects(schema: Any) -> list[dict[str, Any]]:
    """Every object schema inside `schema`."""
    found = []
    if isinstance(schema, dict):
        if isinstance(schema.get("properties"), dict):
            found.append(schema)
        for value in schema.values():
            found.extend(objects(value))
    elif isinstance(schema, list):
        for value in schema:
            found.extend(objects(value))
    return found


def keywords(schema: Any) -> set[str]:
    """Every JSON Schema keyword used in `schema` (property names are not keywords)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            if key == "properties":
                for sub in value.values():
                    found |= keywords(sub)
            elif key not in ("enum", "required"):
                found |= keywords(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= keywords(value)
    return found


@pytest.mark.parametrize("form", ["openai", "openai_strict"])
def test_chat_completions_forms_are_function_tool_params(form: str) -> None:
    for tool in ALL[form]:
        TypeAdapter(ChatCompletionFunctionToolParam).validate_python(tool)
        assert set(tool) <= keys_of(ChatCompletionFunctionToolParam)
        assert set(tool["function"]) <= keys_of(FunctionDefinition)
        assert tool["function"].get("strict", False) is (form == "openai_strict")


@pytest.mark.parametrize("form", ["openai_responses", "openai_responses_strict"])
def test_responses_forms_are_responses_function_tool_params(form: str) -> None:
    for tool in ALL[form]:
        TypeAdapter(FunctionToolParam).validate_python(tool)
        assert set(tool) == {"type", "name", "description", "parameters", "strict"}
        assert tool["strict"] is form.endswith("_strict")
    assert [tool["name"] for tool in ALL[form]] == [*(spec.name for spec in TOOLS), DECLARED.name]


@pytest.mark.parametrize("form", ["openai_strict", "openai_responses_strict"])
def test_strict_schemas_are_what_openais_strict_helper_makes_of_them(form: str) -> None:
    for tool in ALL[form]:
        schema = tool["parameters"] if "parameters" in tool else tool["function"]["parameters"]
        # The helper rewrites a schema into strict form; a strict schema comes back as is.
        assert _ensure_strict_json_schema(copy.deepcopy(schema), path=(), root={}) == schema
        for node in objects(schema):
            assert node["required"] == list(node["properties"])
            assert node["additionalProperties"] is False
        refused = {"default", "minLength", "maxLength", "uniqueItems", "$ref", "$defs"}
        assert keywords(schema) & refused == set()


def test_strict_web_search_makes_optional_fields_nullable_and_sleuth_takes_null() -> None:
    schema = tool_definitions()["openai_responses_strict"]["parameters"]
    props = schema["properties"]
    assert props["query"]["type"] == "string"  # required: never null
    assert props["max_results"]["type"] == ["integer", "null"]
    assert (props["max_results"]["minimum"], props["max_results"]["maximum"]) == (1, 20)
    assert "null for the default (5)" in props["max_results"]["description"]
    assert None in props["time_range"]["enum"]
    assert "maxLength: 400" in props["query"]["description"]

    # What a strict-mode model sends: every field, null for "leave it out".
    call = dict.fromkeys(props) | {"query": "python 3.13", "max_results": 7}
    assert parse_request(call, strict=True) == SearchRequest(query="python 3.13", max_results=7)


def test_anthropic_form_is_a_tool_param_and_survives_the_strict_transform() -> None:
    for tool in ALL["anthropic"]:
        TypeAdapter(ToolParam).validate_python(tool)
        assert set(tool) <= keys_of(ToolParam)
        strict = transform_schema(tool["input_schema"])
        assert strict["type"] == "object"
        assert set(strict["properties"]) == set(tool["input_schema"]["properties"])
        for node in objects(strict):
            assert node["additionalProperties"] is False


def test_the_served_include_fields_reach_every_form() -> None:
    served = tool_definitions(include=["url"])
    for form in ("openai_strict", "openai_responses", "openai_responses_strict"):
        tool = served[form]
        params = tool["parameters"] if "parameters" in tool else tool["function"]["parameters"]
        assert params["properties"]["include"]["items"]["enum"] == ["url"]


def test_a_strict_call_of_a_declared_tool_sends_nulls_that_mean_the_defaults() -> None:
    schema = forms(DECLARED)["openai_strict"]["function"]["parameters"]
    props = schema["properties"]
    assert props["limit"]["type"] == ["integer", "null"]
    assert None in props["channel"]["enum"]
    call = dict.fromkeys(props) | {"product_name": "X1"}
    assert check_arguments(DECLARED.parameters, call) == {
        "product_name": "X1",
        "channel": "tickets",
        "limit": 5,
    }
