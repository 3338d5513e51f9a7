"""Firecrawl provider: request building and parsing of POST /v2/search bodies.

The bodies under tests/data/firecrawl/ were written by hand after the response shown on
the Search feature page (https://docs.firecrawl.dev/features/search) and the
`{"success": false, "error": "…"}` error envelope of the API reference; none was
recorded from the live API.
"""

from __future__ import annotations

import pytest
from helpers import body_loader, cassette_entries, data_dir, parser, query_maker, raised
from pytest_httpserver import HTTPServer

from sleuth.config import Settings
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
from sleuth.providers import firecrawl, get
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport, ReplayTransport

MAPPING = builtin_mapping("firecrawl")
DATA = data_dir("firecrawl")
load = body_loader(DATA)
parse = parser(firecrawl, MAPPING)
KEY = "fc-test-0123456789"
URL = "https://api.firecrawl.dev/v2/search"
SETTINGS = ProviderSettings(base_url=URL, api_key=KEY)
QUERY = "What's new in Python 3.13?"
query = query_maker(QUERY)


def test_registry_and_default_settings_pick_the_module_up() -> None:
    assert get("firecrawl") is firecrawl.PROVIDER
    conf = Settings().providers["firecrawl"]
    assert (conf.base_url, conf.api_key_env) == (URL, "FIRECRAWL_API_KEY")


def test_request_asks_for_web_results_only() -> None:
    request = firecrawl.build_request(query(), SETTINGS)
    assert (request.method, request.url) == ("POST", URL)
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.json == {"query": QUERY, "limit": 5, "sources": ["web"]}


def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey, match=r"providers\.firecrawl\.api_key_env"):
        firecrawl.build_request(query(), ProviderSettings(base_url=URL))


@pytest.mark.parametrize(
    ("time_range", "tbs"),
    [("past_week", "qdr:w"), ("past_month", "qdr:m"), ("past_year", "qdr:y")],
)
def test_time_range_becomes_tbs(time_range: TimeRange, tbs: str) -> None:
    assert firecrawl.build_request(query(time_range=time_range), SETTINGS).json["tbs"] == tbs


def test_country_option_is_checked() -> None:
    settings = ProviderSettings(base_url=URL, api_key=KEY, options={"country": "de"})
    assert firecrawl.build_request(query(), settings).json["country"] == "DE"
    bad = ProviderSettings(base_url=URL, api_key=KEY, options={"country": "Germany"})
    with pytest.raises(ConfigError, match=r"options\.country must be a two-letter"):
        firecrawl.build_request(query(), bad)


def test_web_results_keep_url_title_and_description() -> None:
    docs, realpython, release = parse(200, {}, load("search_ok.json"))
    assert docs.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert docs.snippet is not None and docs.snippet.startswith("This article explains")
    assert realpython.title == "Python 3.13: Cool New Features for You to Try – Real Python"
    assert release.snippet is None  # description: ""
    assert all(hit.published_at is None for hit in (docs, realpython, release))


def test_empty_result_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_cassette_replays_the_documented_body() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert (entry["provider"], entry["query"]) == ("firecrawl", QUERY)
    assert entry["body"] == load("search_ok.json")


async def test_cassette_answers_through_the_replay_transport() -> None:
    transport = ReplayTransport.from_file(DATA / "cassette.jsonl")
    request = firecrawl.build_request(query(), SETTINGS)
    response = await transport.send("firecrawl", QUERY, request, 3.0)
    assert len(parse(response.status, response.headers, response.body)) == 3


def test_402_is_quota_exceeded() -> None:
    error = raised(QuotaExceeded, parse, 402, {}, load("error_402.json"))
    assert "credits are used up" in error.message
    assert error.category == "non_recoverable"


def test_429_is_rate_limited_with_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"retry-after": "6"}, load("error_429.json"))
    assert error.retry_after_s == 6.0


def test_401_is_auth_failed() -> None:
    raised(AuthFailed, parse, 401, {}, load("error_401.json"))


def test_500_and_408_are_unavailable() -> None:
    raised(ProviderUnavailable, parse, 500, {}, load("error_500.json"))
    raised(ProviderUnavailable, parse, 408, {}, {"success": False, "error": "Request timed out"})


def test_400_is_rejected() -> None:
    body = {"success": False, "error": "Bad Request: query is required"}
    raised(ProviderRejected, parse, 400, {}, body)


def test_success_false_under_http_200_is_an_error_not_an_empty_answer() -> None:
    error = raised(
        ProviderUnavailable, parse, 200, {}, {"success": False, "error": "Search failed"}
    )
    assert "Search failed" in error.message


def test_html_page_is_bad_response() -> None:
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {}, "<html>Just a moment...</html>")


async def test_request_and_parse_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/v2/search"), api_key=KEY)
    request = firecrawl.build_request(query(time_range="past_month"), settings)
    httpserver.expect_request(
        "/v2/search",
        method="POST",
        headers={"Authorization": f"Bearer {KEY}"},
        json={"query": QUERY, "limit": 5, "sources": ["web"], "tbs": "qdr:m"},
    ).respond_with_json(load("search_ok.json"))
    response = await http_transport.send("firecrawl", QUERY, request, 3.0)
    hits = parse(response.status, response.headers, response.body)
    assert hits[0].title == "What's New In Python 3.13 — Python 3.13 documentation"


async def test_out_of_credits_over_http(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/v2/search"), api_key=KEY)
    httpserver.expect_request("/v2/search", method="POST").respond_with_json(
        load("error_402.json"), status=402
    )
    request = firecrawl.build_request(query(), settings)
    response = await http_transport.send("firecrawl", QUERY, request, 3.0)
    raised(QuotaExceeded, parse, response.status, response.headers, response.body)
