"""Projection sends the tiers asked for, falls back in a fixed order and invents nothing."""

import json

import pytest

from sleuth.contract import ResultItem
from sleuth.errors import InvalidRequest
from sleuth.stages.results.project import ProjectionSettings, check_include, project


def item(**kw: object) -> ResultItem:
    base: dict[str, object] = {
        "id": "1",
        "url": "https://a.example/x",
        "title": "T",
        "snippet": "S",
        "providers": ["p"],
    }
    base.update(kw)
    return ResultItem.model_validate(base)


def test_always_tier_only_by_default() -> None:
    (projected,) = project([item()], include=[], limit=5, settings=ProjectionSettings())
    assert json.loads(projected.model_dump_json()) == {"title": "T", "snippet": "S"}


def test_included_fields_join() -> None:
    (projected,) = project(
        [item()], include=["url", "published_at"], limit=5, settings=ProjectionSettings()
    )
    data = json.loads(projected.model_dump_json())
    assert data["url"] == "https://a.example/x"
    # asked for but absent: null and marked, never guessed
    assert data["published_at"] is None
    assert data["degraded"] is True and data["missing"] == ["published_at"]


def test_missing_snippet_falls_back_to_title_and_says_so() -> None:
    (projected,) = project([item(snippet="")], include=[], limit=5, settings=ProjectionSettings())
    assert projected.snippet == "T"
    assert projected.degraded is True and projected.missing == ["snippet"]


def test_missing_url_stays_null() -> None:
    (projected,) = project(
        [item(url=None)], include=["url"], limit=5, settings=ProjectionSettings()
    )
    assert projected.url is None and projected.missing == ["url"]


def test_limit_and_max_items() -> None:
    items = [item(id=str(n)) for n in range(10)]
    assert len(project(items, [], limit=3, settings=ProjectionSettings())) == 3
    assert len(project(items, [], limit=8, settings=ProjectionSettings(max_items=4))) == 4


def test_include_outside_the_optional_tier_is_refused() -> None:
    check_include(["url"], ProjectionSettings())
    with pytest.raises(InvalidRequest) as caught:
        check_include(["relevance"], ProjectionSettings())
    assert caught.value.allowed == ["url", "published_at", "content"]
    check_include(["relevance"], ProjectionSettings(optional=["url", "relevance"]))


def test_a_field_that_fell_back_upstream_is_reported_once() -> None:
    upstream = item(snippet="From extra snippets.", missing=["snippet"], degraded=True)
    (projected,) = project([upstream], include=["url"], limit=5, settings=ProjectionSettings())
    assert projected.snippet == "From extra snippets."
    assert projected.missing == ["snippet"] and projected.degraded is True
    (clean,) = project(
        [item(missing=["published_at"])], include=[], limit=5, settings=ProjectionSettings()
    )
    assert clean.degraded is None  # a field not sent is not the agent's concern
