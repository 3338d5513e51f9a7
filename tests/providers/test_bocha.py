"""Bocha (博查) provider: request building and parsing of POST /v1/web-search bodies.

The bodies under tests/data/bocha/ were written by hand after the response example,
the field list and the 异常码 table of the official API reference
(https://bocha-ai.feishu.cn/wiki/RXEOw02rFiwzGSkd9mUcqoeAnNK); none was recorded
from the live API.
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
from sleuth.providers import bocha, get
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport, ReplayTransport

MAPPING = builtin_mapping("bocha")
DATA = data_dir("bocha")
load = body_loader(DATA)
parse = parser(bocha, MAPPING)
KEY = "sk-bocha-test-0123456789"
URL = "https://api.bochaai.com/v1/web-search"
SETTINGS = ProviderSettings(base_url=URL, api_key=KEY)
QUERY = "2024年诺贝尔物理学奖授予了谁"
query = query_maker(QUERY)


# --- registry and build_request ----------------------------------------------------------


def test_registry_and_default_settings_pick_the_module_up() -> None:
    assert get("bocha") is bocha.PROVIDER
    conf = Settings().providers["bocha"]
    assert conf.base_url == URL
    assert conf.api_key_env == "BOCHA_API_KEY"


def test_request_is_a_json_post_with_a_bearer_key() -> None:
    request = bocha.build_request(query(), SETTINGS)
    assert request.method == "POST"
    assert request.url == URL
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.json == {"query": QUERY, "count": 5, "summary": False}


def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey, match=r"providers\.bocha\.api_key_env"):
        bocha.build_request(query(), ProviderSettings(base_url=URL))


@pytest.mark.parametrize(("asked", "sent"), [(0, 1), (10, 10), (50, 50), (80, 50)])
def test_count_stays_in_the_documented_range(asked: int, sent: int) -> None:
    assert bocha.build_request(query(max_results=asked), SETTINGS).json["count"] == sent


@pytest.mark.parametrize(
    ("time_range", "freshness"),
    [("past_week", "oneWeek"), ("past_month", "oneMonth"), ("past_year", "oneYear")],
)
def test_time_range_becomes_freshness(time_range: TimeRange, freshness: str) -> None:
    request = bocha.build_request(query(time_range=time_range), SETTINGS)
    assert request.json["freshness"] == freshness


def test_no_time_range_sends_no_freshness() -> None:
    assert "freshness" not in bocha.build_request(query(), SETTINGS).json


def test_domain_filter_becomes_a_pipe_separated_include_of_at_most_20() -> None:
    domains = tuple(f"site{n}.cn" for n in range(25))
    include = bocha.build_request(query(domain_filter=domains), SETTINGS).json["include"]
    assert include.split("|") == list(domains[:20])


def test_summary_option_is_sent_and_checked() -> None:
    settings = ProviderSettings(base_url=URL, api_key=KEY, options={"summary": True})
    assert bocha.build_request(query(), settings).json["summary"] is True
    bad = ProviderSettings(base_url=URL, api_key=KEY, options={"summary": "yes"})
    with pytest.raises(ConfigError, match=r"options\.summary must be true or false"):
        bocha.build_request(query(), bad)


# --- parse_response: documented bodies ---------------------------------------------------


def test_pages_keep_titles_urls_snippets_and_site_names() -> None:
    hits = parse(200, {"content-type": "application/json"}, load("search_ok.json"))
    assert [hit.title for hit in hits] == [
        "2024年诺贝尔物理学奖揭晓 霍普菲尔德和辛顿获奖",
        "The Nobel Prize in Physics 2024 - NobelPrize.org",
        "诺贝尔物理学奖为何颁给了人工智能？",
        "2024年诺贝尔物理学奖",
    ]
    xinhua = hits[0]
    assert (
        xinhua.url == "https://www.news.cn/world/20241008/5b1c0e8d2f7a4a6c9e3d1f2a7b8c9d0e/c.html"
    )
    assert xinhua.snippet is not None and xinhua.snippet.startswith("瑞典皇家科学院8日宣布")
    assert xinhua.fields["site_name"] == "新华网"


def test_date_published_wins_and_date_last_crawled_is_read_as_beijing_time() -> None:
    xinhua, nobel, paper, baike = parse(200, {}, load("search_ok.json"))
    assert xinhua.published_at == "2024-10-08T18:05:00+08:00"
    # The reference: dateLastCrawled's "Z" is UTC+8, not UTC.
    assert nobel.published_at == "2024-10-08T17:50:00+08:00"
    assert paper.published_at == "2024-10-09T09:12:00+08:00"
    assert "published_at" in nobel.fell_back
    assert baike.published_at is None  # dateLastCrawled: null


def test_summary_stands_in_for_an_empty_snippet() -> None:
    baike = parse(200, {}, load("search_ok.json"))[3]
    assert baike.snippet is not None and baike.snippet.startswith("2024年诺贝尔物理学奖于")
    assert "snippet" in baike.fell_back


def test_empty_result_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_a_body_without_web_pages_is_an_empty_list() -> None:
    body = load("search_empty.json")
    del body["data"]["webPages"]
    assert parse(200, {}, body) == []


def test_cassette_replays_the_documented_body() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert (entry["provider"], entry["query"]) == ("bocha", QUERY)
    assert entry["body"] == load("search_ok.json")


async def test_cassette_answers_through_the_replay_transport() -> None:
    transport = ReplayTransport.from_file(DATA / "cassette.jsonl")
    response = await transport.send("bocha", QUERY, bocha.build_request(query(), SETTINGS), 3.0)
    hits = parse(response.status, response.headers, response.body)
    assert hits[1].url == "https://www.nobelprize.org/prizes/physics/2024/summary/"


# --- parse_response: the documented error bodies ----------------------------------------


def test_403_not_enough_money_is_quota_exceeded() -> None:
    error = raised(QuotaExceeded, parse, 403, {}, load("error_403.json"))
    assert error.category == "non_recoverable"
    assert "You do not have enough money" in error.message
    assert "余额不足" in error.message
    assert "c66aac17eab1bb7e" in error.message  # the log_id, for support


def test_401_invalid_key_is_auth_failed() -> None:
    error = raised(AuthFailed, parse, 401, {}, load("error_401.json"))
    assert "Invalid API KEY" in error.message


def test_400_missing_key_is_auth_failed_not_a_bad_request() -> None:
    error = raised(AuthFailed, parse, 400, {}, load("error_400_key.json"))
    assert error.http_status == 400


def test_400_missing_parameter_is_rejected() -> None:
    error = raised(ProviderRejected, parse, 400, {}, load("error_400_query.json"))
    assert "Missing parameter query" in error.message


def test_429_is_rate_limited_with_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"retry-after": "2"}, load("error_429.json"))
    assert error.retry_after_s == 2.0
    assert "request limit" in error.message


def test_500_is_unavailable() -> None:
    error = raised(ProviderUnavailable, parse, 500, {}, load("error_500.json"))
    assert error.category == "recoverable"


def test_error_envelope_under_http_200_is_classified_by_its_code() -> None:
    with pytest.raises(QuotaExceeded):
        parse(200, {}, load("error_403.json"))


def test_html_page_is_bad_response() -> None:
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {"content-type": "text/html"}, "<html><body>502 Bad Gateway</body></html>")


def test_pages_that_are_not_a_list_are_bad_response() -> None:
    body = load("search_ok.json")
    body["data"]["webPages"]["value"] = {"name": "x"}
    with pytest.raises(BadResponse, match=r"data\.webPages\.value"):
        parse(200, {}, body)


# --- end to end over HTTP ----------------------------------------------------------------


async def test_request_and_parse_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/v1/web-search"), api_key=KEY)
    request = bocha.build_request(
        query(time_range="past_month", domain_filter=("news.cn", "nobelprize.org")), settings
    )
    httpserver.expect_request(
        "/v1/web-search",
        method="POST",
        headers={"Authorization": f"Bearer {KEY}"},
        json={
            "query": QUERY,
            "count": 5,
            "summary": False,
            "freshness": "oneMonth",
            "include": "news.cn|nobelprize.org",
        },
    ).respond_with_json(load("search_ok.json"))
    response = await http_transport.send("bocha", QUERY, request, 3.0)
    hits = parse(response.status, response.headers, response.body)
    assert len(hits) == 4
    assert hits[0].published_at == "2024-10-08T18:05:00+08:00"


async def test_quota_error_over_http(httpserver: HTTPServer, http_transport: HttpTransport) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/v1/web-search"), api_key=KEY)
    httpserver.expect_request("/v1/web-search", method="POST").respond_with_json(
        load("error_403.json"), status=403
    )
    request = bocha.build_request(query(), settings)
    response = await http_transport.send("bocha", QUERY, request, 3.0)
    raised(QuotaExceeded, parse, response.status, response.headers, response.body)
