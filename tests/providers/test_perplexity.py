"""Perplexity Search API provider: request building and parsing of POST /search bodies.

The bodies under tests/data/perplexity/ were written by hand after the OpenAPI schemas
of the API reference (https://docs.perplexity.ai/api-reference/search-post):
`ApiSearchResponse`/`ApiSearchPage`, `HTTPValidationError` (422) and `ErrorInfo` (the
messages of the 401 and 429 bodies are ours: the reference gives only their shape).
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
    RateLimited,
)
from sleuth.mapping_files import builtin_mapping
from sleuth.providers import get, perplexity
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport, ReplayTransport

MAPPING = builtin_mapping("perplexity")
DATA = data_dir("perplexity")
load = body_loader(DATA)
parse = parser(perplexity, MAPPING)
KEY = "pplx-test-0123456789"
URL = "https://api.perplexity.ai/search"
SETTINGS = ProviderSettings(base_url=URL, api_key=KEY)
QUERY = "What's new in Python 3.13?"
query = query_maker(QUERY)


def test_registry_and_default_settings_pick_the_module_up() -> None:
    assert get("perplexity") is perplexity.PROVIDER
    conf = Settings().providers["perplexity"]
    assert (conf.base_url, conf.api_key_env) == (URL, "PERPLEXITY_API_KEY")


def test_request_is_a_json_post_with_a_bearer_key_and_the_language() -> None:
    request = perplexity.build_request(query(), SETTINGS)
    assert (request.method, request.url) == ("POST", URL)
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.json == {"query": QUERY, "max_results": 5, "search_language_filter": ["en"]}


def test_chinese_query_filters_on_chinese() -> None:
    request = perplexity.build_request(query("Python 3.13 新特性", language="zh"), SETTINGS)
    assert request.json["search_language_filter"] == ["zh"]


def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey, match=r"providers\.perplexity\.api_key_env"):
        perplexity.build_request(query(), ProviderSettings(base_url=URL))


@pytest.mark.parametrize(
    ("time_range", "recency"),
    [("past_week", "week"), ("past_month", "month"), ("past_year", "year")],
)
def test_time_range_becomes_search_recency_filter(time_range: TimeRange, recency: str) -> None:
    request = perplexity.build_request(query(time_range=time_range), SETTINGS)
    assert request.json["search_recency_filter"] == recency


def test_domain_filter_is_a_list_of_at_most_20() -> None:
    domains = tuple(f"d{n}.example" for n in range(30))
    request = perplexity.build_request(query(domain_filter=domains), SETTINGS)
    assert request.json["search_domain_filter"] == list(domains[:20])


@pytest.mark.parametrize(("asked", "sent"), [(0, 1), (10, 10), (50, 20)])
def test_max_results_stays_in_1_to_20(asked: int, sent: int) -> None:
    assert perplexity.build_request(query(max_results=asked), SETTINGS).json["max_results"] == sent


def test_options_are_sent_and_checked() -> None:
    settings = ProviderSettings(
        base_url=URL, api_key=KEY, options={"country": "cn", "max_tokens_per_page": 512}
    )
    body = perplexity.build_request(query(), settings).json
    assert (body["country"], body["max_tokens_per_page"]) == ("CN", 512)
    for bad, field in (({"country": "China"}, "country"), ({"max_tokens_per_page": 0}, "max_tok")):
        with pytest.raises(ConfigError, match=f"options.{field}"):
            perplexity.build_request(query(), ProviderSettings(URL, api_key=KEY, options=bad))


def test_results_keep_title_url_snippet_and_publication_date() -> None:
    docs, release, pep = parse(200, {"content-type": "application/json"}, load("search_ok.json"))
    assert docs.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert docs.published_at == "2024-10-07"
    assert docs.fields == {"modified_at": "2025-02-04"}
    assert release.fields == {}  # last_updated: null
    assert pep.published_at is None  # date: null; last_updated is not a publication date
    assert pep.fields["modified_at"] == "2025-01-20"


def test_empty_result_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_cassette_replays_the_documented_body() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert (entry["provider"], entry["query"]) == ("perplexity", QUERY)
    assert entry["body"] == load("search_ok.json")


async def test_cassette_answers_through_the_replay_transport() -> None:
    transport = ReplayTransport.from_file(DATA / "cassette.jsonl")
    request = perplexity.build_request(query(), SETTINGS)
    response = await transport.send("perplexity", QUERY, request, 3.0)
    assert len(parse(response.status, response.headers, response.body)) == 3


def test_422_validation_error_names_the_field() -> None:
    error = raised(ProviderRejected, parse, 422, {}, load("error_422.json"))
    assert "body.max_results: Input should be less than or equal to 20" in error.message


def test_401_is_auth_failed() -> None:
    error = raised(AuthFailed, parse, 401, {}, load("error_401.json"))
    assert "Invalid API key provided." in error.message


def test_429_is_rate_limited_with_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"Retry-After": "4"}, load("error_429.json"))
    assert error.retry_after_s == 4.0


def test_gateway_error_is_unavailable() -> None:
    raised(ProviderUnavailable, parse, 502, {}, "<html>Bad Gateway</html>")


def test_results_that_are_not_a_list_are_bad_response() -> None:
    with pytest.raises(BadResponse, match="results"):
        parse(200, {}, {"id": "x", "results": None})


async def test_request_and_parse_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/search"), api_key=KEY)
    request = perplexity.build_request(
        query(time_range="past_year", domain_filter=("python.org",)), settings
    )
    httpserver.expect_request(
        "/search",
        method="POST",
        headers={"Authorization": f"Bearer {KEY}"},
        json={
            "query": QUERY,
            "max_results": 5,
            "search_recency_filter": "year",
            "search_domain_filter": ["python.org"],
            "search_language_filter": ["en"],
        },
    ).respond_with_json(load("search_ok.json"))
    response = await http_transport.send("perplexity", QUERY, request, 3.0)
    hits = parse(response.status, response.headers, response.body)
    assert [hit.published_at for hit in hits] == ["2024-10-07", "2024-10-07", None]


async def test_rate_limit_over_http(httpserver: HTTPServer, http_transport: HttpTransport) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/search"), api_key=KEY)
    httpserver.expect_request("/search", method="POST").respond_with_json(
        load("error_429.json"), status=429, headers={"Retry-After": "2"}
    )
    request = perplexity.build_request(query(), settings)
    response = await http_transport.send("perplexity", QUERY, request, 3.0)
    error = raised(RateLimited, parse, response.status, response.headers, response.body)
    assert error.retry_after_s == 2.0
