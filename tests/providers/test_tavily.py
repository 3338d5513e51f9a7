"""Tavily provider: request building and parsing of recorded POST /search bodies.

The bodies under tests/data/tavily/ are written by hand from the API reference
(https://docs.tavily.com/documentation/api-reference/endpoint/search: the 200 schema
and the documented error bodies; the bare `{"error": …}` 429 body is the one of
https://docs.tavily.com/documentation/rate-limits), with realistic values.
`published_date` follows the RFC 1123 form Tavily sends with topic `news`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import body_loader, cassette_entries, data_dir, parser, query_maker, raised
from pytest_httpserver import HTTPServer

from sleuth.contract import TimeRange
from sleuth.errors import (
    AuthFailed,
    BadResponse,
    ConfigError,
    MissingApiKey,
    ProviderRejected,
    ProviderUnavailable,
    QuotaExceeded,
    RateLimited,
)
from sleuth.mapping_files import builtin_mapping
from sleuth.providers import tavily
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport

MAPPING = builtin_mapping("tavily")
DATA = data_dir("tavily")
load = body_loader(DATA)
parse = parser(tavily, MAPPING)
KEY = "tvly-dev-0123456789abcdef"
URL = "https://api.tavily.com/search"
SETTINGS = ProviderSettings(base_url=URL, api_key=KEY)
QUESTION = "What's new in Python 3.13?"


def settings(**options: Any) -> ProviderSettings:
    return ProviderSettings(base_url=URL, api_key=KEY, options=options)


query = query_maker(QUESTION)


# --- build_request ---------------------------------------------------------------------


def test_request_is_a_json_post_with_the_key_in_the_bearer_header() -> None:
    request = tavily.build_request(query(), SETTINGS)

    assert request.method == "POST"
    assert request.url == URL
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Content-Type"] == "application/json"
    assert request.params == {}
    assert request.json == {
        "query": QUESTION,
        "search_depth": "basic",
        "topic": "general",
        "max_results": 5,
        "include_answer": False,
        "include_raw_content": False,
        "include_images": False,
    }


def test_the_key_is_only_in_the_header() -> None:
    request = tavily.build_request(query(), SETTINGS)
    assert KEY not in json.dumps(request.json)
    assert "api_key" not in request.json
    assert all(KEY not in value for value in request.params.values())


def test_default_url_when_none_is_configured() -> None:
    request = tavily.build_request(query(), ProviderSettings(base_url="", api_key=KEY))
    assert request.url == "https://api.tavily.com/search"


def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey, match="api_key_env"):
        tavily.build_request(query(), ProviderSettings(base_url=URL))


@pytest.mark.parametrize(("asked", "sent"), [(1, 1), (5, 5), (20, 20), (50, 20), (0, 1)])
def test_max_results_is_clamped_to_the_documented_range(asked: int, sent: int) -> None:
    request = tavily.build_request(query(max_results=asked), SETTINGS)
    assert request.json["max_results"] == sent


@pytest.mark.parametrize(
    ("time_range", "expected"),
    [("past_week", "week"), ("past_month", "month"), ("past_year", "year")],
)
def test_time_range_is_mapped(time_range: TimeRange, expected: str) -> None:
    request = tavily.build_request(query(time_range=time_range), SETTINGS)
    assert request.json["time_range"] == expected


def test_time_range_any_is_omitted() -> None:
    assert "time_range" not in tavily.build_request(query(time_range="any"), SETTINGS).json


def test_domain_filter_becomes_include_domains() -> None:
    request = tavily.build_request(
        query(domain_filter=("docs.python.org", "peps.python.org")), SETTINGS
    )
    assert request.json["include_domains"] == ["docs.python.org", "peps.python.org"]
    assert "site:" not in request.json["query"]


def test_no_domain_filter_sends_no_include_domains() -> None:
    assert "include_domains" not in tavily.build_request(query(), SETTINGS).json


@pytest.mark.parametrize("language", ["zh", "en"])
def test_language_is_not_sent(language: str) -> None:
    request = tavily.build_request(query("人工智能最近有什么进展？", language=language), SETTINGS)
    assert request.json["query"] == "人工智能最近有什么进展？"
    assert not {"language", "country"} & set(request.json)


def test_options_are_passed_through() -> None:
    request = tavily.build_request(
        query(),
        settings(
            search_depth="advanced", topic="news", country="united states", chunks_per_source=2
        ),
    )
    assert request.json["search_depth"] == "advanced"
    assert request.json["topic"] == "news"
    assert request.json["country"] == "united states"
    assert request.json["chunks_per_source"] == 2


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"search_depth": "deep"}, "search_depth"),
        ({"topic": "sports"}, "topic"),
        ({"chunks_per_source": 5}, "chunks_per_source"),
        ({"chunks_per_source": True}, "chunks_per_source"),
    ],
)
def test_bad_options_are_config_errors(options: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        tavily.build_request(query(), settings(**options))


def test_info_declares_native_capabilities() -> None:
    info = tavily.PROVIDER.info
    assert info.name == "tavily"
    assert info.docs_url == "https://docs.tavily.com/documentation/api-reference/endpoint/search"
    assert info.needs_key
    assert (info.time_range, info.domain_filter, info.language) == (True, True, False)
    assert info.query_style == "natural"
    assert info.max_results == 20


# --- parse_response: good bodies ---------------------------------------------------------


def test_results_keep_titles_urls_and_snippets_as_sent() -> None:
    hits = parse(200, {"content-type": "application/json"}, load("search_ok.json"))

    assert [hit.url for hit in hits] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://www.python.org/downloads/release/python-3130/",
        "https://realpython.com/python313-new-features/",
        "https://peps.python.org/pep-0719/",
    ]
    first, second, third, fourth = hits
    assert first.title == "What's New In Python 3.13 — Python 3.13.1 documentation"
    assert first.snippet == (
        "This article explains the new features in Python 3.13, compared to 3.12. "
        "Python 3.13 was released on October 7, 2024. For full details, see the changelog."
    )
    assert second.title == "Python Release Python 3.13.0 | Python.org"
    assert third.snippet is None  # content: ""
    assert fourth.snippet is None  # content absent
    assert fourth.title == "PEP 719 – Python 3.13 Release Schedule | peps.python.org"


def test_a_general_search_carries_no_date() -> None:
    hits = parse(200, {}, load("search_ok.json"))
    assert [hit.published_at for hit in hits] == [None, None, None, None]


def test_score_answer_images_and_favicon_are_not_kept() -> None:
    hits = parse(200, {}, load("search_ok.json"))
    assert [dict(hit.fields) for hit in hits] == [{}, {}, {}, {}]
    assert all(hit.fell_back == () for hit in hits)
    assert all("Python 3.13, released on" not in (hit.snippet or "") for hit in hits)


def test_news_dates_are_kept_exactly_as_sent() -> None:
    first, second, third = parse(200, {}, load("search_news.json"))
    assert first.published_at == "Tue, 08 Oct 2024 14:30:00 GMT"
    assert second.published_at == "Mon, 07 Oct 2024 19:05:12 GMT"
    assert third.published_at is None  # published_date absent
    assert third.url == "https://news.example.com/python-313-repl"


def test_a_renamed_field_is_read_once_the_mapping_names_it() -> None:
    body = {
        "query": QUESTION,
        "results": [
            {
                "title": "What's New In Python 3.13",
                "url": "https://docs.python.org/3/whatsnew/3.13.html",
                "snippet": "This article explains the new features in Python 3.13.",
            }
        ],
    }
    (before,) = parse(200, {}, body)
    assert before.snippet is None

    fields = {**MAPPING.fields, "snippet": ["content", "snippet"]}
    (after,) = parse(200, {}, body, MAPPING.model_copy(update={"fields": fields}))
    assert after.snippet == "This article explains the new features in Python 3.13."
    assert after.fell_back == ("snippet",)


def test_empty_result_list_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_non_object_entries_are_skipped() -> None:
    body = {"results": ["junk", None, {"url": "https://a.example/", "title": "A"}]}
    (hit,) = parse(200, {}, body)
    assert hit.url == "https://a.example/"
    assert hit.snippet is None


def test_cassette_line_is_a_documented_body_for_the_shared_query() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert (entry["provider"], entry["query"], entry["status"]) == (
        "tavily",
        "what's new in python 3.13",
        200,
    )
    hits = parse(entry["status"], entry["headers"], entry["body"])
    assert "http://docs.python.org/3/whatsnew/3.13.html" in [hit.url for hit in hits]
    assert any(hit.snippet is None for hit in hits)


# --- parse_response: failures ------------------------------------------------------------


def test_http_400_is_rejected_with_the_documented_message() -> None:
    error = raised(ProviderRejected, parse, 400, {}, load("error_400.json"), match="Invalid topic")
    assert error.http_status == 400
    assert error.category == "non_recoverable"


def test_http_401_is_auth_failed() -> None:
    with pytest.raises(AuthFailed, match="missing or invalid API key") as caught:
        parse(401, {}, load("error_401.json"))
    assert caught.value.http_status == 401


def test_http_403_is_auth_failed() -> None:
    error = raised(AuthFailed, parse, 403, {}, {"detail": {"error": "Forbidden"}})
    assert error.http_status == 403


def test_http_403_without_envelope_is_auth_failed() -> None:
    with pytest.raises(AuthFailed):
        parse(403, {"content-type": "text/html"}, "<html><h1>403 Forbidden</h1></html>")


def test_http_429_carries_retry_after() -> None:
    with pytest.raises(RateLimited, match="excessive requests") as caught:
        parse(429, {"retry-after": "60"}, load("error_429.json"))
    assert caught.value.retry_after_s == 60.0
    assert caught.value.http_status == 429
    assert caught.value.category == "recoverable"


def test_http_429_without_envelope_carries_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"Retry-After": "30"}, "Too Many Requests")
    assert error.retry_after_s == 30.0


@pytest.mark.parametrize(
    ("status", "name", "hint"),
    [(432, "error_432.json", "upgrade the plan"), (433, "error_433.json", "dashboard")],
)
def test_usage_limits_are_rejected_not_retried(status: int, name: str, hint: str) -> None:
    error = raised(QuotaExceeded, parse, status, {}, load(name), match=hint)
    assert error.http_status == status
    assert error.category == "non_recoverable"


def test_http_500_with_tavily_envelope_is_unavailable() -> None:
    with pytest.raises(ProviderUnavailable, match="Internal Server Error") as caught:
        parse(500, {}, load("error_500.json"))
    assert caught.value.http_status == 500
    assert caught.value.category == "recoverable"


def test_http_500_without_envelope_is_bad_response() -> None:
    error = raised(BadResponse, parse, 500, {}, "Internal Server Error")
    assert error.http_status == 500


@pytest.mark.parametrize("status", [502, 503, 504])
def test_gateway_errors_are_unavailable(status: int) -> None:
    with pytest.raises(ProviderUnavailable) as caught:
        parse(status, {"content-type": "text/html"}, "<html>Service Unavailable</html>")
    assert caught.value.http_status == status


def test_validation_error_list_is_rejected_with_its_messages() -> None:
    body = {"detail": [{"loc": ["body", "max_results"], "msg": "Input should be <= 20"}]}
    error = raised(ProviderRejected, parse, 422, {}, body, match="Input should be <= 20")
    assert error.http_status == 422


def test_html_page_with_status_200_is_bad_response() -> None:
    page = "<!DOCTYPE html><html><body>Just a moment... checking your browser</body></html>"
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {"content-type": "text/html"}, page)


def test_results_that_are_not_a_list_are_bad_response() -> None:
    with pytest.raises(BadResponse, match="results"):
        parse(200, {}, load("results_not_list.json"))


def test_object_without_results_is_bad_response_naming_the_error() -> None:
    with pytest.raises(BadResponse, match="Query is too long"):
        parse(200, {}, {"detail": {"error": "Query is too long. Max query length is 400."}})


# --- end to end over HTTP ----------------------------------------------------------------


async def test_request_and_parse_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    local = ProviderSettings(base_url=httpserver.url_for("/search"), api_key=KEY)
    request = tavily.build_request(
        query(time_range="past_year", domain_filter=("python.org",)), local
    )
    httpserver.expect_request(
        "/search",
        method="POST",
        headers={"Authorization": f"Bearer {KEY}"},
        query_string="",
        json={
            "query": QUESTION,
            "search_depth": "basic",
            "topic": "general",
            "max_results": 5,
            "include_answer": False,
            "include_raw_content": False,
            "include_images": False,
            "time_range": "year",
            "include_domains": ["python.org"],
        },
    ).respond_with_json(load("search_ok.json"))
    response = await http_transport.send("tavily", QUESTION, request, 3.0)

    hits = parse(response.status, response.headers, response.body)
    assert response.status == 200
    assert hits[0].url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert len(hits) == 4


async def test_rate_limit_over_http(httpserver: HTTPServer, http_transport: HttpTransport) -> None:
    local = ProviderSettings(base_url=httpserver.url_for("/search"), api_key=KEY)
    httpserver.expect_request("/search", method="POST").respond_with_json(
        load("error_429.json"), status=429, headers={"retry-after": "60"}
    )
    response = await http_transport.send(
        "tavily", QUESTION, tavily.build_request(query(), local), 3.0
    )
    error = raised(RateLimited, parse, response.status, response.headers, response.body)
    assert error.retry_after_s == 60.0
