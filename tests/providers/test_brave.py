"""Brave provider: request building and parsing of Web Search API bodies.

The bodies under tests/data/brave/ were written by hand from the official reference
(https://api-dashboard.search.brave.com/api-reference/web/search/get and the Response
Objects page), with realistic values; no live key was used. Error bodies follow the
reference's `ErrorResponse` examples (an `errors` list) and the `error` object the
API is reported to send in practice.
"""

from __future__ import annotations

import json

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
from sleuth.providers import brave
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport

MAPPING = builtin_mapping("brave")
DATA = data_dir("brave")
load = body_loader(DATA)
parse = parser(brave, MAPPING)
KEY = "BSA-test-key-0123456789"
SETTINGS = ProviderSettings(base_url="https://api.search.brave.com/res/v1/web/search", api_key=KEY)
query = query_maker("python 3.13 release notes")


# --- build_request ---------------------------------------------------------------------


def test_request_is_a_get_with_the_key_in_the_subscription_header() -> None:
    request = brave.build_request(query(), SETTINGS)

    assert request.method == "GET"
    assert request.url == "https://api.search.brave.com/res/v1/web/search"
    assert request.headers["X-Subscription-Token"] == KEY
    assert request.headers["Accept"] == "application/json"
    assert request.params == {
        "q": "python 3.13 release notes",
        "count": "5",
        "result_filter": "web,infobox,faq,news",
        "text_decorations": "false",
        "search_lang": "en",
        "ui_lang": "en-US",
    }
    assert KEY not in json.dumps(dict(request.params))
    assert request.json is None


def test_default_endpoint_when_base_url_is_empty() -> None:
    settings = ProviderSettings(base_url="", api_key=KEY)
    assert brave.build_request(query(), settings).url == brave.DEFAULT_URL


def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(MissingApiKey) as caught:
        brave.build_request(query(), ProviderSettings(base_url=SETTINGS.base_url))
    assert caught.value.provider == "brave"


@pytest.mark.parametrize(("asked", "sent"), [(1, "1"), (10, "10"), (20, "20"), (50, "20")])
def test_count_is_capped_at_the_documented_maximum(asked: int, sent: str) -> None:
    assert brave.build_request(query(max_results=asked), SETTINGS).params["count"] == sent


@pytest.mark.parametrize(
    ("time_range", "freshness"),
    [("past_week", "pw"), ("past_month", "pm"), ("past_year", "py")],
)
def test_time_range_becomes_freshness(time_range: TimeRange, freshness: str) -> None:
    request = brave.build_request(query(time_range=time_range), SETTINGS)
    assert request.params["freshness"] == freshness


def test_time_range_any_sends_no_freshness() -> None:
    assert "freshness" not in brave.build_request(query(time_range="any"), SETTINGS).params


@pytest.mark.parametrize(
    ("language", "search_lang", "ui_lang"),
    [("zh", "zh-hans", "zh-CN"), ("en", "en", "en-US")],
)
def test_language_is_mapped_to_brave_codes(language: str, search_lang: str, ui_lang: str) -> None:
    request = brave.build_request(query("人工智能 发展", language=language), SETTINGS)
    assert request.params["search_lang"] == search_lang
    assert request.params["ui_lang"] == ui_lang
    assert request.params["q"] == "人工智能 发展"


def test_unknown_language_is_left_to_brave() -> None:
    params = brave.build_request(query(language="fr"), SETTINGS).params
    assert "search_lang" not in params
    assert "ui_lang" not in params


def test_one_domain_becomes_a_site_operator() -> None:
    request = brave.build_request(query("free threading", domain_filter=("python.org",)), SETTINGS)
    assert request.params["q"] == "free threading site:python.org"


def test_several_domains_become_or_ed_site_operators() -> None:
    request = brave.build_request(
        query("free threading", domain_filter=("docs.python.org", "peps.python.org")), SETTINGS
    )
    assert request.params["q"] == "free threading (site:docs.python.org OR site:peps.python.org)"


def test_keywords_are_shortened_to_keep_operators_within_the_limits() -> None:
    long_text = " ".join(f"word{i}" for i in range(60))
    request = brave.build_request(query(long_text, domain_filter=("python.org",)), SETTINGS)
    q = request.params["q"]
    assert q.endswith(" site:python.org")
    assert len(q.split()) <= brave.MAX_QUERY_WORDS
    assert len(q) <= brave.MAX_QUERY_CHARS
    assert q.startswith("word0 word1 ")


def test_too_many_domains_for_one_query_is_rejected() -> None:
    domains = tuple(f"site{i}.example.org" for i in range(30))
    with pytest.raises(ProviderRejected, match="400-character"):
        brave.build_request(query("python", domain_filter=domains), SETTINGS)


