"""SerpApi (Google Search API) provider: request building and parsing of recorded bodies.

The bodies under tests/data/serpapi/ were written by hand from SerpApi's documentation
(https://serpapi.com/search-api, /organic-results, /direct-answer-box-api,
/api-status-and-error-codes, /search-errors), with realistic values; they are not
captures of live responses.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import body_loader, cassette_entries, data_dir, parser, query_maker, raised
from pytest_httpserver import HTTPServer

from sleuth.contract import TimeRange
from sleuth.errors import (
    AuthFailed,
    BadResponse,
    MissingApiKey,
    ProviderRejected,
    ProviderUnavailable,
    QuotaExceeded,
    RateLimited,
)
from sleuth.mapping_files import builtin_mapping
from sleuth.providers import serpapi
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport, RecordingTransport, ReplayTransport

MAPPING = builtin_mapping("serpapi")
DATA = data_dir("serpapi")
load = body_loader(DATA)
parse = parser(serpapi, MAPPING)
KEY = "sk-serpapi-test-7f3a9c2e"
SETTINGS = ProviderSettings(base_url="https://serpapi.com/search", api_key=KEY)
QUERY = "what's new in python 3.13"
query = query_maker(QUERY)


# --- build_request ---------------------------------------------------------------------


def test_request_is_a_get_with_the_key_as_a_query_parameter() -> None:
    request = serpapi.build_request(query(), SETTINGS)

    assert request.method == "GET"
    assert request.url == "https://serpapi.com/search"
    assert request.params == {
        "engine": "google",
        "q": QUERY,
        "api_key": KEY,
        "num": "5",
        "hl": "en",
        "lr": "lang_en",
    }
    assert request.headers == {"Accept": "application/json"}
    assert all(KEY not in value for value in request.headers.values())
    assert request.json is None


def test_default_endpoint_when_base_url_is_empty() -> None:
    settings = ProviderSettings(base_url="", api_key=KEY)
    assert serpapi.build_request(query(), settings).url == "https://serpapi.com/search"


@pytest.mark.parametrize(("asked", "sent"), [(1, "1"), (10, "10"), (20, "10")])
def test_num_is_capped_at_one_results_page(asked: int, sent: str) -> None:
    request = serpapi.build_request(query(max_results=asked), SETTINGS)
    assert request.params["num"] == sent


@pytest.mark.parametrize(
    ("time_range", "expected"),
    [("past_week", "qdr:w"), ("past_month", "qdr:m"), ("past_year", "qdr:y")],
)
def test_time_range_becomes_tbs(time_range: TimeRange, expected: str) -> None:
    request = serpapi.build_request(query(time_range=time_range), SETTINGS)
    assert request.params["tbs"] == expected


def test_time_range_any_sends_no_tbs() -> None:
    assert "tbs" not in serpapi.build_request(query(time_range="any"), SETTINGS).params


def test_one_domain_is_a_site_operator_in_q() -> None:
    request = serpapi.build_request(query(domain_filter=("docs.python.org",)), SETTINGS)
    assert request.params["q"] == "what's new in python 3.13 site:docs.python.org"


def test_several_domains_are_ored_site_operators() -> None:
    request = serpapi.build_request(
        query(domain_filter=("docs.python.org", " ", "python.org")), SETTINGS
    )
    assert request.params["q"] == (
        "what's new in python 3.13 site:docs.python.org OR site:python.org"
    )


@pytest.mark.parametrize(
    ("language", "hl", "lr"),
    [("zh", "zh-cn", "lang_zh-CN"), ("en", "en", "lang_en")],
)
def test_language_sets_hl_and_lr(language: str, hl: str, lr: str) -> None:
    request = serpapi.build_request(query("python 3.13 新特性", language=language), SETTINGS)
    assert (request.params["hl"], request.params["lr"]) == (hl, lr)
    assert request.params["q"] == "python 3.13 新特性"


def test_unknown_language_leaves_hl_and_lr_to_google() -> None:
    params = serpapi.build_request(query(language="fr"), SETTINGS).params
    assert "hl" not in params
    assert "lr" not in params


def test_options_override_language_and_pass_through() -> None:
    settings = ProviderSettings(
        base_url="https://serpapi.com/search",
        api_key=KEY,
        options={
            "hl": "zh-tw",
            "lr": "",
            "gl": "tw",
            "google_domain": "google.com.tw",
            "no_cache": True,
            "device": None,
            "unrelated": "x",
        },
    )
    params = serpapi.build_request(query(language="zh"), settings).params

    assert params["hl"] == "zh-tw"
    assert "lr" not in params  # lr: "" searches every language
    assert params["gl"] == "tw"
    assert params["google_domain"] == "google.com.tw"
    assert params["no_cache"] == "true"
    assert "device" not in params
    assert "unrelated" not in params


def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey, match="API key") as caught:
        serpapi.build_request(query(), ProviderSettings(base_url="https://serpapi.com/search"))
    assert caught.value.category == "non_recoverable"


def test_info_declares_native_capabilities() -> None:
    info = serpapi.PROVIDER.info
    assert info.name == "serpapi"
    assert info.docs_url == "https://serpapi.com/search-api"
    assert info.needs_key
    assert (info.time_range, info.domain_filter, info.language) == (True, True, True)
    assert info.query_style == "keywords"
    assert info.max_results == 10


# --- parse_response: good bodies ---------------------------------------------------------


def test_answer_box_comes_first_then_organic_results_in_order() -> None:
    hits = parse(200, {"content-type": "application/json"}, load("search_ok.json"))

    assert [hit.url for hit in hits] == [
        "https://docs.python.org/3/whatsnew/3.13.html",  # answer box
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://www.python.org/downloads/release/python-3130/",
        "https://realpython.com/python313-new-features/",
        "https://github.com/python/cpython/blob/main/Doc/whatsnew/3.13.rst",
    ]
    box = hits[0]
    assert box.title == "What's New In Python 3.13 — Python 3.13.0 documentation"
    assert box.snippet is not None
    assert box.snippet.startswith("Python 3.13 is the latest stable release")
    assert box.published_at is None
    assert box.fields == {
        "answer_box": True,
        "answer_box_type": "organic_result",
        "displayed_link": "https://docs.python.org › whatsnew",
    }
    assert not any(hit.fields.get("answer_box") for hit in hits[1:])


def test_organic_titles_snippets_and_dates_are_kept_as_sent() -> None:
    _, first, second, third, fourth = parse(200, {}, load("search_ok.json"))

    assert first.title == "What's New In Python 3.13 — Python 3.13.0 documentation"
    assert first.snippet == (
        "This article explains the new features in Python 3.13, compared to 3.12. "
        "Python 3.13 was released on October 7, 2024. For full details, see the changelog."
    )
    assert second.title == "Python Release Python 3.13.0"
    # Google's display dates stay as sent and are read as dates; an age counts back
    # from when SerpApi ran the search (search_metadata.created_at 2024-10-29 11:02:08).
    assert second.fields["date"] == "Oct 7, 2024"
    assert second.published_at == "2024-10-07T00:00:00+00:00"
    assert third.fields["date"] == "3 days ago"
    assert third.published_at == "2024-10-26T11:02:08+00:00"
    assert "date" not in first.fields
    assert first.published_at is None
    assert fourth.published_at is None
    assert fourth.snippet is None  # no `snippet` key in that result
    assert fourth.title == "cpython/Doc/whatsnew/3.13.rst at main · python/cpython"


def test_stable_extras_are_kept_in_fields() -> None:
    _, first, *_ = parse(200, {}, load("search_ok.json"))
    assert first.fields == {
        "position": 1,
        "displayed_link": "https://docs.python.org › whatsnew",
        "source": "Python documentation",
        "snippet_highlighted_words": ["new features in Python 3.13", "Python 3.13"],
    }


def test_redirect_link_is_never_the_url() -> None:
    hits = parse(200, {}, load("search_ok.json"))
    assert all("google.com/url" not in (hit.url or "") for hit in hits)


def test_chinese_results_are_kept_verbatim() -> None:
    (hit,) = parse(200, {}, load("search_zh.json"))
    assert hit.title == "Python 3.13 有什么新变化 — Python 3.13.0 文档"
    assert hit.url == "https://docs.python.org/zh-cn/3/whatsnew/3.13.html"
    assert hit.snippet is not None
    assert hit.snippet.startswith("本文介绍了 Python 3.13")
    assert hit.fields["date"] == "2024年10月7日"
    assert hit.published_at == "2024-10-07T00:00:00+00:00"


def test_direct_answer_without_a_link_gets_no_url() -> None:
    box, organic = parse(200, {}, load("search_calculator.json"))
    assert box.url is None  # never invented
    assert box.title is None
    assert box.snippet == "23.5384615 miles per hour"
    assert box.fields == {"answer_box": True, "answer_box_type": "calculator_result"}
    assert organic.url == (
        "https://www.calculatorsoup.com/calculators/math/speed-distance-time-calculator.php"
    )


def test_short_answer_wins_over_the_snippet_and_its_date_is_read() -> None:
    body = load("search_ok.json") | {
        "answer_box": {
            "type": "organic_result",
            "title": "Python 3.13 / Release date",
            "answer": "October 7, 2024",
            "snippet": "Python 3.13.0 was released on October 7, 2024.",
            "link": "https://www.python.org/downloads/release/python-3130/",
            "date": "Oct 7, 2024",
        }
    }
    box = parse(200, {}, body)[0]
    assert box.snippet == "October 7, 2024"
    assert box.published_at == "2024-10-07T00:00:00+00:00"
    assert box.fields["date"] == "Oct 7, 2024"


def test_answer_box_without_text_is_left_out() -> None:
    weather = {"type": "weather_result", "temperature": "83", "unit": "Fahrenheit"}
    hits = parse(200, {}, load("search_ok.json") | {"answer_box": weather})
    assert len(hits) == 4
    assert not any(hit.fields.get("answer_box") for hit in hits)


def test_answer_box_given_as_a_list_uses_its_first_object() -> None:
    body = load("search_calculator.json")
    body["answer_box"] = ["junk", {"type": "calculator_result", "result": "3.141592653589793"}]
    assert parse(200, {}, body)[0].snippet == "3.141592653589793"


def test_renamed_field_is_read_after_adding_the_alias() -> None:
    body = load("search_ok.json")
    del body["answer_box"]
    for entry in body["organic_results"]:
        if "snippet" in entry:
            entry["description"] = entry.pop("snippet")

    assert all(hit.snippet is None for hit in parse(200, {}, body))
    renamed = MAPPING.model_copy(
        update={"fields": {**MAPPING.fields, "snippet": ["snippet", "description"]}}
    )
    hits = parse(200, {}, body, renamed)
    assert hits[0].snippet is not None
    assert hits[0].snippet.startswith("This article explains")
    assert hits[3].snippet is None


def test_empty_and_non_string_fields_count_as_missing() -> None:
    body = {
        "search_metadata": {"status": "Success"},
        "organic_results": [
            {"position": 1, "title": "", "link": "https://a.example/", "snippet": 7}
        ],
    }
    (hit,) = parse(200, {}, body)
    assert (hit.url, hit.title, hit.snippet) == ("https://a.example/", None, None)


def test_non_object_entries_are_skipped() -> None:
    body = {"organic_results": ["junk", None, {"link": "https://a.example/", "title": "A"}]}
    (hit,) = parse(200, {}, body)
    assert hit.url == "https://a.example/"


# --- parse_response: nothing found -------------------------------------------------------


def test_documented_empty_search_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_empty_search_still_keeps_an_answer_box() -> None:
    body = load("search_empty.json") | {"answer_box": {"type": "calculator_result", "result": "4"}}
    (box,) = parse(200, {}, body)
    assert box.snippet == "4"


def test_fully_empty_state_without_the_error_string_is_an_empty_list() -> None:
    body = load("search_empty.json")
    del body["error"]
    assert parse(200, {}, body) == []


def test_answer_box_alone_is_a_result() -> None:
    body = load("search_calculator.json")
    del body["organic_results"]
    (box,) = parse(200, {}, body)
    assert box.fields["answer_box"] is True


# --- parse_response: failures ------------------------------------------------------------


def test_invalid_key_is_auth_failed() -> None:
    with pytest.raises(AuthFailed, match="Invalid API key") as caught:
        parse(401, {"content-type": "application/json"}, load("error_invalid_key.json"))
    assert caught.value.http_status == 401
    assert caught.value.category == "non_recoverable"


def test_invalid_key_message_is_auth_failed_whatever_the_status() -> None:
    with pytest.raises(AuthFailed):
        parse(200, {}, load("error_invalid_key.json"))


def test_http_403_is_auth_failed() -> None:
    body = {"error": "The account associated with this API key doesn't have permission."}
    error = raised(AuthFailed, parse, 403, {}, body)
    assert error.http_status == 403


def test_out_of_searches_is_quota_exceeded_with_retry_after() -> None:
    with pytest.raises(QuotaExceeded, match="run out of searches") as caught:
        parse(429, {"Retry-After": "3600"}, load("error_out_of_searches.json"))
    assert caught.value.retry_after_s == 3600.0
    assert caught.value.http_status == 429


def test_hourly_throughput_429_carries_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"retry-after": "30"}, "Too Many Requests")
    assert error.retry_after_s == 30.0
    assert error.category == "recoverable"


def test_missing_parameter_is_rejected() -> None:
    with pytest.raises(ProviderRejected, match="Missing query `q` parameter") as caught:
        parse(400, {}, load("error_missing_q.json"))
    assert caught.value.http_status == 400


def test_http_500_is_bad_response() -> None:
    error = raised(BadResponse, parse, 500, {}, {"error": "Something went wrong on SerpApi's end."})
    assert error.http_status == 500


def test_failed_search_503_is_unavailable() -> None:
    with pytest.raises(ProviderUnavailable, match="try again later") as caught:
        parse(503, {}, load("error_search_failed.json"))
    assert caught.value.http_status == 503
    assert caught.value.category == "recoverable"


def test_failed_search_status_with_http_200_is_unavailable() -> None:
    with pytest.raises(ProviderUnavailable):
        parse(200, {}, load("error_search_failed.json"))


def test_unknown_error_with_http_200_is_rejected() -> None:
    with pytest.raises(ProviderRejected, match="Unsupported"):
        parse(200, {}, {"error": "Unsupported `xx` google_domain."})


def test_html_page_with_status_200_is_bad_response() -> None:
    page = "<!DOCTYPE html><html><body><h1>Service temporarily unavailable</h1></body></html>"
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {"content-type": "text/html"}, page)


def test_html_page_with_status_502_is_unavailable() -> None:
    with pytest.raises(ProviderUnavailable):
        parse(502, {"content-type": "text/html"}, "<html><h1>502 Bad Gateway</h1></html>")


def test_results_that_are_not_a_list_are_bad_response() -> None:
    with pytest.raises(BadResponse, match="organic_results"):
        parse(200, {}, load("results_not_list.json"))


def test_object_without_results_or_empty_state_is_bad_response() -> None:
    with pytest.raises(BadResponse):
        parse(200, {}, {"search_metadata": {"status": "Success"}})


# --- over HTTP and through a cassette ----------------------------------------------------


def expect_search(httpserver: HTTPServer) -> None:
    httpserver.expect_request(
        "/search",
        method="GET",
        headers={"Accept": "application/json"},
        query_string={
            "engine": "google",
            "q": QUERY,
            "api_key": KEY,
            "num": "5",
            "hl": "en",
            "lr": "lang_en",
            "tbs": "qdr:y",
        },
    ).respond_with_json(load("search_ok.json"))


async def test_end_to_end_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    expect_search(httpserver)
    settings = ProviderSettings(base_url=httpserver.url_for("/search"), api_key=KEY)
    request = serpapi.build_request(query(time_range="past_year"), settings)
    response = await http_transport.send("serpapi", QUERY, request, 5.0)

    hits = serpapi.parse_response(response.status, response.headers, response.body, MAPPING)
    assert response.status == 200
    assert hits[0].fields["answer_box"] is True
    assert hits[1].url == "https://docs.python.org/3/whatsnew/3.13.html"
    httpserver.check_assertions()


async def test_recorded_cassette_never_holds_the_key(
    httpserver: HTTPServer, http_transport: HttpTransport, tmp_path: Path
) -> None:
    expect_search(httpserver)
    cassette = tmp_path / "serpapi.jsonl"
    settings = ProviderSettings(base_url=httpserver.url_for("/search"), api_key=KEY)
    request = serpapi.build_request(query(time_range="past_year"), settings)
    recorder = RecordingTransport(http_transport, cassette)
    await recorder.send("serpapi", QUERY, request, 5.0)

    text = cassette.read_text(encoding="utf-8")
    assert KEY not in text
    assert "api_key" not in text
    (entry,) = cassette_entries(cassette)
    assert (entry["provider"], entry["query"], entry["status"]) == ("serpapi", QUERY, 200)
    assert entry["body"] == load("search_ok.json")


async def test_shipped_cassette_replays_into_hits() -> None:
    replay = ReplayTransport.from_file(DATA / "cassette.jsonl")
    request = serpapi.build_request(query(), SETTINGS)
    response = await replay.send("serpapi", QUERY, request, 1.0)

    assert response.body == load("search_ok.json")
    assert KEY not in (DATA / "cassette.jsonl").read_text(encoding="utf-8")
    hits = serpapi.parse_response(response.status, response.headers, response.body, MAPPING)
    assert "https://docs.python.org/3/whatsnew/3.13.html" in [hit.url for hit in hits]
    assert any(hit.snippet is None for hit in hits)


def test_knowledge_graph_is_a_result_with_its_facts_and_its_source_link() -> None:
    hits = parse(200, {}, load("search_knowledge_graph.json"))

    graph = hits[0]
    assert graph.title == "Python"
    assert graph.url == "https://en.wikipedia.org/wiki/Python_(programming_language)"
    assert graph.snippet is not None
    assert graph.snippet.startswith("Python is a high-level, general-purpose programming language.")
    assert graph.fields == {
        "knowledge_graph": True,
        "kg_type": "High-level programming language",
        "source_name": "Wikipedia",
        "attributes": {
            "designed_by": "Guido van Rossum",
            "developer": "Python Software Foundation",
            "first_appeared": "20 February 1991",
            "typing_discipline": "Duck, dynamic, strong; optional type annotations",
        },
    }
    assert [hit.fields.get("position") for hit in hits[1:5]] == [1, 2, 3, 4]


def test_top_stories_follow_the_organic_results_dated_from_the_search_time() -> None:
    story = parse(200, {}, load("search_knowledge_graph.json"))[-1]

    assert story.url == "https://www.python.org/downloads/release/python-3130/"
    assert story.fields == {"section": "top_stories", "source": "Python.org", "date": "3 weeks ago"}
    # created_at 2024-10-29 11:02:08 UTC, three weeks before
    assert story.published_at == "2024-10-08T11:02:08+00:00"


def test_a_news_search_answers_its_news_results_with_dates() -> None:
    first, second = parse(200, {}, load("search_news.json"))

    assert first.title == "Python Release Python 3.13.0"
    assert first.published_at == "2024-10-07T00:00:00+00:00"
    assert first.fields["section"] == "news_results"
    assert first.fields["source"] == "Python.org"
    assert second.published_at == "2024-10-08T11:02:08+00:00"


def test_every_answer_box_of_a_list_is_a_result() -> None:
    body = load("search_ok.json")
    body["answer_box"] = [
        {"type": "calculator_result", "result": "3.141592653589793"},
        {"type": "organic_result", "title": "Pi", "snippet": "Pi is about 3.14159."},
    ]
    first, second, *_ = parse(200, {}, body)
    assert first.snippet == "3.141592653589793"
    assert second.title == "Pi"


def test_without_the_search_time_dates_stay_extras() -> None:
    body = load("search_ok.json")
    del body["search_metadata"]["created_at"]
    hits = parse(200, {}, body)
    assert all(hit.published_at is None for hit in hits)
    assert hits[3].fields["date"] == "3 days ago"
