"""Kagi Search API (v0) provider: request building and parsing of GET /search bodies.

The bodies under tests/data/kagi/ were written by hand after the Search API page
(https://help.kagi.com/kagi/api/search.html) and the Response Format page's envelope,
error object and error-code table (messages as the table names them); none was
recorded from the live API. The pages give no HTTP status per error code, so each is
classified by its code, whatever the status.
"""

from __future__ import annotations

import pytest
from helpers import body_loader, cassette_entries, data_dir, parser, query_maker, raised
from pytest_httpserver import HTTPServer

from sleuth.config import Settings
from sleuth.errors import (
    AuthFailed,
    BadResponse,
    MissingApiKey,
    ProviderError,
    ProviderRejected,
    ProviderUnavailable,
    QuotaExceeded,
)
from sleuth.mapping_files import builtin_mapping
from sleuth.providers import get, kagi
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport, ReplayTransport

MAPPING = builtin_mapping("kagi")
DATA = data_dir("kagi")
load = body_loader(DATA)
parse = parser(kagi, MAPPING)
KEY = "kagi-test-token-0123456789"
URL = "https://kagi.com/api/v0/search"
SETTINGS = ProviderSettings(base_url=URL, api_key=KEY)
QUERY = "What's new in Python 3.13?"
query = query_maker(QUERY)


def test_registry_and_default_settings_pick_the_module_up() -> None:
    assert get("kagi") is kagi.PROVIDER
    conf = Settings().providers["kagi"]
    assert (conf.base_url, conf.api_key_env) == (URL, "KAGI_API_KEY")
    info = kagi.INFO
    assert (info.time_range, info.domain_filter, info.language) == (False, False, False)


def test_request_is_a_get_with_a_bot_token() -> None:
    request = kagi.build_request(query(max_results=80), SETTINGS)
    assert (request.method, request.url) == ("GET", URL)
    assert request.headers["Authorization"] == f"Bot {KEY}"
    assert request.params == {"q": QUERY, "limit": "50"}


def test_missing_token_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey, match=r"providers\.kagi\.api_key_env"):
        kagi.build_request(query(), ProviderSettings(base_url=URL))


def test_results_are_the_t0_objects_and_related_searches_are_left_out() -> None:
    docs, release = parse(200, {}, load("search_ok.json"))
    assert docs.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert docs.published_at == "2024-10-07T00:00:00Z"
    assert release.published_at is None
    assert release.fields == {"thumbnail": "/proxy/python-logo.png?c=Zm9v"}


def test_empty_result_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_cassette_replays_the_documented_body() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert (entry["provider"], entry["query"]) == ("kagi", QUERY)
    assert entry["body"] == load("search_ok.json")


async def test_cassette_answers_through_the_replay_transport() -> None:
    transport = ReplayTransport.from_file(DATA / "cassette.jsonl")
    response = await transport.send("kagi", QUERY, kagi.build_request(query(), SETTINGS), 3.0)
    assert len(parse(response.status, response.headers, response.body)) == 2


@pytest.mark.parametrize(
    ("name", "kind", "text"),
    [
        ("error_malformed.json", ProviderRejected, "Missing q parameter"),
        ("error_unauthorized.json", AuthFailed, "Unauthorized"),
        ("error_no_billing.json", QuotaExceeded, "No billing information"),
        ("error_insufficient_credit.json", QuotaExceeded, "Insufficient credit"),
        ("error_internal.json", ProviderUnavailable, "Internal error"),
    ],
)
@pytest.mark.parametrize("status", [200, 400])
def test_each_documented_error_code_is_classified_whatever_the_status(
    name: str, kind: type[ProviderError], text: str, status: int
) -> None:
    error = raised(kind, parse, status, {}, load(name))
    assert text in error.message
    assert type(error) is kind


def test_status_without_the_envelope_decides() -> None:
    raised(AuthFailed, parse, 401, {}, "Unauthorized")


def test_html_page_is_bad_response() -> None:
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {}, "<html>maintenance</html>")


async def test_request_and_parse_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/api/v0/search"), api_key=KEY)
    httpserver.expect_request(
        "/api/v0/search",
        method="GET",
        headers={"Authorization": f"Bot {KEY}"},
        query_string={"q": QUERY, "limit": "5"},
    ).respond_with_json(load("search_ok.json"))
    response = await http_transport.send("kagi", QUERY, kagi.build_request(query(), settings), 3.0)
    hits = parse(response.status, response.headers, response.body)
    assert [hit.title for hit in hits] == [
        "What's New In Python 3.13 — Python 3.13 documentation",
        "Python Release Python 3.13.0 | Python.org",
    ]


async def test_insufficient_credit_over_http(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/api/v0/search"), api_key=KEY)
    httpserver.expect_request("/api/v0/search", method="GET").respond_with_json(
        load("error_insufficient_credit.json"), status=402
    )
    response = await http_transport.send("kagi", QUERY, kagi.build_request(query(), settings), 3.0)
    raised(QuotaExceeded, parse, response.status, response.headers, response.body)
