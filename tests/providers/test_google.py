"""Google Custom Search JSON API provider: request building and parsing of `cse.list` bodies.

The bodies under tests/data/google/ were written by hand from the documentation (REST
Resource `Search`, the `Result` fields, Google's JSON error format) with realistic
values; error bodies follow the ones the API is seen to send for each reason.
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
    ConfigError,
    MissingApiKey,
    ProviderRejected,
    ProviderUnavailable,
    QuotaExceeded,
    RateLimited,
)
from sleuth.mapping_files import builtin_mapping
from sleuth.providers import google
from sleuth.providers.base import ProviderSettings
from sleuth.transport import HttpTransport, RecordingTransport, ReplayTransport

MAPPING = builtin_mapping("google")
DATA = data_dir("google")
load = body_loader(DATA)
parse = parser(google, MAPPING)
KEY = "AIzaSyD-test-key-0123456789abcdefghijk"
CX = "017576662512468239146:omuauf_lfve"
SETTINGS = ProviderSettings(
    base_url="https://www.googleapis.com/customsearch/v1", api_key=KEY, options={"cx": CX}
)
query = query_maker("python 3.13 what's new", original="what's new in python 3.13")


# --- build_request ---------------------------------------------------------------------


def test_request_is_a_get_with_key_cx_and_query_params() -> None:
    request = google.build_request(query(), SETTINGS)

    assert request.method == "GET"
    assert request.url == "https://www.googleapis.com/customsearch/v1"
    assert request.params == {
        "key": KEY,
        "cx": CX,
        "q": "python 3.13 what's new",
        "num": "5",
        "start": "1",
        "lr": "lang_en",
        "hl": "en",
    }
    assert KEY not in str(request.headers)
    assert request.headers["Accept"] == "application/json"


def test_default_endpoint_when_base_url_is_empty() -> None:
    settings = ProviderSettings(base_url="", api_key=KEY, options={"cx": CX})
    assert google.build_request(query(), settings).url == google.DEFAULT_URL


@pytest.mark.parametrize(("max_results", "num"), [(1, "1"), (10, "10"), (20, "10"), (0, "1")])
def test_num_is_max_results_within_one_to_ten(max_results: int, num: str) -> None:
    request = google.build_request(query(max_results=max_results), SETTINGS)
    assert request.params["num"] == num


@pytest.mark.parametrize(
    ("time_range", "expected"), [("past_week", "d7"), ("past_month", "m1"), ("past_year", "y1")]
)
def test_time_range_is_date_restrict(time_range: TimeRange, expected: str) -> None:
    request = google.build_request(query(time_range=time_range), SETTINGS)
    assert request.params["dateRestrict"] == expected


def test_time_range_any_sends_no_date_restrict() -> None:
    assert "dateRestrict" not in google.build_request(query(), SETTINGS).params


def test_one_domain_is_site_search_included() -> None:
    params = google.build_request(query(domain_filter=("docs.python.org",)), SETTINGS).params
    assert params["siteSearch"] == "docs.python.org"
    assert params["siteSearchFilter"] == "i"
    assert params["q"] == "python 3.13 what's new"


def test_several_domains_are_site_operators_in_the_query() -> None:
    params = google.build_request(
        query(domain_filter=("docs.python.org", "peps.python.org")), SETTINGS
    ).params
    assert params["q"] == "python 3.13 what's new site:docs.python.org OR site:peps.python.org"
    assert "siteSearch" not in params


@pytest.mark.parametrize(
    ("language", "lr", "hl"),
    [("zh", "lang_zh-CN", "zh-CN"), ("en", "lang_en", "en"), ("fr", None, None)],
)
def test_language_is_lr_and_hl(language: str, lr: str | None, hl: str | None) -> None:
    params = google.build_request(query("人工智能 发展", language=language), SETTINGS).params
    assert params.get("lr") == lr
    assert params.get("hl") == hl
    assert params["q"] == "人工智能 发展"


def test_options_set_safe_gl_and_override_language() -> None:
    settings = ProviderSettings(
        base_url="",
        api_key=KEY,
        options={"cx": CX, "safe": "active", "gl": "cn", "lr": "", "hl": "zh-TW"},
    )
    params = google.build_request(query(language="zh"), settings).params
    assert params["safe"] == "active"
    assert params["gl"] == "cn"
    assert params["hl"] == "zh-TW"
    assert "lr" not in params


def test_missing_cx_is_a_config_error_naming_the_option() -> None:
    settings = ProviderSettings(base_url="", api_key=KEY)
    with pytest.raises(ConfigError, match=r"options\.cx") as caught:
        google.build_request(query(), settings)
    assert caught.value.field == "providers.google.options.cx"


def test_missing_key_is_never_sent_keyless() -> None:
    with pytest.raises(MissingApiKey):
        google.build_request(query(), ProviderSettings(base_url="", options={"cx": CX}))


def test_info_declares_native_capabilities() -> None:
    info = google.PROVIDER.info
    assert info.name == "google"
    assert info.docs_url.startswith("https://developers.google.com/custom-search/")
    assert (info.time_range, info.domain_filter, info.language) == (True, True, True)
    assert info.query_style == "keywords"
    assert info.needs_key
    assert info.max_results == 10


# --- parse_response: good bodies ---------------------------------------------------------


def test_results_keep_titles_urls_snippets_and_dates_as_sent() -> None:
    hits = parse(200, {"content-type": "application/json"}, load("search_ok.json"))

    assert [hit.url for hit in hits] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://realpython.com/python313-new-features/",
        "https://www.python.org/downloads/release/python-3130/",
        "https://news.example.com/python-313-free-threading",
        "https://example.org/python-313-notes.pdf",
    ]
    docs, realpython, _, news, pdf = hits
    assert docs.title == "What's New In Python 3.13 — Python 3.13.0 documentation"
    assert docs.snippet is not None
    assert docs.snippet.startswith("This article explains the new features in Python 3.13")
    assert docs.published_at is None  # no date meta tag
    assert docs.fell_back == ()
    assert realpython.published_at == "2024-10-02T14:00:00+00:00"
    assert realpython.fell_back == ()
    assert news.published_at == "Tue, 08 Oct 2024 06:30:00 GMT"  # RFC 2822, a later alias
    assert news.fell_back == ("published_at",)
    assert pdf.title == "Python 3.13 migration notes"


def test_missing_snippet_falls_back_to_og_description_and_says_so() -> None:
    release = parse(200, {}, load("search_ok.json"))[2]
    assert release.snippet == "The official home of the Python Programming Language"
    assert release.fell_back == ("snippet",)


def test_result_without_snippet_or_description_has_no_snippet() -> None:
    pdf = parse(200, {}, load("search_ok.json"))[4]
    assert pdf.snippet is None
    assert pdf.published_at is None  # "8 October 2024" is not ISO 8601 / RFC 2822
    assert pdf.fields["published_text"] == "8 October 2024"
    assert pdf.fields["file_format"] == "PDF/Adobe Acrobat"
    assert pdf.fields["mime"] == "application/pdf"


def test_stable_extras_are_kept_in_fields() -> None:
    docs, realpython, *_ = parse(200, {}, load("search_ok.json"))
    assert docs.fields == {
        "display_link": "docs.python.org",
        "formatted_url": "https://docs.python.org/3/whatsnew/3.13.html",
        "site_name": "Python documentation",
        "thumbnail": (
            "https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcQm2ZfT0b9Kx3c1pYd8cV5hN7m0Z4q1rX9sWbE"
        ),
    }
    assert realpython.fields["modified_at"] == "2024-10-03T09:12:45+00:00"
    assert "published_text" not in realpython.fields


def test_chinese_results_are_kept_verbatim() -> None:
    (hit,) = parse(200, {}, load("search_zh.json"))
    assert hit.title == "人工智能 - 维基百科，自由的百科全书"
    assert hit.url == "https://zh.wikipedia.org/wiki/%E4%BA%BA%E5%B7%A5%E6%99%BA%E8%83%BD"
    assert hit.snippet is not None
    assert hit.snippet.startswith("人工智能（英语")
    assert hit.published_at == "2025-03-01T08:15:00Z"


def test_no_items_key_is_an_empty_list() -> None:
    body = load("search_empty.json")
    assert "items" not in body
    assert parse(200, {}, body) == []


def test_empty_items_list_is_an_empty_list() -> None:
    assert parse(200, {}, {**load("search_empty.json"), "items": []}) == []


def test_renamed_field_is_read_after_adding_the_new_name_to_the_mapping() -> None:
    body = load("search_ok.json")
    body["items"] = [{"url": item.pop("link"), **item} for item in body["items"]]
    assert all(hit.url is None for hit in parse(200, {}, body))

    renamed = MAPPING.model_copy(update={"fields": {**MAPPING.fields, "url": ["link", "url"]}})
    hits = google.parse_response(200, {}, body, renamed)
    assert hits[0].url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert hits[0].fell_back == ("url",)


def test_non_object_items_are_skipped() -> None:
    body = {"kind": "customsearch#search", "items": ["junk", None, {"link": "https://a.example/"}]}
    (hit,) = parse(200, {}, body)
    assert hit.url == "https://a.example/"
    assert hit.title is None


# --- parse_response: failures ------------------------------------------------------------


def test_http_401_is_auth_failed() -> None:
    error = raised(AuthFailed, parse, 401, {}, "Unauthorized")
    assert error.http_status == 401


def test_http_403_html_is_auth_failed() -> None:
    with pytest.raises(AuthFailed):
        parse(403, {"content-type": "text/html"}, "<html><title>403 Forbidden</title></html>")


def test_the_days_queries_used_up_is_quota_exceeded_with_its_retry_after() -> None:
    error = raised(QuotaExceeded, parse, 429, {"retry-after": "30"}, load("error_429_quota.json"))
    assert error.retry_after_s == 30.0
    assert error.http_status == 429
    assert "rateLimitExceeded" in error.message
    assert "Queries per day" in error.message


def test_http_429_without_a_body_carries_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"Retry-After": "12"}, "Too Many Requests")
    assert error.retry_after_s == 12.0


def test_daily_limit_sent_as_403_rests_until_midnight_pacific() -> None:
    headers = {"Date": "Mon, 03 Mar 2025 20:00:00 GMT"}  # 12:00 in Mountain View (PST)
    error = raised(QuotaExceeded, parse, 403, headers, load("error_403_daily_limit.json"))
    assert error.http_status == 403
    assert error.category == "non_recoverable"
    assert error.retry_after_s == 12 * 3600


def test_a_per_minute_rate_limit_is_still_retried() -> None:
    body = {
        "error": {
            "code": 429,
            "message": "Quota exceeded for quota metric 'Queries' and limit 'Queries per "
            "minute' of service 'customsearch.googleapis.com'",
            "errors": [{"reason": "rateLimitExceeded", "domain": "global", "message": "x"}],
            "status": "RESOURCE_EXHAUSTED",
        }
    }
    assert raised(RateLimited, parse, 429, {}, body).category == "recoverable"


@pytest.mark.parametrize(
    "name", ["error_400_key_invalid.json", "error_400_key_invalid_legacy.json"]
)
def test_invalid_key_sent_as_400_is_auth_failed(name: str) -> None:
    error = raised(AuthFailed, parse, 400, {}, load(name))
    assert error.http_status == 400
    assert error.category == "non_recoverable"


def test_project_without_access_is_auth_failed() -> None:
    with pytest.raises(AuthFailed, match="does not have the access") as caught:
        parse(403, {}, load("error_403_no_access.json"))
    assert "PERMISSION_DENIED" in caught.value.message


def test_invalid_argument_is_rejected() -> None:
    with pytest.raises(ProviderRejected, match="invalid argument"):
        parse(400, {}, load("error_400_invalid_argument.json"))


def test_backend_error_json_is_unavailable() -> None:
    error = raised(ProviderUnavailable, parse, 500, {}, load("error_500_backend.json"))
    assert error.http_status == 500


def test_http_500_without_error_json_is_bad_response() -> None:
    error = raised(BadResponse, parse, 500, {}, "Internal Server Error")
    assert error.http_status == 500


def test_http_503_is_unavailable() -> None:
    with pytest.raises(ProviderUnavailable) as caught:
        parse(503, {"content-type": "text/html"}, "<html>Service Unavailable</html>")
    assert caught.value.http_status == 503


def test_html_page_with_status_200_is_bad_response() -> None:
    page = "<!DOCTYPE html><html><body>Our systems have detected unusual traffic</body></html>"
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {"content-type": "text/html"}, page)


def test_items_that_are_not_a_list_are_bad_response() -> None:
    with pytest.raises(BadResponse, match="items"):
        parse(200, {}, {"kind": "customsearch#search", "items": {"link": "https://a.example/"}})


def test_object_that_is_not_a_search_response_is_bad_response() -> None:
    with pytest.raises(BadResponse, match="not a search response"):
        parse(200, {}, {"hello": "world"})


# --- cassette and a real local server ----------------------------------------------------


def test_cassette_replays_the_documented_body() -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert entry["provider"] == "google"
    assert entry["query"] == "what's new in python 3.13"
    assert entry["body"] == load("search_ok.json")
    hits = parse(entry["status"], entry["headers"], entry["body"])
    assert "https://docs.python.org/3/whatsnew/3.13.html" in [hit.url for hit in hits]
    assert any("snippet" not in item for item in entry["body"]["items"])


async def test_end_to_end_against_a_local_server_and_key_stays_out_of_the_cassette(
    httpserver: HTTPServer, http_transport: HttpTransport, tmp_path: Path
) -> None:
    body = load("search_ok.json")
    httpserver.expect_request(
        "/customsearch/v1",
        method="GET",
        headers={"Accept": "application/json"},
        query_string={
            "key": KEY,
            "cx": CX,
            "q": "python 3.13 what's new",
            "num": "5",
            "start": "1",
            "lr": "lang_en",
            "hl": "en",
        },
    ).respond_with_json(body)
    settings = ProviderSettings(
        base_url=httpserver.url_for("/customsearch/v1"), api_key=KEY, options={"cx": CX}
    )
    request = google.build_request(query(), settings)
    cassette = tmp_path / "google.jsonl"
    transport = RecordingTransport(http_transport, cassette)

    response = await transport.send("google", "what's new in python 3.13", request, 2.0)
    await transport.aclose()

    httpserver.check_assertions()
    hits = google.parse_response(response.status, response.headers, response.body, MAPPING)
    assert hits[0].url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert hits[1].published_at == "2024-10-02T14:00:00+00:00"
    recorded = cassette.read_text(encoding="utf-8")
    assert KEY not in recorded
    assert "key=" not in recorded
    replayed = await ReplayTransport.from_file(cassette).send(
        "google", "what's new in python 3.13", request, 1.0
    )
    assert replayed.body == body


def test_every_documented_publication_meta_tag_is_a_date() -> None:
    docs, realpython, release, news = parse(200, {}, load("search_metatags.json"))

    assert realpython.published_at == "2024-10-02"  # publish-date
    assert release.published_at == "2024-10-07"  # publisheddatetime
    assert news.published_at == "2024-10-08"  # dc.date, before dc.date.issued
    # og:updated_time is when the page last changed: an extra, not a publication date
    assert docs.published_at is None
    assert docs.fields["modified_at"] == "2024-10-03T09:12:45+00:00"
