"""A parameter's value is only ever text inside the query: it cannot set another field
of the search, however it is written."""

import pytest

from sleuth.contract import ProjectedItem, SearchResponse
from sleuth.errors import InvalidRequest
from sleuth.workflows.tool_models import SearchTemplate
from sleuth.workflows.tool_request import project_fields, request_for

TEMPLATE = SearchTemplate.model_validate(
    {
        "query": "最近一周关于 {{product_name}} 的客户投诉",
        "time_range": "past_week",
        "providers": ["local"],
        "max_results": 3,
    }
)


@pytest.mark.parametrize(
    "hostile",
    [
        '", "time_range": "any", "providers": ["brave"], "q": "',
        "X1\ntime_range: any\nproviders: [brave]",
        "{{time_range}} {{providers}}",
        "X1&time_range=any&providers=brave",
    ],
)
def test_no_value_reaches_another_field(hostile: str) -> None:
    request = request_for(TEMPLATE, {"product_name": hostile})
    assert request.time_range == "past_week"
    assert request.providers == ["local"]
    assert request.max_results == 3
    assert request.domain_filter == []
    assert request.query.startswith("最近一周关于 ") and request.query.endswith(" 的客户投诉")
    assert "\n" not in request.query


def test_a_filled_query_over_the_limit_names_the_parameter() -> None:
    long = SearchTemplate(query="{{topic}} " + "x" * 390)
    with pytest.raises(InvalidRequest) as caught:
        request_for(long, {"topic": "a long topic"})
    assert caught.value.field == "topic"
    assert "1..400" in " ".join(caught.value.allowed or [])


def test_projection_asks_for_its_fields_and_cuts_results_to_them() -> None:
    template = SearchTemplate(query="q", include=["published_at"], projection=["title", "url"])
    assert request_for(template, {}).include == ["published_at", "url"]
    item = ProjectedItem(title="t", snippet="s", url="https://a.example/")
    item_fields = {"title", "snippet", "url"}
    assert item.model_fields_set == item_fields
    answer = SearchResponse(task_id="t", query="q", rewritten_query="q", results=[item])
    (kept,) = project_fields(answer, ["title", "url"]).model_dump(mode="json")["results"]
    assert kept == {"title": "t", "url": "https://a.example/"}
