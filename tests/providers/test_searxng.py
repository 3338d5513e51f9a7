"""SearXNG provider: request building and parsing of recorded /search?format=json bodies."""

from __future__ import annotations

import pytest
from helpers import body_loader, data_dir, parser, query_maker, raised

from sleuth.contract import TimeRange
from sleuth.errors import (
    AuthFailed,
    BadResponse,
    ConfigError,
    ProviderRejected,
    ProviderUnavailable,
    RateLimited,
)
from sleuth.mapping_files import builtin_mapping
from sleuth.providers import searxng
from sleuth.providers.base import ProviderSettings

MAPPING = builtin_mapping("searxng")
DATA = data_dir("searxng")
load = body_loader(DATA)
parse = parser(searxng, MAPPING)


SETTINGS = ProviderSettings(base_url="http://localhost:8888")
query = query_maker("python 3.13 release notes")


# --- build_request ---------------------------------------------------------------------


def test_request_is_a_get_on_the_instance_search_endpoint() -> None:
    request = searxng.build_request(query(), SETTINGS)

    assert request.method == "GET"
    assert request.url == "http://localhost:8888/search"
    assert request.params == {
        "q": "python 3.13 release notes",
        "format": "json",
        "pageno": "1",
        "language": "en",
    }
    assert request.headers["Accept"] == "application/json"


def test_trailing_slash_on_base_url_is_not_doubled() -> None:
    settings = ProviderSettings(base_url="https://search.example.org/searx/")
    assert searxng.build_request(query(), settings).url == "https://search.example.org/searx/search"


@pytest.mark.parametrize(
    ("time_range", "expected"),
    [("past_week", "week"), ("past_month", "month"), ("past_year", "year")],
)
def test_time_range_is_mapped(time_range: TimeRange, expected: str) -> None:
    request = searxng.build_request(query(time_range=time_range), SETTINGS)
    assert request.params["time_range"] == expected


def test_time_range_any_is_omitted() -> None:
    assert "time_range" not in searxng.build_request(query(time_range="any"), SETTINGS).params


@pytest.mark.parametrize(
    ("language", "expected"), [("zh", "zh"), ("en", "en"), ("fr", "auto"), ("", "auto")]
)
def test_language_is_mapped(language: str, expected: str) -> None:
    request = searxng.build_request(query("人工智能 发展", language=language), SETTINGS)
    assert request.params["language"] == expected
    assert request.params["q"] == "人工智能 发展"


def test_instance_options_are_passed_through() -> None:
    settings = ProviderSettings(
        base_url="http://localhost:8888",
        options={
            "categories": ["general", "news"],
            "engines": "",
            "safesearch": 1,
            "language": "zh-CN",
        },
    )
    params = searxng.build_request(query(language="zh"), settings).params

    assert params["categories"] == "general,news"
    assert params["safesearch"] == "1"
    assert params["language"] == "zh-CN"
    assert "engines" not in params


def test_missing_base_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="base_url"):
        searxng.build_request(query(), ProviderSettings(base_url=""))


def test_info_declares_native_capabilities() -> None:
    info = searxng.PROVIDER.info
    assert info.name == "searxng"
    assert info.docs_url.startswith("https://docs.searxng.org/")
    assert (info.time_range, info.domain_filter, info.language) == (True, False, True)
    assert info.query_style == "keywords"
    assert not info.needs_key


# --- parse_response: good bodies ---------------------------------------------------------


def test_results_keep_titles_urls_snippets_and_dates_as_sent() -> None:
    infobox, *hits = parse(200, {"content-type": "application/json"}, load("search_ok.json"))

    assert infobox.fields["section"] == "infobox"
    assert [hit.url for hit in hits] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://www.python.org/downloads/release/python-3130/",
        "https://news.example.com/python-313-jit",
        "https://example.org/untitled",
    ]
    first, second, third, fourth = hits
    assert first.title == "What's New In Python 3.13"
    assert first.snippet == (
        "This article explains the new features in Python 3.13, compared to 3.12."
    )
    assert first.published_at is None  # publishedDate: null
    assert second.published_at == "2024-10-07T00:00:00"
    assert third.published_at == "2024-10-08T14:30:00+00:00"
    assert third.snippet is None  # content: ""
    assert fourth.title is None  # title: ""
    assert fourth.snippet is None  # content absent
    assert fourth.published_at is None  # publishedDate absent


def test_stable_extras_are_kept_in_fields() -> None:
    _, first, *_ = parse(200, {}, load("search_ok.json"))
    assert first.fields == {
        "engine": "duckduckgo",
        "engines": ["duckduckgo", "brave", "startpage"],
        "score": 7.5,
        "category": "general",
    }


