"""You.com provider: request building and parsing of GET /v1/search bodies.

The bodies under tests/data/youcom/ were written by hand after the response example of
the Web Search API quickstart (https://you.com/docs/guides/search/quickstart) and the
overview's description of `results.news`; none was recorded from the live API. No error
body is documented there, so failures are tested by status.
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
    ProviderUnavailable,
    RateLimited,
)
from sleuth.mapping_files import builtin_mapping
from sleuth.providers import get, youcom
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport, ReplayTransport

MAPPING = builtin_mapping("youcom")
DATA = data_dir("youcom")
load = body_loader(DATA)
parse = parser(youcom, MAPPING)
KEY = "ydc-test-0123456789"
URL = "https://ydc-index.io/v1/search"
SETTINGS = ProviderSettings(base_url=URL, api_key=KEY)
QUERY = "What's new in Python 3.13?"
query = query_maker(QUERY)


def test_registry_and_default_settings_pick_the_module_up() -> None:
    assert get("youcom") is youcom.PROVIDER
    conf = Settings().providers["youcom"]
    assert (conf.base_url, conf.api_key_env) == (URL, "YDC_API_KEY")


def test_request_is_a_get_with_the_key_in_a_header() -> None:
    request = youcom.build_request(query(), SETTINGS)
    assert (request.method, request.url) == ("GET", URL)
    assert request.headers["X-API-Key"] == KEY
    assert request.params == {"query": QUERY, "count": "5", "language": "EN"}
    assert request.json is None


def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey, match=r"providers\.youcom\.api_key_env"):
        youcom.build_request(query(), ProviderSettings(base_url=URL))


@pytest.mark.parametrize(
    ("time_range", "freshness"),
    [("past_week", "week"), ("past_month", "month"), ("past_year", "year")],
)
def test_time_range_becomes_freshness(time_range: TimeRange, freshness: str) -> None:
    request = youcom.build_request(query(time_range=time_range), SETTINGS)
    assert request.params["freshness"] == freshness


def test_options_are_sent_and_checked() -> None:
    settings = ProviderSettings(
        base_url=URL, api_key=KEY, options={"country": "gb", "safesearch": "strict"}
    )
    params = youcom.build_request(query(), settings).params
    assert (params["country"], params["safesearch"]) == ("GB", "strict")
    bad = ProviderSettings(base_url=URL, api_key=KEY, options={"safesearch": "none"})
    with pytest.raises(ConfigError, match="safesearch must be one of off, moderate, strict"):
        youcom.build_request(query(), bad)


def test_web_results_first_then_news_marked_as_news() -> None:
    docs, realpython, lwn = parse(200, {}, load("search_ok.json"))
    assert docs.snippet is not None and docs.snippet.startswith("Python 3.13 is the latest")
    assert docs.published_at == "2024-10-07T00:00:00"
    assert realpython.snippet is not None and realpython.snippet.startswith("Python 3.13 comes")
    assert "snippet" in realpython.fell_back  # snippets: [] -> description
    assert realpython.published_at is None
    assert lwn.fields["section"] == "news"
    assert lwn.published_at == "2024-10-08T09:15:00"
    assert "section" not in docs.fields


def test_empty_result_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_cassette_replays_the_documented_body() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert (entry["provider"], entry["query"]) == ("youcom", QUERY)
    assert entry["body"] == load("search_ok.json")


async def test_cassette_answers_through_the_replay_transport() -> None:
    transport = ReplayTransport.from_file(DATA / "cassette.jsonl")
    response = await transport.send("youcom", QUERY, youcom.build_request(query(), SETTINGS), 3.0)
    assert len(parse(response.status, response.headers, response.body)) == 3


def test_statuses_decide_the_error() -> None:
    raised(AuthFailed, parse, 401, {}, {"message": "Unauthorized"})
    error = raised(RateLimited, parse, 429, {"Retry-After": "5"}, "Too Many Requests")
    assert error.retry_after_s == 5.0
    raised(ProviderUnavailable, parse, 503, {}, "<html>unavailable</html>")


def test_web_that_is_not_a_list_is_bad_response() -> None:
    with pytest.raises(BadResponse, match=r"results\.web"):
        parse(200, {}, {"results": {"web": {"url": "x"}}})


async def test_request_and_parse_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/v1/search"), api_key=KEY)
    request = youcom.build_request(query(time_range="past_month"), settings)
    httpserver.expect_request(
        "/v1/search",
        method="GET",
        headers={"X-API-Key": KEY},
        query_string={"query": QUERY, "count": "5", "freshness": "month", "language": "EN"},
    ).respond_with_json(load("search_ok.json"))
    response = await http_transport.send("youcom", QUERY, request, 3.0)
    hits = parse(response.status, response.headers, response.body)
    assert [hit.url for hit in hits] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://realpython.com/python313-new-features/",
        "https://lwn.net/Articles/992904/",
    ]


async def test_rate_limit_over_http(httpserver: HTTPServer, http_transport: HttpTransport) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/v1/search"), api_key=KEY)
    httpserver.expect_request("/v1/search", method="GET").respond_with_data(
        "Too Many Requests", status=429, headers={"Retry-After": "2"}
    )
    request = youcom.build_request(query(), settings)
    response = await http_transport.send("youcom", QUERY, request, 3.0)
    error = raised(RateLimited, parse, response.status, response.headers, response.body)
    assert error.retry_after_s == 2.0
