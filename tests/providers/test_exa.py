"""Exa provider: request building and parsing of POST /search bodies.

The bodies under tests/data/exa/ were written by hand after the response example and
the SearchResponse / ErrorResponse schemas of the official docs
(https://exa.ai/docs/reference/search), with realistic values; none was recorded
from the live API.
"""

from __future__ import annotations

import json

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
from sleuth.providers import exa
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport, ReplayTransport

MAPPING = builtin_mapping("exa")
DATA = data_dir("exa")
load = body_loader(DATA)
parse = parser(exa, MAPPING)
KEY = "exa-test-key-0123456789"
URL = "https://api.exa.ai/search"
NOW = "2025-03-01T12:00:00+00:00"
SETTINGS = ProviderSettings(base_url=URL, api_key=KEY, options={"now": NOW})
QUERY = "what's new in python 3.13"
query = query_maker(QUERY)


# --- build_request ---------------------------------------------------------------------


def test_request_is_a_json_post_with_the_key_in_a_header() -> None:
    request = exa.build_request(query(), SETTINGS)

    assert request.method == "POST"
    assert request.url == "https://api.exa.ai/search"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["Content-Type"] == "application/json"
    assert request.params == {}
    assert request.json == {
        "query": "what's new in python 3.13",
        "type": "auto",
        "numResults": 5,
        "contents": {"highlights": {"maxCharacters": 1000}},
    }
    assert KEY not in json.dumps(request.json)


def test_default_endpoint_when_base_url_is_empty() -> None:
    settings = ProviderSettings(base_url="", api_key=KEY)
    assert exa.build_request(query(), settings).url == "https://api.exa.ai/search"


def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey):
        exa.build_request(query(), ProviderSettings(base_url=URL))


@pytest.mark.parametrize(("asked", "sent"), [(1, 1), (5, 5), (20, 20), (250, 100), (0, 1)])
def test_max_results_becomes_num_results_within_the_documented_range(asked: int, sent: int) -> None:
    request = exa.build_request(query(max_results=asked), SETTINGS)
    assert request.json["numResults"] == sent


@pytest.mark.parametrize(
    ("time_range", "start"),
    [
        ("past_week", "2025-02-22T12:00:00.000Z"),
        ("past_month", "2025-01-29T12:00:00.000Z"),
        ("past_year", "2024-02-29T12:00:00.000Z"),
    ],
)
def test_time_range_becomes_start_published_date(time_range: TimeRange, start: str) -> None:
    request = exa.build_request(query(time_range=time_range), SETTINGS)
    assert request.json["startPublishedDate"] == start
    assert "endPublishedDate" not in request.json


def test_time_range_any_sends_no_date() -> None:
    assert "startPublishedDate" not in exa.build_request(query(), SETTINGS).json


def test_reference_time_in_another_zone_is_sent_in_utc() -> None:
    settings = ProviderSettings(
        base_url=URL, api_key=KEY, options={"now": "2025-03-01T20:30:15.250+08:00"}
    )
    request = exa.build_request(query(time_range="past_week"), settings)
    assert request.json["startPublishedDate"] == "2025-02-22T12:30:15.250Z"


def test_without_a_reference_time_the_clock_is_used() -> None:
    settings = ProviderSettings(base_url=URL, api_key=KEY)
    start = exa.build_request(query(time_range="past_week"), settings).json["startPublishedDate"]
    assert start.endswith("Z")
    assert len(start) == len("2025-02-22T12:00:00.000Z")


def test_bad_reference_time_is_a_config_error() -> None:
    settings = ProviderSettings(base_url=URL, api_key=KEY, options={"now": "last tuesday"})
    with pytest.raises(ConfigError, match="now"):
        exa.build_request(query(time_range="past_week"), settings)


def test_domain_filter_becomes_include_domains() -> None:
    request = exa.build_request(
        query(domain_filter=("docs.python.org", "peps.python.org")), SETTINGS
    )
    assert request.json["includeDomains"] == ["docs.python.org", "peps.python.org"]
    assert "excludeDomains" not in request.json


