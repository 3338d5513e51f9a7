"""Linkup provider: request building and parsing of POST /v1/search bodies.

The success bodies under tests/data/linkup/ follow the response example of the API
reference (https://docs.linkup.so/api-reference/search/search). The error bodies use
the envelope of the Errors page (https://docs.linkup.so/pages/documentation/development/errors);
only the VALIDATION_ERROR body is that page's own example: the other codes and
messages are ours, written after its table of statuses and reasons.
"""

from __future__ import annotations

import pytest
from helpers import body_loader, cassette_entries, data_dir, parser, query_maker, raised
from pytest_httpserver import HTTPServer

from sleuth.config import Settings
from sleuth.contract import TimeRange
from sleuth.errors import (
    AuthFailed,
    ConfigError,
    MissingApiKey,
    ProviderRejected,
    ProviderUnavailable,
    QuotaExceeded,
    RateLimited,
)
from sleuth.mapping_files import builtin_mapping
from sleuth.providers import get, linkup
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport, ReplayTransport

MAPPING = builtin_mapping("linkup")
DATA = data_dir("linkup")
load = body_loader(DATA)
parse = parser(linkup, MAPPING)
KEY = "linkup-test-0123456789"
URL = "https://api.linkup.so/v1/search"
NOW = "2025-03-01T12:00:00+00:00"
SETTINGS = ProviderSettings(base_url=URL, api_key=KEY, options={"now": NOW})
QUERY = "What's new in Python 3.13?"
query = query_maker(QUERY)


def test_registry_and_default_settings_pick_the_module_up() -> None:
    assert get("linkup") is linkup.PROVIDER
    conf = Settings().providers["linkup"]
    assert (conf.base_url, conf.api_key_env) == (URL, "LINKUP_API_KEY")


def test_request_asks_for_search_results_not_an_answer() -> None:
    request = linkup.build_request(query(), SETTINGS)
    assert (request.method, request.url) == ("POST", URL)
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.json == {
        "q": QUERY,
        "depth": "standard",
        "outputType": "searchResults",
        "includeImages": False,
        "maxResults": 5,
    }


def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey, match=r"providers\.linkup\.api_key_env"):
        linkup.build_request(query(), ProviderSettings(base_url=URL))


@pytest.mark.parametrize(
    ("time_range", "since"),
    [("past_week", "2025-02-22"), ("past_month", "2025-01-30"), ("past_year", "2024-03-01")],
)
def test_time_range_becomes_from_date(time_range: TimeRange, since: str) -> None:
    assert linkup.build_request(query(time_range=time_range), SETTINGS).json["fromDate"] == since


def test_domain_filter_becomes_include_domains() -> None:
    request = linkup.build_request(query(domain_filter=("python.org", "peps.python.org")), SETTINGS)
    assert request.json["includeDomains"] == ["python.org", "peps.python.org"]


def test_bad_options_name_the_field_and_the_allowed_values() -> None:
    bad = ProviderSettings(base_url=URL, api_key=KEY, options={"depth": "fast"})
    with pytest.raises(ConfigError, match="depth must be one of standard, deep"):
        linkup.build_request(query(), bad)
    bad = ProviderSettings(base_url=URL, api_key=KEY, options={"now": "yesterday"})
    with pytest.raises(ConfigError, match=r"options\.now must be an ISO 8601 time"):
        linkup.build_request(query(time_range="past_week"), bad)


def test_text_results_keep_name_url_and_content() -> None:
    docs, pep = parse(200, {}, load("search_ok.json"))
    assert docs.title == "What's New In Python 3.13 — Python 3.13 documentation"
    assert docs.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert pep.snippet is not None and "JIT compiler" in pep.snippet
    assert docs.published_at is None


def test_image_entries_are_skipped() -> None:
    body = load("search_ok.json")
    body["results"].append({"type": "image", "name": "logo", "url": "https://a.example/x.png"})
    assert len(parse(200, {}, body)) == 2


def test_empty_result_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_400_no_result_is_an_empty_answer_not_a_failure() -> None:
    assert parse(400, {}, load("error_400_no_result.json")) == []


def test_cassette_replays_the_documented_body() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert (entry["provider"], entry["query"]) == ("linkup", QUERY)
    assert entry["body"] == load("search_ok.json")


async def test_cassette_answers_through_the_replay_transport() -> None:
    transport = ReplayTransport.from_file(DATA / "cassette.jsonl")
    response = await transport.send("linkup", QUERY, linkup.build_request(query(), SETTINGS), 3.0)
    assert len(parse(response.status, response.headers, response.body)) == 2


def test_validation_error_names_the_field() -> None:
    error = raised(ProviderRejected, parse, 400, {}, load("error_400_validation.json"))
    assert "VALIDATION_ERROR" in error.message
    assert "outputType: outputType must be one of" in error.message


def test_out_of_credit_429_is_quota_exceeded() -> None:
    error = raised(QuotaExceeded, parse, 429, {}, load("error_429_credit.json"))
    assert error.category == "non_recoverable"


def test_concurrency_429_is_rate_limited_with_retry_after() -> None:
    error = raised(
        RateLimited, parse, 429, {"retry-after": "3"}, load("error_429_concurrency.json")
    )
    assert error.retry_after_s == 3.0


def test_401_is_auth_failed() -> None:
    raised(AuthFailed, parse, 401, {}, load("error_401.json"))


def test_500_is_unavailable_with_its_own_status() -> None:
    error = raised(ProviderUnavailable, parse, 500, {}, load("error_500.json"))
    assert error.http_status == 500


async def test_request_and_parse_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(
        base_url=httpserver.url_for("/v1/search"), api_key=KEY, options={"now": NOW}
    )
    request = linkup.build_request(
        query(time_range="past_week", domain_filter=("python.org",)), settings
    )
    httpserver.expect_request(
        "/v1/search",
        method="POST",
        headers={"Authorization": f"Bearer {KEY}"},
        json={
            "q": QUERY,
            "depth": "standard",
            "outputType": "searchResults",
            "includeImages": False,
            "maxResults": 5,
            "fromDate": "2025-02-22",
            "includeDomains": ["python.org"],
        },
    ).respond_with_json(load("search_ok.json"))
    response = await http_transport.send("linkup", QUERY, request, 3.0)
    hits = parse(response.status, response.headers, response.body)
    assert [hit.url for hit in hits][1] == "https://peps.python.org/pep-0744/"


async def test_out_of_credit_over_http(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/v1/search"), api_key=KEY)
    httpserver.expect_request("/v1/search", method="POST").respond_with_json(
        load("error_429_credit.json"), status=429
    )
    request = linkup.build_request(query(), settings)
    response = await http_transport.send("linkup", QUERY, request, 3.0)
    raised(QuotaExceeded, parse, response.status, response.headers, response.body)