def test_options_are_passed_through() -> None:
    settings = ProviderSettings(
        base_url=SETTINGS.base_url,
        api_key=KEY,
        options={
            "country": "ALL",
            "safesearch": "strict",
            "spellcheck": False,
            "extra_snippets": True,
            "search_lang": "zh-hant",
            "ui_lang": "zh-TW",
            "api_version": "2023-10-11",
        },
    )
    request = brave.build_request(query(language="zh"), settings)

    assert request.params["country"] == "ALL"
    assert request.params["safesearch"] == "strict"
    assert request.params["spellcheck"] == "false"
    assert request.params["extra_snippets"] == "true"
    assert request.params["search_lang"] == "zh-hant"
    assert request.params["ui_lang"] == "zh-TW"
    assert request.headers["Api-Version"] == "2023-10-11"


def test_info_declares_native_capabilities() -> None:
    info = brave.PROVIDER.info
    assert info.name == "brave"
    assert info.docs_url.startswith("https://api-dashboard.search.brave.com/")
    assert info.needs_key
    assert (info.time_range, info.domain_filter, info.language) == (True, True, True)
    assert info.query_style == "keywords"
    assert info.max_results == 20


# --- parse_response: good bodies ---------------------------------------------------------


def test_results_keep_titles_urls_snippets_and_dates_as_sent() -> None:
    hits = parse(200, {"content-type": "application/json"}, load("search_ok.json"))

    assert [hit.url for hit in hits] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://www.python.org/downloads/release/python-3130/",
        "https://realpython.com/python313-new-features/",
        "https://github.com/python/cpython/blob/main/Doc/whatsnew/3.13.rst",
        "https://discuss.python.org/t/python-3-13-0-final-released/66474",
    ]
    docs, release, article, github, discuss = hits
    assert docs.title == "What’s New In Python 3.13 — Python 3.13.1 documentation"
    assert docs.snippet is not None
    assert docs.snippet.startswith("This article explains the new features in Python 3.13")
    assert docs.published_at is None  # no page_age: not invented
    assert release.published_at == "2024-10-07T00:00:00"
    assert article.published_at == "2024-10-02T14:00:00"
    assert github.snippet is None  # neither description nor extra_snippets
    assert github.published_at is None
    # No description: the first extra snippet answers, and the hit says it fell back.
    assert discuss.snippet is not None
    assert discuss.snippet.startswith("Python 3.13.0 is now available!")
    assert discuss.fell_back == ("snippet",)
    assert docs.fell_back == ()


def test_stable_extras_are_kept_and_relative_age_is_not_a_date() -> None:
    hits = parse(200, {}, load("search_ok.json"))
    release = hits[1]
    assert release.fields == {
        "age": "October 7, 2024",
        "hostname": "www.python.org",
        "site_name": "Python.org",
        "language": "en",
        "subtype": "generic",
    }
    assert hits[0].fields["extra_snippets"][1].startswith("The biggest changes include")
    assert hits[2].fields["subtype"] == "article"
    assert "age" not in hits[3].fields


def test_chinese_results_are_kept_verbatim() -> None:
    (hit,) = parse(200, {}, load("search_zh.json"))
    assert hit.title == "人工智能 - 维基百科，自由的百科全书"
    assert hit.url == "https://zh.wikipedia.org/wiki/%E4%BA%BA%E5%B7%A5%E6%99%BA%E8%83%BD"
    assert hit.snippet is not None
    assert hit.snippet.startswith("人工智能（英语")
    assert hit.published_at == "2025-03-01T08:12:45"
    assert hit.fields["age"] == "3 days ago"  # relative: an extra, never published_at


def test_no_web_section_is_an_empty_answer() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


def test_empty_result_list_is_an_empty_list() -> None:
    body = {"type": "search", "web": {"type": "search", "results": [], "family_friendly": True}}
    assert parse(200, {}, body) == []


def test_missing_fields_stay_none() -> None:
    body = {"type": "search", "web": {"type": "search", "results": [{"title": "Only a title"}]}}
    (hit,) = parse(200, {}, body)
    assert (hit.url, hit.snippet, hit.published_at) == (None, None, None)
    assert hit.title == "Only a title"
    assert hit.fields == {}