def test_no_domain_filter_sends_no_include_domains() -> None:
    assert "includeDomains" not in exa.build_request(query(), SETTINGS).json


@pytest.mark.parametrize("language", ["zh", "en"])
def test_language_is_not_sent_exa_has_no_such_parameter(language: str) -> None:
    request = exa.build_request(query("Python 3.13 有哪些新特性", language=language), SETTINGS)
    assert request.json["query"] == "Python 3.13 有哪些新特性"
    assert set(request.json) == {"query", "type", "numResults", "contents"}


def test_options_are_mapped_into_the_body() -> None:
    settings = ProviderSettings(
        base_url=URL,
        api_key=KEY,
        options={
            "type": "fast",
            "category": "news",
            "user_location": "CN",
            "highlights_max_characters": 400,
            "text_max_characters": 1500,
        },
    )
    body = exa.build_request(query(), settings).json
    assert body["type"] == "fast"
    assert body["category"] == "news"
    assert body["userLocation"] == "CN"
    assert body["contents"] == {
        "highlights": {"maxCharacters": 400},
        "text": {"maxCharacters": 1500},
    }


def test_text_budget_zero_asks_for_no_text() -> None:
    settings = ProviderSettings(base_url=URL, api_key=KEY, options={"text_max_characters": 0})
    assert exa.build_request(query(), settings).json["contents"] == {
        "highlights": {"maxCharacters": 1000}
    }


@pytest.mark.parametrize("value", [0, -1, 10_001, "500", True, 2.5])
def test_bad_character_budget_is_a_config_error(value: object) -> None:
    settings = ProviderSettings(
        base_url=URL, api_key=KEY, options={"highlights_max_characters": value}
    )
    with pytest.raises(ConfigError, match="highlights_max_characters"):
        exa.build_request(query(), settings)


def test_info_declares_native_capabilities() -> None:
    info = exa.PROVIDER.info
    assert info.name == "exa"
    assert info.docs_url == "https://exa.ai/docs/reference/search"
    assert info.needs_key
    assert (info.time_range, info.domain_filter, info.language) == (True, True, False)
    assert info.query_style == "natural"
    assert info.max_results == 100


# --- parse_response: good bodies ---------------------------------------------------------


def test_results_keep_titles_urls_snippets_and_dates_as_sent() -> None:
    hits = parse(200, {"content-type": "application/json"}, load("search_ok.json"))

    assert [hit.url for hit in hits] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://www.python.org/downloads/release/python-3130/",
        "https://realpython.com/python313-new-features/",
        "https://peps.python.org/pep-0719/",
        "https://lwn.net/Articles/992904/",
    ]
    docs, release, realpython, pep, lwn = hits
    assert docs.title == "What's New In Python 3.13"
    assert docs.snippet is not None
    assert docs.snippet.startswith("Python 3.13 is the latest stable release")
    assert docs.published_at == "2024-10-07T00:00:00.000Z"
    assert release.published_at == "2024-10-07T18:42:09.000Z"
    assert realpython.snippet is None  # highlights: []
    assert realpython.title == "Python 3.13: Cool New Features for You to Try"
    assert pep.published_at is None  # publishedDate absent
    assert pep.snippet == (
        "This document describes the development and release schedule for Python 3.13. "
        "3.13.0 final: Monday, 2024-10-07."
    )
    assert lwn.title is None  # title: ""
    assert lwn.published_at is None  # publishedDate: null


def test_stable_extras_are_kept_and_ids_and_scores_are_not() -> None:
    docs, release, realpython, *_ = parse(200, {}, load("search_ok.json"))
    assert docs.fields == {"favicon": "https://docs.python.org/3/_static/py.svg"}  # author null
    assert release.fields == {
        "image": "https://www.python.org/static/opengraph-icon-200x200.png",
        "favicon": "https://www.python.org/static/favicon.ico",
    }  # author ""
    assert realpython.fields["author"] == "Geir Arne Hjelle"
    for hit in (docs, release, realpython):
        assert not {"id", "score", "highlightScores", "requestId"} & set(hit.fields)