def test_an_infobox_is_the_first_result_with_its_page() -> None:
    infobox, *_ = parse(200, {}, load("search_ok.json"))
    assert infobox.title == "Python (programming language)"
    assert infobox.url == "https://en.wikipedia.org/wiki/Python_(programming_language)"
    assert infobox.snippet == "Python is a high-level, general-purpose programming language."
    assert infobox.fields == {"section": "infobox", "engines": ["wikipedia"]}


def test_answers_are_results_after_the_infoboxes() -> None:
    body = load("search_ok.json")
    body["answers"] = [
        {
            "answer": "Python 3.13.0 was released on October 7, 2024.",
            "engine": "duckduckgo",
            "url": "https://www.python.org/downloads/release/python-3130/",
        },
        "3.13",  # older instances send plain strings
    ]
    body["infoboxes"][0]["attributes"] = [
        {"label": "Designed by", "value": "Guido van Rossum"},
        {"label": "Website", "value": ""},
    ]
    infobox, answer, bare, first, *_ = parse(200, {}, body)

    assert infobox.fields["attributes"] == {"Designed by": "Guido van Rossum"}
    assert answer.snippet == "Python 3.13.0 was released on October 7, 2024."
    assert answer.url == "https://www.python.org/downloads/release/python-3130/"
    assert answer.fields == {"section": "answer", "engine": "duckduckgo"}
    assert (bare.snippet, bare.url, bare.title) == ("3.13", None, None)
    assert first.url == "https://docs.python.org/3/whatsnew/3.13.html"


def test_suggestions_and_corrections_are_not_results() -> None:
    body = load("search_ok.json") | {"suggestions": ["python 3.14"], "corrections": ["pyton"]}
    assert len(parse(200, {}, body)) == 5


def test_chinese_results_are_kept_verbatim() -> None:
    (hit,) = parse(200, {}, load("search_zh.json"))
    assert hit.title == "人工智能 - 维基百科，自由的百科全书"
    assert hit.url == "https://zh.wikipedia.org/wiki/%E4%BA%BA%E5%B7%A5%E6%99%BA%E8%83%BD"
    assert hit.snippet is not None
    assert hit.snippet.startswith("人工智能（英语")
    assert hit.published_at == "2025-03-01T00:00:00"


def test_empty_result_list_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_no_results_because_every_engine_failed_is_an_outage() -> None:
    error = raised(ProviderUnavailable, parse, 200, {}, load("search_engines_failed.json"))
    assert "google: CAPTCHA" in error.message
    assert "duckduckgo: timeout" in error.message
    assert error.category == "recoverable"


# --- parse_response: failures ------------------------------------------------------------


def test_http_401_is_auth_failed() -> None:
    error = raised(AuthFailed, parse, 401, {}, "Unauthorized")
    assert error.http_status == 401


def test_http_403_names_the_json_format_setting() -> None:
    with pytest.raises(AuthFailed, match=r"search\.formats") as caught:
        parse(403, {}, "<html><title>403 Forbidden</title></html>")
    assert caught.value.http_status == 403
    assert caught.value.category == "non_recoverable"


def test_http_429_carries_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"Retry-After": "30"}, "Too Many Requests")
    assert error.retry_after_s == 30.0
    assert error.http_status == 429


@pytest.mark.parametrize("status", [502, 503])
def test_gateway_errors_are_unavailable(status: int) -> None:
    error = raised(ProviderUnavailable, parse, status, {}, "<html>Bad Gateway</html>")
    assert error.http_status == status


def test_http_500_is_bad_response() -> None:
    error = raised(BadResponse, parse, 500, {}, "Internal Server Error")
    assert error.http_status == 500


def test_http_400_is_rejected() -> None:
    with pytest.raises(ProviderRejected):
        parse(400, {}, "Invalid value for time_range")


def test_html_page_with_status_200_is_bad_response() -> None:
    page = "<!DOCTYPE html><html><body><form>Please solve the CAPTCHA</form></body></html>"
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {"content-type": "text/html"}, page)


def test_results_that_are_not_a_list_are_bad_response() -> None:
    with pytest.raises(BadResponse, match="results"):
        parse(200, {}, load("results_not_list.json"))


def test_object_without_results_is_bad_response() -> None:
    with pytest.raises(BadResponse):
        parse(200, {}, {"query": "python"})


def test_non_object_entries_are_skipped() -> None:
    body = {"results": ["junk", None, {"url": "https://a.example/", "title": "A"}]}
    (hit,) = parse(200, {}, body)
    assert hit.url == "https://a.example/"
