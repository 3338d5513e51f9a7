"""What a declared tool may say, and how a bad definition is reported: by place, with
the allowed values."""

from pathlib import Path
from typing import Any

import pytest

from sleuth.errors import ConfigError
from sleuth.gateway import Sleuth
from sleuth.testing import memory_settings
from sleuth.workflows.tool_book import ToolBook, load_tool_file, tools_from_data


def tool(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "internal_search",
        "description": "Customer complaints about a product",
        "parameters": {"product_name": {"type": "string", "required": True}},
        "search": {"query": "最近一周关于 {{product_name}} 的客户投诉", "time_range": "past_week"},
    }
    base.update(overrides)
    return base


def problem(data: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        tools_from_data(data, "tools file t.yaml")
    return caught.value.message


def test_a_well_formed_tool_keeps_its_fixed_fields_apart_from_the_query() -> None:
    (made,) = tools_from_data(tool(), "t")
    assert made.search is not None
    assert made.search.fixed() == {"time_range": "past_week"}
    assert made.parameters["product_name"].required


def test_a_bad_time_range_names_the_tool_the_field_and_the_allowed_values() -> None:
    message = problem([tool(search={"query": "{{product_name}}", "time_range": "last_week"})])
    assert "tools[internal_search].search" in message
    assert "time_range" in message and "past_week" in message and "past_month" in message


def test_a_misspelt_request_field_is_refused_with_the_fields_there_are() -> None:
    message = problem(tool(search={"query": "{{product_name}}", "max_result": 3}))
    assert "max_result: unknown field" in message and "max_results" in message


def test_a_placeholder_that_is_no_parameter_is_named() -> None:
    message = problem(tool(search={"query": "{{product}} complaints"}))
    assert "product" in message and "parameters: product_name" in message


def test_a_default_outside_the_enum_and_a_required_default_are_refused() -> None:
    enum = tool(parameters={"p": {"enum": ["a", "b"], "default": "c"}}, search={"query": "{{p}}"})
    assert "not one of the enum values" in problem(enum)
    required = tool(parameters={"p": {"required": True, "default": "x"}}, search={"query": "{{p}}"})
    assert "a required parameter has no default" in problem(required)
    typed = tool(parameters={"p": {"type": "integer", "default": "7"}}, search={"query": "{{p}}"})
    assert "not of type integer" in problem(typed)


def test_a_tool_is_either_one_search_or_parts() -> None:
    both = tool(parts=[{"name": "a", "search": {"query": "x"}}])
    assert "either search" in problem(both)
    neither = tool(search=None)
    assert "either search" in problem(neither)


def test_a_projection_names_result_fields_only() -> None:
    message = problem(tool(search={"query": "{{product_name}}", "projection": ["title", "body"]}))
    assert "unknown result fields body" in message and "snippet" in message


def test_names_must_suit_every_tool_format() -> None:
    assert "name" in problem(tool(name="internal search"))


def test_the_set_refuses_built_in_names_twins_and_parts_of_unknown_or_composite_tools(
    tmp_path: Path,
) -> None:
    simple = tools_from_data(tool(), "t")
    with pytest.raises(ConfigError, match="built-in"):
        ToolBook(tools_from_data(tool(name="web_search"), "t"))
    with pytest.raises(ConfigError, match="declared twice"):
        ToolBook([*simple, *simple])
    unknown = tools_from_data(
        tool(name="intel", search=None, parts=[{"name": "a", "tool": "nope"}]), "t"
    )
    with pytest.raises(ConfigError, match=r"no tool 'nope'; allowed: internal_search"):
        ToolBook([*simple, *unknown])
    nested = tools_from_data(
        tool(name="outer", search=None, parts=[{"name": "a", "tool": "intel"}]), "t"
    )
    inner = tools_from_data(
        tool(name="intel", search=None, parts=[{"name": "b", "tool": "internal_search"}]), "t"
    )
    with pytest.raises(ConfigError, match="itself composite"):
        ToolBook([*simple, *inner, *nested])


def test_a_file_holds_one_tool_a_list_or_a_tools_key(tmp_path: Path) -> None:
    one = tmp_path / "one.yaml"
    one.write_text("name: a\ndescription: d\nsearch: {query: q}\n", encoding="utf-8")
    many = tmp_path / "many.yaml"
    many.write_text(
        "tools:\n  - {name: b, description: d, search: {query: q}}\n"
        "  - {name: c, description: d, search: {query: q}}\n",
        encoding="utf-8",
    )
    assert [t.name for t in load_tool_file(one)] == ["a"]
    assert [t.name for t in load_tool_file(many)] == ["b", "c"]
    assert sorted(ToolBook(folder=tmp_path).current()) == ["a", "b", "c"]


def test_a_search_this_deployment_cannot_serve_is_said_when_the_tools_are_read() -> None:
    typo = tools_from_data(tool(search={"query": "{{product_name}}", "providers": ["locl"]}), "t")
    with pytest.raises(ConfigError, match=r"tools\[internal_search\]\.search: providers: .*'locl'"):
        Sleuth(memory_settings(tools=typo))
    unserved = tools_from_data(
        tool(search={"query": "{{product_name}}", "projection": ["title", "domain"]}), "t"
    )
    with pytest.raises(ConfigError, match=r"include: domain not available here; allowed: url"):
        Sleuth(memory_settings(tools=unserved))
