"""Declarative field mapping: paths, aliases in order, and what counts as missing."""

import pytest
from pydantic import ValidationError

from sleuth.providers.mapping import FieldMapping, PathError, apply, lookup, parse_path, records

BRAVE_LIKE = FieldMapping(
    results="web.results",
    fields={
        "url": ["url"],
        "title": ["title"],
        "snippet": ["description", "extra_snippets[0]"],
        "published_at": ["page_age"],
    },
    extras={
        "hostname": ["meta_url.hostname"],
        "og_description": ["pagemap.metatags[0].og:description"],
        "price": ["price", "zkPrice", "minGroupPrice"],
    },
)


def test_paths_parse_keys_indexes_and_colons() -> None:
    assert parse_path("a.b[0].c") == ("a", "b", 0, "c")
    assert parse_path("pagemap.metatags[0].og:description") == (
        "pagemap",
        "metatags",
        0,
        "og:description",
    )
    assert parse_path("x[1][2]") == ("x", 1, 2)
    for bad in ("a..b", "a.[0]", "", "a[x]"):
        with pytest.raises(PathError):
            parse_path(bad)


def test_lookup_misses_quietly() -> None:
    record = {"a": [{"b": 1}], "s": "text"}
    assert lookup(record, "a[0].b") == 1
    assert lookup(record, "a[3].b") is None
    assert lookup(record, "s.b") is None
    assert lookup(record, "nope") is None


def test_first_present_alias_wins_and_empty_values_do_not_count() -> None:
    body = {
        "web": {
            "results": [
                {
                    "url": "https://a.example/",
                    "title": "A",
                    "description": "",
                    "extra_snippets": ["From extra."],
                    "zkPrice": 5999,
                    "meta_url": {"hostname": "a.example"},
                },
                {
                    "url": "https://b.example/",
                    "title": "B",
                    "description": "Own text.",
                    "minGroupPrice": "¥4999",
                    "pagemap": {"metatags": [{"og:description": "OG text"}]},
                },
            ]
        }
    }
    first, second = apply(BRAVE_LIKE, body)
    assert first.snippet == "From extra."
    assert first.fields == {"hostname": "a.example", "price": 5999}
    assert second.snippet == "Own text."
    assert second.fields == {"og_description": "OG text", "price": "¥4999"}
    assert first.published_at is None


def test_non_string_text_fields_count_as_missing() -> None:
    (hit,) = apply(
        BRAVE_LIKE, {"web": {"results": [{"url": 42, "title": {"x": 1}, "description": "  "}]}}
    )
    assert (hit.url, hit.title, hit.snippet) == (None, None, None)


def test_results_path_shape() -> None:
    assert records(BRAVE_LIKE, {"web": {"results": "oops"}}) is None
    assert records(BRAVE_LIKE, {"other": 1}) is None
    absent_ok = BRAVE_LIKE.model_copy(update={"results_may_be_absent": True})
    assert records(absent_ok, {"other": 1}) == []
    assert apply(BRAVE_LIKE, {"web": {"results": [1, "x", {"title": "ok"}]}})[0].title == "ok"


def test_mapping_validation_names_the_problem() -> None:
    with pytest.raises(ValidationError, match="headline"):
        FieldMapping.model_validate({"results": "r", "fields": {"headline": ["h"]}})
    with pytest.raises(ValidationError, match="at least one alias"):
        FieldMapping.model_validate({"results": "r", "fields": {"title": []}})
    with pytest.raises(ValidationError, match="malformed path"):
        FieldMapping.model_validate({"results": "r", "fields": {"title": ["a..b"]}})


def test_a_later_alias_answering_is_recorded_as_a_fallback() -> None:
    first, second = apply(
        BRAVE_LIKE,
        {
            "web": {
                "results": [
                    {"title": "A", "description": "Own."},
                    {"title": "B", "extra_snippets": ["Extra."]},
                ]
            }
        },
    )
    assert first.fell_back == ()
    assert second.fell_back == ("snippet",)


def test_an_extra_of_one_key_keeps_what_is_there_and_skips_what_is_empty() -> None:
    mapping = FieldMapping(
        results="",
        fields={"title": ["title"]},
        extras={"score": ["score"], "tags": ["tags"], "meta": ["meta"], "note": ["note"]},
    )
    body = [
        {"title": "A", "score": 0, "tags": [], "meta": {}, "note": ""},
        {"title": "B", "score": 0.5, "tags": ["x"], "meta": {"k": 1}, "note": False},
        {"title": "C", "score": None},
    ]
    first, second, third = apply(mapping, body)
    assert first.fields == {"score": 0}
    assert second.fields == {"score": 0.5, "tags": ["x"], "meta": {"k": 1}, "note": False}
    assert third.fields == {}