def test_a_renamed_field_is_read_once_the_mapping_names_it() -> None:
    body = load("search_ok.json")
    for entry in body["web"]["results"]:
        if "description" in entry:
            entry["snippet_text"] = entry.pop("description")
    assert parse(200, {}, body)[1].snippet is None

    fields = {**MAPPING.fields, "snippet": ["description", "snippet_text", "extra_snippets[0]"]}
    renamed = MAPPING.model_copy(update={"fields": fields})
    hits = brave.parse_response(200, {}, body, renamed)
    assert hits[1].snippet is not None
    assert hits[1].snippet.startswith("Python 3.13.0 is the newest major release")


def test_site_operators_are_enforced_on_the_hits() -> None:
    hits = parse(200, {}, load("search_site.json"))
    assert [hit.url for hit in hits] == [
        "https://docs.python.org/3/howto/free-threading-python.html",
        "https://peps.python.org/pep-0703/",
    ]  # blog.example.com leaked past site: and is dropped


def test_site_operator_includes_subdomains_and_ignores_excluded_sites() -> None:
    body = {
        "type": "search",
        "query": {"original": "rate texas site:statefarm.com -site:example.org"},
        "web": {
            "type": "search",
            "results": [
                {"title": "A", "url": "https://newsroom.statefarm.com/update"},
                {"title": "B", "url": "https://www.statefarm.com/insurance"},
                {"title": "C", "url": "https://notstatefarm.com/x"},
                {"title": "D"},
            ],
        },
    }
    assert [hit.title for hit in parse(200, {}, body)] == ["A", "B"]


def test_non_object_entries_are_skipped() -> None:
    body = {"type": "search", "web": {"results": ["junk", None, {"url": "https://a.example/"}]}}
    (hit,) = parse(200, {}, body)
    assert hit.url == "https://a.example/"


# --- parse_response: failures ------------------------------------------------------------


def test_invalid_token_is_auth_failed_despite_status_422() -> None:
    with pytest.raises(AuthFailed, match="SUBSCRIPTION_TOKEN_INVALID") as caught:
        parse(422, {"content-type": "application/json"}, load("error_token_invalid.json"))
    assert caught.value.http_status == 422
    assert caught.value.category == "non_recoverable"


def test_subscription_not_found_is_auth_failed() -> None:
    with pytest.raises(AuthFailed, match="No subscription found"):
        parse(404, {}, load("error_subscription_not_found.json"))


def test_option_not_in_plan_is_auth_failed_with_a_hint() -> None:
    with pytest.raises(AuthFailed, match="plan lacks this option") as caught:
        parse(400, {}, load("error_option_not_in_plan.json"))
    assert caught.value.http_status == 400


def test_validation_error_is_rejected() -> None:
    with pytest.raises(ProviderRejected, match="VALIDATION") as caught:
        parse(422, {}, load("error_validation.json"))
    assert caught.value.category == "non_recoverable"


@pytest.mark.parametrize("status", [401, 403])
def test_plain_auth_statuses_are_auth_failed(status: int) -> None:
    error = raised(AuthFailed, parse, status, {}, "Unauthorized")
    assert error.http_status == status


def test_http_429_carries_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"Retry-After": "30"}, load("error_rate_limited.json"))
    assert error.retry_after_s == 30.0
    assert error.http_status == 429
    assert "RATE_LIMITED" in error.message


def test_429_without_retry_after_waits_for_the_spent_window() -> None:
    headers = {
        "x-ratelimit-limit": "1, 15000",
        "x-ratelimit-remaining": "0, 1000",
        "x-ratelimit-reset": "1, 1419704",
    }
    error = raised(RateLimited, parse, 429, headers, load("error_rate_limited.json"))
    assert error.retry_after_s == 1.0


def test_spent_monthly_quota_rests_until_the_month_resets() -> None:
    headers = {
        "X-RateLimit-Limit": "1, 2000",
        "X-RateLimit-Remaining": "1, 0",
        "X-RateLimit-Reset": "1, 1419704",
    }
    with pytest.raises(QuotaExceeded, match="QUOTA_LIMITED") as caught:
        parse(429, headers, load("error_quota_limited.json"))
    assert caught.value.retry_after_s == 1419704.0
    assert caught.value.category == "non_recoverable"


def test_rate_limited_with_the_month_spent_is_the_quota_not_the_rate() -> None:
    headers = {"X-RateLimit-Remaining": "1, 0", "X-RateLimit-Reset": "1, 86400"}
    body = {"type": "ErrorResponse", "error": {"status": 429, "code": "RATE_LIMITED"}}
    error = raised(QuotaExceeded, parse, 429, headers, body)
    assert error.retry_after_s == 86400.0


def test_rate_limited_with_the_second_spent_is_retried() -> None:
    headers = {"X-RateLimit-Remaining": "0, 1500", "X-RateLimit-Reset": "1, 86400"}
    body = {"type": "ErrorResponse", "error": {"status": 429, "code": "RATE_LIMITED"}}
    error = raised(RateLimited, parse, 429, headers, body)
    assert error.retry_after_s == 1.0


