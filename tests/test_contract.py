"""The request contract: what is accepted, what is refused, and how refusals read."""

import json

import pytest
from pydantic import BaseModel, ValidationError

from sleuth.contract import (
    SCHEMAS,
    ProjectedItem,
    ResultItem,
    SearchRequest,
    SearchResponse,
    describe_validation_error,
)
from sleuth.errors import InvalidRequest
from sleuth.gateway import parse_request


def refusal(data: dict[str, object]) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(data)
    return caught.value


def test_defaults_follow_the_design() -> None:
    req = SearchRequest(query="python 3.13 release date")
    assert req.max_results == 5
    assert req.time_range == "any"
    assert req.priority == "normal"
    assert req.providers is None
    assert req.include == []
    assert req.no_cache is False


def test_query_is_trimmed_before_its_length_is_checked() -> None:
    assert SearchRequest(query="  北京天气  ").query == "北京天气"
    assert SearchRequest(query=" " + "x" * 400 + " ").query == "x" * 400
    error = refusal({"query": "   "})
    assert error.field == "query"
    assert "1..400 characters" in error.message


def test_max_results_zero_names_the_field_and_the_range() -> None:
    error = refusal({"query": "q", "max_results": 0})
    assert error.field == "max_results"
    assert error.allowed == ["1..20"]
    assert "max_results" in error.message and "1..20" in error.message


def test_unknown_time_range_lists_the_allowed_values() -> None:
    error = refusal({"query": "q", "time_range": "before_2020"})
    assert error.field == "time_range"
    assert error.allowed == ["any", "past_week", "past_month", "past_year"]
    assert "'before_2020'" in error.message


def test_a_5000_character_query_is_refused_without_echoing_it() -> None:
    error = refusal({"query": "长" * 5000})
    assert error.field == "query"
    assert "a 5000-character string" in error.message
    assert "长长长长长长长长" not in error.message
    assert error.allowed == ["1..400 characters"]


def test_include_accepts_only_result_fields() -> None:
    assert SearchRequest(query="q", include=["url", "published_at"]).include == [
        "url",
        "published_at",
    ]
    error = refusal({"query": "q", "include": ["raw_html"]})
    assert error.field == "include"
    assert error.allowed is not None and "url" in error.allowed


def test_every_bad_field_is_reported_at_once() -> None:
    error = refusal({"query": "q", "max_results": 99, "priority": "urgent"})
    assert {d.field for d in error.details} == {"max_results", "priority"}
    assert all(
        d.code == "invalid_request" and d.category == "non_recoverable" for d in error.details
    )


def test_unknown_fields_are_refused_not_ignored() -> None:
    error = refusal({"query": "q", "maxresults": 3})
    assert error.field == "maxresults"
    assert "unknown field" in error.message
    assert error.allowed is not None and "max_results" in error.allowed


@pytest.mark.parametrize("domain", ["", "not a domain", "http://localhost", "tickets/2026"])
def test_domain_filter_must_hold_domains_or_source_names(domain: str) -> None:
    error = refusal({"query": "q", "domain_filter": [domain]})
    assert error.field == "domain_filter"
    assert "source" in error.message


def test_domain_filter_is_normalised() -> None:
    req = SearchRequest(query="q", domain_filter=["https://www.Python.org/downloads", "docs.rs"])
    assert req.domain_filter == ["python.org", "docs.rs"]


def test_domain_filter_takes_source_names_as_the_seed_writes_them() -> None:
    req = SearchRequest(query="q", domain_filter=["support_tickets", "Customer_Feedback"])
    assert req.domain_filter == ["support_tickets", "customer_feedback"]


def test_tags_are_lower_cased_once_each_and_hold_no_space() -> None:
    assert SearchRequest(query="q", tags=["Policy", "policy", "规程"]).tags == ["policy", "规程"]
    error = refusal({"query": "q", "tags": ["release notes"]})
    assert error.field == "tags"
    assert "without spaces" in error.message


def test_describe_validation_error_keeps_pydantic_out_of_the_message() -> None:
    with pytest.raises(ValidationError) as caught:
        SearchRequest(query="q", max_results=21)
    (info,) = describe_validation_error(caught.value)
    assert (
        info.message
        == "max_results: Input should be less than or equal to 20 (got 21); allowed: 1..20"
    )
    assert "pydantic" not in info.message


def test_output_schema_lists_the_contract_fields() -> None:
    schema = SearchResponse.model_json_schema()
    for name in (
        "task_id",
        "query",
        "rewritten_query",
        "results",
        "summary",
        "facts",
        "confidence",
        "degraded",
        "degradations",
        "errors",
        "providers",
        "cache",
        "timings",
    ):
        assert name in schema["properties"]
    assert schema["$defs"]["ErrorInfo"]["title"] == "SearchError"


def test_the_schemas_agents_read_carry_words_not_python_sessions() -> None:
    for model in SCHEMAS.values():
        schema = json.dumps(model.model_json_schema(), ensure_ascii=False)
        assert ">>>" not in schema
    described = SearchRequest.model_json_schema()["description"]
    assert described == "One search, as an agent asks for it."


def test_result_copies_are_what_pydantic_copies_them_as() -> None:
    item = ResultItem(
        id="1", url="https://a.example/", providers=["p"], ranks={"p": 1}, flags=["x"]
    )
    for model in (item, ProjectedItem(title="t", url="https://a.example/")):
        update = {"title": "new", "flags": ["y"]}
        quick = model.model_copy(update=update)
        generic = BaseModel.model_copy(model, update=update)
        assert quick == generic
        assert quick.model_fields_set == generic.model_fields_set
        assert quick.model_dump(exclude_unset=True) == generic.model_dump(exclude_unset=True)
        assert model.title != "new" and quick.title == "new"  # the original is untouched
        assert model.model_copy() == model and model.model_copy() is not model
        assert model.model_copy(deep=True) == model


@pytest.mark.parametrize(
    "fields",
    [
        {"url": 'https://a.example/?q="x"&y=1', "title": 'say "hi"\n\t\\ end'},
        {"title": "太阳能电池板 ☀️ \u2028 \x00 \ud7ff", "snippet": "", "id": "r1"},
        {"snippet": "only", "freshness": "past_week", "domain": "a.example"},
        {"title": "t", "url": None, "published_at": None},  # nulls among them
        {"title": "t", "relevance": 0.5, "flags": ["x"], "degraded": True},  # not strings
    ],
)
def test_a_projected_item_serialises_as_its_fields_serializers_would(
    fields: dict[str, object],
) -> None:
    """Items of strings and nulls skip their fields' serializers: the JSON is the same
    as theirs (any `exclude` takes their path), in field order whatever order the
    fields were set in, in both modes."""
    item = ProjectedItem(**dict(reversed(fields.items())))
    plain = item.model_dump_json()
    assert plain == item.model_dump_json(exclude={"no_such_field"})
    assert list(json.loads(plain)) == [
        name for name in ProjectedItem.model_fields if name in fields
    ]
    assert item.model_dump() == item.model_dump(exclude={"no_such_field"})
