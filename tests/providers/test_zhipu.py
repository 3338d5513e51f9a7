"""Zhipu (智谱) provider: request building and parsing of POST /paas/v4/web_search bodies.

The bodies under tests/data/zhipu/ were written by hand after the API reference
(https://docs.bigmodel.cn/api-reference/工具-api/网络搜索) and the error-code page
(https://docs.bigmodel.cn/cn/api/api-code), with its messages; none was recorded
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
from sleuth.providers import get, zhipu
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport, ReplayTransport

MAPPING = builtin_mapping("zhipu")
DATA = data_dir("zhipu")
load = body_loader(DATA)
parse = parser(zhipu, MAPPING)
KEY = "zhipu-test-key.0123456789"
URL = "https://open.bigmodel.cn/api/paas/v4/web_search"
SETTINGS = ProviderSettings(base_url=URL, api_key=KEY)
QUERY = "2024年诺贝尔物理学奖授予了谁"
query = query_maker(QUERY)


# --- registry and build_request ----------------------------------------------------------


def test_registry_and_default_settings_pick_the_module_up() -> None:
    assert get("zhipu") is zhipu.PROVIDER
    conf = Settings().providers["zhipu"]
    assert (conf.base_url, conf.api_key_env) == (URL, "ZHIPU_API_KEY")


def test_request_is_a_json_post_with_a_bearer_key() -> None:
    request = zhipu.build_request(query(), SETTINGS)
    assert (request.method, request.url) == ("POST", URL)
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.json == {
        "search_query": QUERY,
        "search_engine": "search_std",
        "search_intent": False,
        "count": 5,
        "content_size": "medium",
    }


def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey, match=r"providers\.zhipu\.api_key_env"):
        zhipu.build_request(query(), ProviderSettings(base_url=URL))


@pytest.mark.parametrize(
    ("time_range", "recency"),
    [("past_week", "oneWeek"), ("past_month", "oneMonth"), ("past_year", "oneYear")],
)
def test_time_range_becomes_search_recency_filter(time_range: TimeRange, recency: str) -> None:
    request = zhipu.build_request(query(time_range=time_range), SETTINGS)
    assert request.json["search_recency_filter"] == recency


def test_one_domain_is_sent_and_several_are_left_to_the_gateway() -> None:
    one = zhipu.build_request(query(domain_filter=("www.gov.cn",)), SETTINGS).json
    assert one["search_domain_filter"] == "www.gov.cn"
    two = zhipu.build_request(query(domain_filter=("gov.cn", "news.cn")), SETTINGS).json
    assert "search_domain_filter" not in two


@pytest.mark.parametrize(("asked", "sent"), [(0, 1), (20, 20), (99, 50)])
def test_count_stays_in_range(asked: int, sent: int) -> None:
    assert zhipu.build_request(query(max_results=asked), SETTINGS).json["count"] == sent


@pytest.mark.parametrize(("asked", "sent"), [(5, 10), (10, 10), (11, 20), (45, 50)])
def test_sogou_engine_gets_one_of_its_counts(asked: int, sent: int) -> None:
    settings = ProviderSettings(
        base_url=URL, api_key=KEY, options={"search_engine": "search_pro_sogou"}
    )
    assert zhipu.build_request(query(max_results=asked), settings).json["count"] == sent


def test_bad_engine_names_the_option_and_the_allowed_values() -> None:
    settings = ProviderSettings(base_url=URL, api_key=KEY, options={"search_engine": "bing"})
    with pytest.raises(ConfigError, match="search_engine must be one of search_std, search_pro"):
        zhipu.build_request(query(), settings)


# --- parse_response: documented bodies ---------------------------------------------------


def test_results_keep_title_link_content_media_and_date() -> None:
    hits = parse(200, {"content-type": "application/json"}, load("search_ok.json"))
    assert [hit.url for hit in hits] == [
        "https://www.news.cn/world/20241008/5b1c0e8d2f7a4a6c9e3d1f2a7b8c9d0e/c.html",
        "https://www.chinanews.com.cn/gj/2024/10-08/10298765.shtml",
        "https://www.nobelprize.org/prizes/physics/2024/summary/",
    ]
    xinhua, chinanews, nobel = hits
    assert xinhua.title == "2024年诺贝尔物理学奖揭晓 霍普菲尔德和辛顿获奖"
    assert xinhua.published_at == "2024-10-08"
    assert xinhua.fields["site_name"] == "新华网"
    assert xinhua.fields["refer"] == "ref_1"
    assert chinanews.snippet is not None and "玻尔兹曼机" in chinanews.snippet
    assert nobel.published_at is None  # publish_date: ""


def test_search_intent_is_not_a_result() -> None:
    hits = parse(200, {}, load("search_ok.json"))
    assert all(hit.url and hit.url.startswith("https://") for hit in hits)
    assert len(hits) == 3


def test_empty_result_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_cassette_replays_the_documented_body() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert (entry["provider"], entry["query"]) == ("zhipu", QUERY)
    assert entry["body"] == load("search_ok.json")


async def test_cassette_answers_through_the_replay_transport() -> None:
    transport = ReplayTransport.from_file(DATA / "cassette.jsonl")
    response = await transport.send("zhipu", QUERY, zhipu.build_request(query(), SETTINGS), 3.0)
    assert parse(response.status, response.headers, response.body)[0].fields["site_name"] == (
        "新华网"
    )


# --- parse_response: the documented error codes -----------------------------------------


@pytest.mark.parametrize("name", ["error_1113.json", "error_1304.json"])
def test_arrears_and_daily_limit_are_quota_exceeded_though_sent_as_429(name: str) -> None:
    error = raised(QuotaExceeded, parse, 429, {}, load(name))
    assert error.category == "non_recoverable"
    assert error.http_status == 429


def test_arrears_message_is_kept_in_chinese() -> None:
    error = raised(QuotaExceeded, parse, 429, {}, load("error_1113.json"))
    assert "1113" in error.message
    assert "您的账户已欠费" in error.message


@pytest.mark.parametrize("name", ["error_1302.json", "error_1303.json"])
def test_concurrency_and_frequency_are_rate_limited(name: str) -> None:
    error = raised(RateLimited, parse, 429, {"Retry-After": "1"}, load(name))
    assert error.retry_after_s == 1.0


def test_sensitive_content_is_a_refused_query() -> None:
    error = raised(ProviderRejected, parse, 400, {}, load("error_1301.json"))
    assert "不安全或敏感内容" in error.message
    assert "content policy" in error.message


def test_bad_token_is_auth_failed() -> None:
    error = raised(AuthFailed, parse, 401, {}, load("error_1002.json"))
    assert "1002" in error.message


def test_bad_parameter_is_rejected() -> None:
    error = raised(ProviderRejected, parse, 400, {}, load("error_1214.json"))
    assert "search_recency_filter" in error.message


def test_internal_error_is_unavailable() -> None:
    raised(ProviderUnavailable, parse, 500, {}, load("error_500.json"))


def test_error_envelope_under_http_200_is_still_an_error() -> None:
    with pytest.raises(QuotaExceeded):
        parse(200, {}, load("error_1113.json"))


def test_status_without_the_envelope_falls_back_to_the_status() -> None:
    with pytest.raises(AuthFailed):
        parse(401, {}, "Unauthorized")


def test_html_page_is_bad_response() -> None:
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {}, "<html>gateway</html>")


# --- end to end over HTTP ----------------------------------------------------------------


async def test_request_and_parse_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/api/paas/v4/web_search"), api_key=KEY)
    request = zhipu.build_request(
        query(time_range="past_year", domain_filter=("www.news.cn",)), settings
    )
    httpserver.expect_request(
        "/api/paas/v4/web_search",
        method="POST",
        headers={"Authorization": f"Bearer {KEY}"},
        json={
            "search_query": QUERY,
            "search_engine": "search_std",
            "search_intent": False,
            "count": 5,
            "content_size": "medium",
            "search_recency_filter": "oneYear",
            "search_domain_filter": "www.news.cn",
        },
    ).respond_with_json(load("search_ok.json"))
    response = await http_transport.send("zhipu", QUERY, request, 3.0)
    hits = parse(response.status, response.headers, response.body)
    assert [hit.published_at for hit in hits] == ["2024-10-08", "2024-10-08", None]


async def test_quota_error_over_http(httpserver: HTTPServer, http_transport: HttpTransport) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/api/paas/v4/web_search"), api_key=KEY)
    httpserver.expect_request("/api/paas/v4/web_search", method="POST").respond_with_json(
        load("error_1113.json"), status=429
    )
    request = zhipu.build_request(query(), settings)
    response = await http_transport.send("zhipu", QUERY, request, 3.0)
    raised(QuotaExceeded, parse, response.status, response.headers, response.body)