def test_429_with_a_text_body_is_still_rate_limited() -> None:
    error = raised(RateLimited, parse, 429, {"x-ratelimit-reset": "1, 86400"}, "Too Many Requests")
    assert error.retry_after_s == 1.0


def test_http_500_is_bad_response() -> None:
    error = raised(BadResponse, parse, 500, {}, "Internal Server Error")
    assert error.http_status == 500


@pytest.mark.parametrize("status", [502, 503])
def test_gateway_errors_are_unavailable(status: int) -> None:
    with pytest.raises(ProviderUnavailable) as caught:
        parse(status, {}, "<html><body>503 Service Temporarily Unavailable</body></html>")
    assert caught.value.http_status == status
    assert caught.value.category == "recoverable"


def test_html_page_with_status_200_is_bad_response() -> None:
    page = "<!DOCTYPE html><html><body>Just a moment...</body></html>"
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {"content-type": "text/html"}, page)


def test_error_body_with_status_200_is_mapped_by_code() -> None:
    error = raised(AuthFailed, parse, 200, {}, load("error_token_invalid.json"))
    assert error.http_status == 422


def test_results_that_are_not_a_list_are_bad_response() -> None:
    with pytest.raises(BadResponse, match=r"web\.results"):
        parse(200, {}, {"type": "search", "web": {"type": "search", "results": {"0": {}}}})


def test_json_of_another_shape_is_bad_response() -> None:
    with pytest.raises(BadResponse):
        parse(200, {}, {"status": "ok", "items": []})


# --- end to end over HTTP ----------------------------------------------------------------


async def test_request_and_parse_against_a_local_server(
    httpserver: HTTPServer, http_transport: HttpTransport
) -> None:
    httpserver.expect_request(
        "/res/v1/web/search",
        method="GET",
        headers={"X-Subscription-Token": KEY, "Accept": "application/json"},
        query_string={
            "q": "what's new in python 3.13",
            "count": "10",
            "result_filter": "web,infobox,faq,news",
            "text_decorations": "false",
            "search_lang": "en",
            "ui_lang": "en-US",
            "freshness": "py",
        },
    ).respond_with_json(
        load("search_ok.json"),
        headers={"X-RateLimit-Remaining": "0, 1999", "X-RateLimit-Reset": "1, 2591000"},
    )
    settings = ProviderSettings(base_url=httpserver.url_for("/res/v1/web/search"), api_key=KEY)
    request = brave.build_request(
        query("what's new in python 3.13", max_results=10, time_range="past_year"), settings
    )

    response = await http_transport.send("brave", "what's new in python 3.13", request, 3.0)

    hits = brave.parse_response(response.status, response.headers, response.body, MAPPING)
    assert response.status == 200
    assert hits[0].url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert hits[1].published_at == "2024-10-07T00:00:00"
    assert len(hits) == 5
    httpserver.check_assertions()


def test_cassette_line_replays_the_documented_body() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert (entry["provider"], entry["query"], entry["status"]) == (
        "brave",
        "what's new in python 3.13",
        200,
    )
    hits = parse(entry["status"], entry["headers"], entry["body"])
    urls = [hit.url for hit in hits]
    assert "https://docs.python.org/3/whatsnew/3.13.html" in urls
    assert any(hit.snippet is None for hit in hits)


def test_infobox_faq_and_news_sections_are_results() -> None:
    hits = parse(200, {}, load("search_sections.json"))

    sections = [hit.fields.get("section") for hit in hits]
    assert sections == ["infobox", None, None, None, "faq", "news"]
    infobox, faq, news = hits[0], hits[4], hits[5]
    assert infobox.title == "Python (programming language)"
    assert infobox.url == "https://en.wikipedia.org/wiki/Python_(programming_language)"
    assert infobox.snippet is not None
    assert infobox.snippet.startswith("Python is a high-level, general-purpose")
    assert infobox.fields["attributes"]["Designed by"] == "Guido van Rossum"
    assert infobox.fields["website_url"] == "https://www.python.org/"
    assert (faq.title, faq.url) == ("What is Python?", "https://docs.python.org/3/faq/general.html")
    assert faq.snippet is not None
    assert faq.snippet.startswith("Python is an interpreted, interactive")
    assert faq.fields["page_title"] == "General Python FAQ — Python 3.13.1 documentation"
    assert news.published_at == "2024-10-07T00:00:00"
    assert news.fields["source"] == "python.org"
    assert news.fields["age"] == "October 7, 2024"
