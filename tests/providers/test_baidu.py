"""Baidu Qianfan (百度千帆) provider: request building and parsing of web_search bodies.

The bodies under tests/data/baidu/ were written by hand after the 百度搜索 API reference
(https://cloud.baidu.com/doc/AppBuilder/s/pmaxd1hvy; the reference object as its
documents list it), the 百度AI搜索 error-code table
(https://ai.baidu.com/ai-doc/AppBuilder/4m8sgh88y) and the Qianfan error envelope
(https://cloud.baidu.com/doc/qianfan-api/s/Om9b4yj3w); none was recorded live.
"""

from __future__ import annotations

from datetime import UTC, datetime

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
from sleuth.providers import baidu, get
from sleuth.providers.base import ProviderSettings
from sleuth.stages.results.normalize import parse_date as normalize_date
from sleuth.transport import HttpTransport, ReplayTransport

MAPPING = builtin_mapping("baidu")
DATA = data_dir("baidu")
load = body_loader(DATA)
parse = parser(baidu, MAPPING)
KEY = "bce-v3/ALTAK-test0123456789/abcdef"
URL = "https://qianfan.baidubce.com/v2/ai_search/web_search"
SETTINGS = ProviderSettings(base_url=URL, api_key=KEY)
QUERY = "2024年诺贝尔物理学奖授予了谁"
query = query_maker(QUERY)


# --- registry and build_request ----------------------------------------------------------


def test_registry_and_default_settings_pick_the_module_up() -> None:
    assert get("baidu") is baidu.PROVIDER
    conf = Settings().providers["baidu"]
    assert (conf.base_url, conf.api_key_env) == (URL, "QIANFAN_API_KEY")


def test_request_asks_for_web_pages_only() -> None:
    request = baidu.build_request(query(), SETTINGS)
    assert (request.method, request.url) == ("POST", URL)
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.json == {
        "messages": [{"role": "user", "content": QUERY}],
        "search_source": "baidu_search_v2",
        "edition": "standard",
        "resource_type_filter": [{"type": "web", "top_k": 5}],
    }


def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey, match=r"providers\.baidu\.api_key_env"):
        baidu.build_request(query(), ProviderSettings(base_url=URL))


@pytest.mark.parametrize(
    ("time_range", "recency"),
    [("past_week", "week"), ("past_month", "month"), ("past_year", "year")],
)
def test_time_range_becomes_search_recency_filter(time_range: TimeRange, recency: str) -> None:
    request = baidu.build_request(query(time_range=time_range), SETTINGS)
    assert request.json["search_recency_filter"] == recency


def test_domain_filter_becomes_a_site_match() -> None:
    request = baidu.build_request(query(domain_filter=("www.gov.cn", "news.cn")), SETTINGS)
    assert request.json["search_filter"] == {"match": {"site": ["www.gov.cn", "news.cn"]}}


@pytest.mark.parametrize(("asked", "sent"), [(0, 1), (20, 20), (70, 50)])
def test_top_k_stays_in_range(asked: int, sent: int) -> None:
    request = baidu.build_request(query(max_results=asked), SETTINGS)
    assert request.json["resource_type_filter"] == [{"type": "web", "top_k": sent}]


def test_edition_option_is_checked() -> None:
    lite = ProviderSettings(base_url=URL, api_key=KEY, options={"edition": "lite"})
    assert baidu.build_request(query(), lite).json["edition"] == "lite"
    bad = ProviderSettings(base_url=URL, api_key=KEY, options={"edition": "pro"})
    with pytest.raises(ConfigError, match="edition must be one of standard, lite"):
        baidu.build_request(query(), bad)


# --- parse_response: documented bodies ---------------------------------------------------


def test_references_keep_title_url_snippet_date_and_site() -> None:
    hits = parse(200, {"content-type": "application/json"}, load("search_ok.json"))
    assert [hit.url for hit in hits] == [
        "https://www.news.cn/world/20241008/5b1c0e8d2f7a4a6c9e3d1f2a7b8c9d0e/c.html",
        "https://www.gov.cn/yaowen/liebiao/202410/content_6978812.htm",
        "https://www.nobelprize.org/prizes/physics/2024/summary/",
    ]
    xinhua, gov, nobel = hits
    assert xinhua.published_at == "2024-10-08 18:05:00+08:00"  # China Standard Time
    assert xinhua.snippet is not None and xinhua.snippet.startswith("瑞典皇家科学院8日宣布")
    assert xinhua.fields["site_name"] == "新华网"
    assert gov.snippet is not None and gov.snippet.startswith("霍普菲尔德发明了")  # content
    assert "snippet" in gov.fell_back
    assert nobel.title == "The Nobel Prize in Physics 2024 - NobelPrize.org"  # web_anchor
    assert nobel.published_at is None  # date: ""


