"""Alibaba Cloud IQS provider: request building and parsing of UnifiedSearch bodies.

The bodies under tests/data/iqs/ were written by hand after the UnifiedSearch reference
(https://help.aliyun.com/document_detail/2883041.html), the `UnifiedSearchOutput` /
`UnifiedPageItem` models of the API definition and the error-code table; none was
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
    ProviderUnavailable,
    QuotaExceeded,
    RateLimited,
)
from sleuth.mapping_files import builtin_mapping
from sleuth.providers import get, iqs
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport, ReplayTransport

MAPPING = builtin_mapping("iqs")
DATA = data_dir("iqs")
load = body_loader(DATA)
parse = parser(iqs, MAPPING)
KEY = "iqs-test-key-0123456789"
URL = "https://cloud-iqs.aliyuncs.com/search/unified"
SETTINGS = ProviderSettings(base_url=URL, api_key=KEY)
QUERY = "2024年诺贝尔物理学奖授予了谁"
query = query_maker(QUERY)


def test_registry_and_default_settings_pick_the_module_up() -> None:
    assert get("iqs") is iqs.PROVIDER
    conf = Settings().providers["iqs"]
    assert (conf.base_url, conf.api_key_env) == (URL, "IQS_API_KEY")
    assert not iqs.INFO.domain_filter  # no documented site filter: the gateway filters


def test_request_is_a_json_post_with_a_bearer_key() -> None:
    request = iqs.build_request(query(), SETTINGS)
    assert (request.method, request.url) == ("POST", URL)
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.json == {
        "query": QUERY,
        "engineType": "Generic",
        "contents": {
            "mainText": False,
            "markdownText": False,
            "summary": False,
            "rerankScore": True,
        },
        "advancedParams": {"numResults": 5},
    }


def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey, match=r"providers\.iqs\.api_key_env"):
        iqs.build_request(query(), ProviderSettings(base_url=URL))


@pytest.mark.parametrize(
    ("time_range", "sent"),
    [("past_week", "OneWeek"), ("past_month", "OneMonth"), ("past_year", "OneYear")],
)
def test_time_range_becomes_time_range(time_range: TimeRange, sent: str) -> None:
    assert iqs.build_request(query(time_range=time_range), SETTINGS).json["timeRange"] == sent


@pytest.mark.parametrize(
    ("engine", "asked", "sent"), [("Generic", 20, 10), ("LiteAdvanced", 20, 20)]
)
def test_num_results_follows_the_engine(engine: str, asked: int, sent: int) -> None:
    settings = ProviderSettings(base_url=URL, api_key=KEY, options={"engine_type": engine})
    body = iqs.build_request(query(max_results=asked), settings).json
    assert body["engineType"] == engine
    assert body["advancedParams"] == {"numResults": sent}


def test_bad_options_name_the_field_and_the_allowed_values() -> None:
    bad = ProviderSettings(base_url=URL, api_key=KEY, options={"engine_type": "Bing"})
    with pytest.raises(ConfigError, match="engine_type must be one of Generic, GenericAdvanced"):
        iqs.build_request(query(), bad)
    bad = ProviderSettings(base_url=URL, api_key=KEY, options={"main_text": "yes"})
    with pytest.raises(ConfigError, match="main_text must be true or false"):
        iqs.build_request(query(), bad)


def test_page_items_keep_title_link_snippet_date_and_site() -> None:
    xinhua, paper = parse(200, {"content-type": "application/json"}, load("search_ok.json"))
    assert (
        xinhua.url == "https://www.news.cn/world/20241008/5b1c0e8d2f7a4a6c9e3d1f2a7b8c9d0e/c.html"
    )
    assert xinhua.published_at == "2024-10-08T18:05:00+08:00"
    assert xinhua.fields["site_name"] == "新华网"
    assert xinhua.fields["host_authority_score"] == 0.93
    assert paper.snippet is not None and paper.snippet.startswith("辛顿1947年生于英国")  # mainText
    assert "snippet" in paper.fell_back


def test_scene_cards_are_kept_as_results_with_their_detail() -> None:
    body = load("search_ok.json")
    detail = '{"city": "北京市"}'
    body["sceneItems"] = [{"type": "weather", "detail": detail}, {"type": "time", "detail": ""}]
    scene, *pages = parse(200, {}, body)
    assert (scene.url, scene.title) == (None, "weather")
    assert scene.fields == {"section": "scene", "scene_type": "weather", "detail": detail}
    assert len(pages) == 2  # the empty card is left out


def test_empty_result_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_cassette_replays_the_documented_body() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert (entry["provider"], entry["query"]) == ("iqs", QUERY)
    assert entry["body"] == load("search_ok.json")


async def test_cassette_answers_through_the_replay_transport() -> None:
    transport = ReplayTransport.from_file(DATA / "cassette.jsonl")
    response = await transport.send("iqs", QUERY, iqs.build_request(query(), SETTINGS), 3.0)
    assert len(parse(response.status, response.headers, response.body)) == 2


@pytest.mark.parametrize(
    ("status", "name", "hint"),
    [
        (403, "error_arrears.json", "欠费"),
        (403, "error_trial_expired.json", "trial is over"),
        (429, "error_trial_daily.json", "1000 queries a day"),
    ],
)
def test_arrears_and_trial_limits_are_quota_exceeded(status: int, name: str, hint: str) -> None:
    error = raised(QuotaExceeded, parse, status, {}, load(name))
    assert hint in error.message
    assert "7D3E4F5A-6B7C-4D8E-9F0A-1B2C3D4E5F60" in error.message  # requestId, for support


def test_throttling_is_rate_limited_with_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"retry-after": "1"}, load("error_throttling.json"))
    assert error.retry_after_s == 1.0


@pytest.mark.parametrize(
    ("status", "name"), [(404, "error_key.json"), (403, "error_not_activated.json")]
)
def test_bad_key_and_inactive_service_are_auth_failed(status: int, name: str) -> None:
    raised(AuthFailed, parse, status, {}, load(name))


def test_unknown_code_falls_back_to_the_status() -> None:
    body = {"requestId": "r", "code": "InternalServerError", "message": "internal"}
    raised(ProviderUnavailable, parse, 503, {}, body)


def test_html_page_is_bad_response() -> None:
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {}, "<html>blocked</html>")


async def test_request_and_parse_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/search/unified"), api_key=KEY)
    request = iqs.build_request(query(time_range="past_month"), settings)
    httpserver.expect_request(
        "/search/unified",
        method="POST",
        headers={"Authorization": f"Bearer {KEY}"},
        json={
            "query": QUERY,
            "engineType": "Generic",
            "contents": {
                "mainText": False,
                "markdownText": False,
                "summary": False,
                "rerankScore": True,
            },
            "advancedParams": {"numResults": 5},
            "timeRange": "OneMonth",
        },
    ).respond_with_json(load("search_ok.json"))
    response = await http_transport.send("iqs", QUERY, request, 3.0)
    hits = parse(response.status, response.headers, response.body)
    assert [hit.fields["site_name"] for hit in hits] == ["新华网", "澎湃新闻"]


async def test_arrears_over_http(httpserver: HTTPServer, http_transport: HttpTransport) -> None:
    settings = ProviderSettings(base_url=httpserver.url_for("/search/unified"), api_key=KEY)
    httpserver.expect_request("/search/unified", method="POST").respond_with_json(
        load("error_arrears.json"), status=403
    )
    request = iqs.build_request(query(), settings)
    response = await http_transport.send("iqs", QUERY, request, 3.0)
    raised(QuotaExceeded, parse, response.status, response.headers, response.body)