def test_snippet_falls_back_from_highlights_to_summary_to_text() -> None:
    first, second, third = parse(200, {}, load("search_fallbacks.json"))
    assert first.snippet == "Such requirements have limited their adoption..."
    assert second.snippet == (
        "HuggingGPT is a framework using ChatGPT as a central controller to orchestrate "
        "various AI models from Hugging Face to solve complex tasks."
    )
    assert third.snippet is not None
    assert third.snippet.startswith("Language models (LMs) exhibit remarkable abilities")
    assert third.published_at == "2023-02-09"  # date-only, kept as sent


def test_text_fallback_is_passed_on_whole_for_the_clean_stage_to_cut() -> None:
    body = load("search_fallbacks.json")
    long_text = "First sentence of the page. " * 200
    body["results"][2]["text"] = long_text
    assert parse(200, {}, body)[2].snippet == long_text.strip()


def test_renamed_field_is_read_after_adding_the_new_name_to_the_mapping() -> None:
    body = {"results": [{"url": "https://a.example/", "pageTitle": "A", "highlights": ["x"]}]}
    (before,) = parse(200, {}, body)
    assert before.title is None

    renamed = MAPPING.model_copy(
        update={"fields": {**MAPPING.fields, "title": ["title", "pageTitle"]}}
    )
    (after,) = exa.parse_response(200, {}, body, renamed)
    assert after.title == "A"


def test_result_without_any_snippet_source_has_no_snippet() -> None:
    body = {"results": [{"url": "https://a.example/", "title": "A"}]}
    (hit,) = parse(200, {}, body)
    assert (hit.url, hit.title, hit.snippet, hit.published_at) == (
        "https://a.example/",
        "A",
        None,
        None,
    )


def test_empty_result_list_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_non_object_entries_are_skipped() -> None:
    body = {"results": [None, "junk", {"url": "https://a.example/", "title": "A"}]}
    (hit,) = parse(200, {}, body)
    assert hit.url == "https://a.example/"


def test_cassette_replays_the_documented_body() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert entry["provider"] == "exa"
    assert entry["query"] == QUERY
    assert entry["body"] == load("search_ok.json")


async def test_cassette_answers_through_the_replay_transport() -> None:
    transport = ReplayTransport.from_file(DATA / "cassette.jsonl")
    request = exa.build_request(query(), SETTINGS)
    response = await transport.send("exa", QUERY, request, 3.0)
    hits = parse(response.status, response.headers, response.body)
    assert hits[0].url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert any(hit.snippet is None for hit in hits)


# --- parse_response: failures ------------------------------------------------------------


def test_http_401_is_auth_failed() -> None:
    error = raised(AuthFailed, parse, 401, {}, load("error_401.json"))
    assert error.http_status == 401
    assert "INVALID_API_KEY" in error.message
    assert "Invalid API key" in error.message
    assert "f2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2" in error.message  # for support


def test_http_401_without_the_envelope_is_auth_failed() -> None:
    with pytest.raises(AuthFailed):
        parse(401, {}, "Unauthorized")


def test_http_402_out_of_credits_is_quota_exceeded_not_retried() -> None:
    error = raised(QuotaExceeded, parse, 402, {}, load("error_402.json"))
    assert error.category == "non_recoverable"
    assert error.http_status == 402
    assert "NO_MORE_CREDITS" in error.message
    assert "budget" in error.message


@pytest.mark.parametrize("tag", ["API_KEY_BUDGET_EXCEEDED", "TEAM_BUDGET_EXCEEDED"])
def test_budget_tags_are_quota_exceeded(tag: str) -> None:
    with pytest.raises(QuotaExceeded, match=tag):
        parse(402, {}, {"requestId": "r", "error": "Budget exceeded", "tag": tag})


def test_no_more_credits_under_http_200_is_quota_exceeded() -> None:
    body = {"requestId": "r", "error": "You have run out of credits", "tag": "NO_MORE_CREDITS"}
    with pytest.raises(QuotaExceeded, match="NO_MORE_CREDITS"):
        parse(200, {}, body)


def test_http_403_feature_disabled_is_auth_failed() -> None:
    with pytest.raises(AuthFailed, match="FEATURE_DISABLED") as caught:
        parse(403, {}, load("error_403_feature.json"))
    assert caught.value.http_status == 403