def test_a_date_without_a_zone_is_beijing_time_and_one_with_a_zone_is_kept() -> None:
    body = load("search_ok.json")
    dates = ["2024-10-08 18:05:00", "2024-10-09T08:30:00Z", "2024-10-09"]
    for reference, date in zip(body["references"], dates, strict=True):
        reference["date"] = date
    published = [normalize_date(hit.published_at) for hit in parse(200, {}, body)]
    assert published == [
        datetime(2024, 10, 8, 10, 5, tzinfo=UTC),  # 18:05 in Beijing
        datetime(2024, 10, 9, 8, 30, tzinfo=UTC),
        datetime(2024, 10, 9, tzinfo=UTC),  # a bare day stays that day
    ]


def test_empty_result_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_cassette_replays_the_documented_body() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert (entry["provider"], entry["query"]) == ("baidu", QUERY)
    assert entry["body"] == load("search_ok.json")


async def test_cassette_answers_through_the_replay_transport() -> None:
    transport = ReplayTransport.from_file(DATA / "cassette.jsonl")
    response = await transport.send("baidu", QUERY, baidu.build_request(query(), SETTINGS), 3.0)
    assert len(parse(response.status, response.headers, response.body)) == 3


# --- parse_response: the documented error codes -----------------------------------------


@pytest.mark.parametrize("name", ["error_rate_total_qps.json", "error_rate_search_qps.json"])
def test_per_second_limits_are_rate_limited(name: str) -> None:
    error = raised(RateLimited, parse, 429, {"retry-after": "1"}, load(name))
    assert error.retry_after_s == 1.0
    assert error.category == "recoverable"


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("error_quota_daily_free.json", "enable pay-as-you-go"),
        ("error_quota_daily_request.json", "daily call limit"),
        ("error_billing.json", "欠费"),
    ],
)
def test_daily_quota_and_arrears_are_quota_exceeded_not_rate_limited(name: str, hint: str) -> None:
    error = raised(QuotaExceeded, parse, 429, {}, load(name))
    assert error.category == "non_recoverable"
    assert hint in error.message
    assert "as-7kq2mxi6mm8" in error.message  # the id, for support


def test_bad_iam_token_is_auth_failed() -> None:
    error = raised(AuthFailed, parse, 401, {}, load("error_401_iam.json"))
    assert "IAM Certification failed" in error.message


def test_malformed_request_is_rejected() -> None:
    raised(ProviderRejected, parse, 400, {}, load("error_400_json.json"))


def test_gateway_errors_without_the_envelope_are_unavailable() -> None:
    raised(ProviderUnavailable, parse, 503, {}, "<html>Service Unavailable</html>")


def test_quota_envelope_under_http_200_is_still_quota_exceeded() -> None:
    with pytest.raises(QuotaExceeded):
        parse(200, {}, load("error_quota_daily_free.json"))


def test_body_without_references_is_bad_response() -> None:
    with pytest.raises(BadResponse, match="references"):
        parse(200, {}, {"request_id": "r"})


# --- end to end over HTTP ----------------------------------------------------------------


async def test_request_and_parse_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    path = "/v2/ai_search/web_search"
    settings = ProviderSettings(base_url=httpserver.url_for(path), api_key=KEY)
    asked = query(time_range="past_week", domain_filter=("news.cn",))
    request = baidu.build_request(asked, settings)
    httpserver.expect_request(
        path,
        method="POST",
        headers={"Authorization": f"Bearer {KEY}"},
        json={
            "messages": [{"role": "user", "content": QUERY}],
            "search_source": "baidu_search_v2",
            "edition": "standard",
            "resource_type_filter": [{"type": "web", "top_k": 5}],
            "search_recency_filter": "week",
            "search_filter": {"match": {"site": ["news.cn"]}},
        },
    ).respond_with_json(load("search_ok.json"))
    response = await http_transport.send("baidu", QUERY, request, 3.0)
    hits = parse(response.status, response.headers, response.body)
    assert hits[1].fields["site_name"] == "中国政府网"


async def test_free_quota_error_over_http(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    path = "/v2/ai_search/web_search"
    settings = ProviderSettings(base_url=httpserver.url_for(path), api_key=KEY)
    httpserver.expect_request(path, method="POST").respond_with_json(
        load("error_quota_daily_free.json"), status=429
    )
    request = baidu.build_request(query(), settings)
    response = await http_transport.send("baidu", QUERY, request, 3.0)
    raised(QuotaExceeded, parse, response.status, response.headers, response.body)
