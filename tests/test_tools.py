"""The tool definitions agents receive: generated from the contract, valid, self-contained."""

from __future__ import annotations

import json
from typing import Any, get_args

import jsonschema
import pytest

from sleuth.contract import (
    IncludeField,
    Priority,
    SearchRequest,
    SearchResponse,
    Task,
    TimeRange,
)
from sleuth.tools import TOOLS, tool_definitions

SAMPLE = {
    "query": "what's new in python 3.13",
    "max_results": 3,
    "time_range": "past_year",
    "domain_filter": ["python.org"],
    "include": ["url", "published_at"],
    "context": ["we were talking about python"],
    "priority": "high",
    "no_cache": True,
}


def input_schemas() -> dict[str, dict[str, Any]]:
    """web_search's parameters in each format."""
    tools = tool_definitions()
    return {
        "openai": tools["openai"]["function"]["parameters"],
        "anthropic": tools["anthropic"]["input_schema"],
        "mcp": tools["mcp"]["inputSchema"],
    }


def every_schema() -> dict[str, dict[str, Any]]:
    """Every schema an agent may be handed, by format, tool and direction."""
    everything = tool_definitions()["all"]
    schemas: dict[str, dict[str, Any]] = {}
    for tool in everything["openai"]:
        schemas[f"openai-{tool['function']['name']}"] = tool["function"]["parameters"]
    for tool in everything["anthropic"]:
        schemas[f"anthropic-{tool['name']}"] = tool["input_schema"]
    for tool in everything["mcp"]:
        schemas[f"mcp-{tool['name']}-input"] = tool["inputSchema"]
        schemas[f"mcp-{tool['name']}-output"] = tool["outputSchema"]
    return schemas


def test_the_three_formats_name_the_search_tool() -> None:
    tools = tool_definitions()
    assert tools["openai"]["type"] == "function"
    assert tools["openai"]["function"]["name"] == "web_search"
    assert tools["anthropic"]["name"] == "web_search"
    assert tools["mcp"]["name"] == "web_search"
    for name in ("openai", "anthropic", "mcp"):
        assert [tool.get("name") or tool["function"]["name"] for tool in tools["all"][name]] == [
            "web_search",
            "search_task_submit",
            "search_task_status",
            "extract_page",
        ]


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_every_request_field_is_a_described_parameter(fmt: str) -> None:
    schema = input_schemas()[fmt]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(SearchRequest.model_fields)
    assert schema["required"] == ["query"]
    for name, prop in schema["properties"].items():
        assert prop["description"] == SearchRequest.model_fields[name].description
        assert "title" not in prop  # pydantic's titles only repeat the name
    assert ">>>" not in json.dumps(schema)  # docstring examples are tests, not guidance


def test_enums_list_exactly_the_allowed_values() -> None:
    props = input_schemas()["openai"]["properties"]
    assert props["time_range"]["enum"] == list(get_args(TimeRange))
    assert props["priority"]["enum"] == list(get_args(Priority))
    assert props["include"]["items"]["enum"] == list(get_args(IncludeField))
    assert props["max_results"]["minimum"] == 1
    assert props["max_results"]["maximum"] == 20
    assert props["query"]["maxLength"] == 400


def test_include_offers_only_what_the_deployment_serves() -> None:
    tools = tool_definitions(include=["published_at", "url"])
    enum = tools["mcp"]["inputSchema"]["properties"]["include"]["items"]["enum"]
    assert enum == ["url", "published_at"]  # in the contract's order
    nothing = tool_definitions(include=[])["mcp"]["inputSchema"]["properties"]["include"]
    assert nothing["maxItems"] == 0


@pytest.mark.parametrize("name", sorted(every_schema()))
def test_every_schema_is_valid_json_schema_with_no_ref(name: str) -> None:
    schema = every_schema()[name]
    jsonschema.Draft202012Validator.check_schema(schema)
    text = json.dumps(schema)
    assert "$ref" not in text
    assert "$defs" not in text


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_a_sample_request_validates_and_a_bad_one_does_not(fmt: str) -> None:
    validator = jsonschema.Draft202012Validator(input_schemas()[fmt])
    validator.validate(SAMPLE)
    SearchRequest.model_validate(SAMPLE)  # the model agrees
    assert not validator.is_valid({**SAMPLE, "time_range": "yesterday"})
    assert not validator.is_valid({**SAMPLE, "max_results": 0})
    assert not validator.is_valid({**SAMPLE, "include": ["raw_html"]})
    assert not validator.is_valid({**SAMPLE, "surprise": 1})
    assert not validator.is_valid({"max_results": 3})


def test_output_schemas_accept_real_responses_and_tasks() -> None:
    by_name = {tool["name"]: tool for tool in tool_definitions()["all"]["mcp"]}
    response = SearchResponse.model_validate(
        {
            "task_id": "srch_1",
            "query": "q",
            "rewritten_query": "q",
            "results": [{"title": "A", "snippet": "a", "url": "https://a.example/"}],
            "summary": [{"text": "a", "citations": [{"result": 0, "start": 0, "end": 1}]}],
            "errors": [{"code": "provider_timeout", "category": "recoverable", "message": "m"}],
            "providers": {"brave": {"status": "ok", "latency_ms": 1.0, "results": 1}},
        }
    )
    dumped = response.model_dump(mode="json")
    jsonschema.validate(dumped, by_name["web_search"]["outputSchema"])
    task = Task.model_validate(
        {
            "task_id": "task_1",
            "status": "success",
            "result": dumped,
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:01Z",
        }
    )
    for name in ("search_task_submit", "search_task_status"):
        jsonschema.validate(task.model_dump(mode="json"), by_name[name]["outputSchema"])


def test_mcp_annotations_say_read_only_and_open_world() -> None:
    by_name = {tool["name"]: tool for tool in tool_definitions()["all"]["mcp"]}
    search = by_name["web_search"]["annotations"]
    assert search["readOnlyHint"] is True
    assert search["openWorldHint"] is True
    status = by_name["search_task_status"]["annotations"]
    assert status["readOnlyHint"] is True
    assert status["idempotentHint"] is True
    assert by_name["search_task_submit"]["inputSchema"]["properties"]["idempotency_key"]


def test_task_tools_take_the_search_request_plus_their_own_fields() -> None:
    submit, status = TOOLS[1], TOOLS[2]
    assert set(submit.input.model_fields) == {*SearchRequest.model_fields, "idempotency_key"}
    assert set(status.input.model_fields) == {"task_id"}


def test_openai_descriptions_fit_the_limit() -> None:
    for tool in tool_definitions()["all"]["openai"]:
        assert 0 < len(tool["function"]["description"]) <= 1024