def test_http_403_prohibited_content_is_a_refused_query_not_a_bad_key() -> None:
    with pytest.raises(ProviderRejected, match="PROHIBITED_CONTENT") as caught:
        parse(403, {}, load("error_403_prohibited.json"))
    assert caught.value.http_status == 403


def test_http_429_carries_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"retry-after": "2"}, load("error_429.json"))
    assert error.retry_after_s == 2.0
    assert error.http_status == 429
    assert "RATE_LIMIT_EXCEEDED" in error.message


def test_http_429_without_envelope_or_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"Retry-After": "7"}, "Too Many Requests")
    assert error.retry_after_s == 7.0
    error = raised(RateLimited, parse, 429, {}, load("error_429.json"))
    assert error.retry_after_s is None


def test_http_400_is_rejected_with_exas_message() -> None:
    with pytest.raises(ProviderRejected, match="INVALID_REQUEST_BODY") as caught:
        parse(400, {}, load("error_400.json"))
    assert "expected string" in caught.value.message
    assert caught.value.http_status == 400


def test_http_500_with_exas_envelope_is_unavailable() -> None:
    error = raised(ProviderUnavailable, parse, 500, {}, load("error_500.json"))
    assert error.category == "recoverable"
    assert "DEFAULT_ERROR" in error.message


def test_http_500_without_the_envelope_is_bad_response() -> None:
    error = raised(BadResponse, parse, 500, {}, "<html><body>Internal Server Error</body></html>")
    assert error.http_status == 500


@pytest.mark.parametrize("status", [502, 503, 504])
def test_gateway_errors_are_unavailable(status: int) -> None:
    error = raised(ProviderUnavailable, parse, status, {}, "<html>Service Unavailable</html>")
    assert error.http_status == status


def test_http_503_with_envelope_is_unavailable() -> None:
    body = {"requestId": "r", "error": "Service overloaded", "tag": "SERVICE_OVERLOADED"}
    with pytest.raises(ProviderUnavailable, match="SERVICE_OVERLOADED"):
        parse(503, {}, body)


def test_html_page_with_status_200_is_bad_response() -> None:
    page = "<!DOCTYPE html><html><body>Just a moment...</body></html>"
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {"content-type": "text/html"}, page)


def test_results_that_are_not_a_list_are_bad_response() -> None:
    with pytest.raises(BadResponse, match="results"):
        parse(200, {}, {"requestId": "r", "results": {"title": "A"}})


def test_object_without_results_is_bad_response() -> None:
    with pytest.raises(BadResponse, match="Unexpected"):
        parse(200, {}, {"requestId": "r", "error": "Unexpected state"})


# --- end to end over HTTP ----------------------------------------------------------------


async def test_request_and_parse_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(
        base_url=httpserver.url_for("/search"), api_key=KEY, options={"now": NOW}
    )
    request = exa.build_request(
        query(time_range="past_year", domain_filter=("python.org",)), settings
    )
    httpserver.expect_request(
        "/search",
        method="POST",
        headers={"x-api-key": KEY},
        query_string="",
        json={
            "query": QUERY,
            "type": "auto",
            "numResults": 5,
            "contents": {"highlights": {"maxCharacters": 1000}},
            "includeDomains": ["python.org"],
            "startPublishedDate": "2024-02-29T12:00:00.000Z",
        },
    ).respond_with_json(load("search_ok.json"))
    response = await http_transport.send("exa", QUERY, request, 3.0)

    hits = parse(response.status, response.headers, response.body)
    assert response.status == 200
    assert hits[0].url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert hits[0].published_at == "2024-10-07T00:00:00.000Z"


async def test_error_envelope_over_http(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/search"), api_key=KEY)
    httpserver.expect_request("/search", method="POST").respond_with_json(
        load("error_429.json"), status=429, headers={"Retry-After": "3"}
    )
    response = await http_transport.send("exa", QUERY, exa.build_request(query(), settings), 3.0)
    error = raised(RateLimited, parse, response.status, response.headers, response.body)
    assert error.retry_after_s == 3.0
