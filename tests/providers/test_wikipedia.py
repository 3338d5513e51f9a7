"""Wikipedia provider: request building and parsing of recorded Action API bodies."""

from __future__ import annotations

import pytest
from helpers import body_loader, data_dir, parser, query_maker, raised

from sleuth.errors import (
    AuthFailed,
    BadResponse,
    ProviderRejected,
    ProviderUnavailable,
    RateLimited,
)
from sleuth.mapping_files import builtin_mapping
from sleuth.providers import wikipedia
from sleuth.providers.base import ProviderSettings

MAPPING = builtin_mapping("wikipedia")
DATA = data_dir("wikipedia")
load = body_loader(DATA)
parse = parser(wikipedia, MAPPING)


SETTINGS = ProviderSettings(base_url="")
query = query_maker("Nelson Mandela")


# --- build_request ---------------------------------------------------------------------


def test_request_follows_the_list_search_docs() -> None:
    request = wikipedia.build_request(query(), SETTINGS)

    assert request.method == "GET"
    assert request.url == "https://en.wikipedia.org/w/api.php"
    assert request.params == {
        "action": "query",
        "list": "search",
        "srsearch": "Nelson Mandela",
        "srlimit": "5",
        "srprop": "snippet|timestamp|wordcount|size",
        "meta": "siteinfo",
        "siprop": "general",
        "format": "json",
        "formatversion": "2",
        "utf8": "1",
        "maxlag": "5",
    }


def test_user_agent_is_descriptive_with_contact() -> None:
    user_agent = wikipedia.build_request(query(), SETTINGS).headers["User-Agent"]
    assert user_agent.startswith("sleuth/")
    assert "(" in user_agent
    assert "@" in user_agent


def test_user_agent_and_maxlag_come_from_options() -> None:
    settings = ProviderSettings(
        base_url="", options={"user_agent": "acme-agent/2.0 (ops@acme.test)", "maxlag": 0}
    )
    request = wikipedia.build_request(query(), settings)
    assert request.headers["User-Agent"] == "acme-agent/2.0 (ops@acme.test)"
    assert "maxlag" not in request.params


@pytest.mark.parametrize(
    ("language", "host"),
    [("zh", "zh.wikipedia.org"), ("en", "en.wikipedia.org"), ("fr", "en.wikipedia.org")],
)
def test_wiki_follows_the_query_language(language: str, host: str) -> None:
    request = wikipedia.build_request(query("人工智能", language=language), SETTINGS)
    assert request.url == f"https://{host}/w/api.php"
    assert request.params["srsearch"] == "人工智能"


def test_lang_option_beats_query_language() -> None:
    settings = ProviderSettings(base_url="", options={"lang": "de"})
    assert wikipedia.build_request(query(), settings).url == "https://de.wikipedia.org/w/api.php"


def test_base_url_template_is_filled() -> None:
    settings = ProviderSettings(base_url="https://{lang}.m.wikipedia.org/w/api.php")
    request = wikipedia.build_request(query(language="zh"), settings)
    assert request.url == "https://zh.m.wikipedia.org/w/api.php"


def test_base_url_without_placeholder_is_used_as_is() -> None:
    settings = ProviderSettings(base_url="https://wiki.example.org/w/api.php")
    assert wikipedia.build_request(query(), settings).url == "https://wiki.example.org/w/api.php"


@pytest.mark.parametrize(("max_results", "srlimit"), [(1, "1"), (20, "20"), (500, "50"), (0, "1")])
def test_srlimit_is_max_results_within_bounds(max_results: int, srlimit: str) -> None:
    request = wikipedia.build_request(query(max_results=max_results), SETTINGS)
    assert request.params["srlimit"] == srlimit


def test_info_declares_native_capabilities() -> None:
    info = wikipedia.PROVIDER.info
    assert info.name == "wikipedia"
    assert info.docs_url == "https://www.mediawiki.org/wiki/API:Search"
    assert (info.time_range, info.domain_filter, info.language) == (False, False, True)
    assert info.query_style == "keywords"
    assert not info.needs_key


# --- parse_response: good bodies ---------------------------------------------------------


def test_results_keep_titles_snippets_and_the_last_edit_as_sent() -> None:
    hits = parse(200, {}, load("search_en.json"))

    assert len(hits) == 4
    mandela = hits[0]
    assert mandela.title == "Nelson Mandela"
    assert mandela.url == "https://en.wikipedia.org/wiki/Nelson_Mandela"
    assert mandela.snippet is not None
    assert mandela.snippet.startswith('<span class="searchmatch">Nelson</span> Rolihlahla')
    # `timestamp` is the last edit, not a publication date
    assert mandela.published_at is None
    assert mandela.fields == {
        "pageid": 21492751,
        "wordcount": 23664,
        "size": 196026,
        "last_edited": "2018-07-23T07:59:43Z",
    }
    assert hits[1].url == "https://en.wikipedia.org/wiki/Death_of_Nelson_Mandela"


def test_missing_snippet_timestamp_and_title_stay_missing() -> None:
    _, _, no_snippet, no_title = parse(200, {}, load("search_en.json"))

    assert no_snippet.snippet is None  # snippet: ""
    assert "last_edited" not in no_snippet.fields  # no timestamp
    assert no_title.title is None
    assert no_title.url is None  # no title, no URL
    assert no_title.fields["last_edited"] == "2020-01-01T00:00:00Z"


def test_titles_are_encoded_like_mediawiki_page_links() -> None:
    hits = parse(200, {}, load("search_en.json"))
    assert hits[2].url == (
        "https://en.wikipedia.org/wiki/C%2B%2B/CLI_(Mandela%27s_%22test%22_page%3F)"
    )


def test_chinese_titles_are_percent_encoded_on_the_zh_host() -> None:
    first, second = parse(200, {}, load("search_zh.json"))
    assert first.title == "人工智能"
    assert first.url == "https://zh.wikipedia.org/wiki/%E4%BA%BA%E5%B7%A5%E6%99%BA%E8%83%BD"
    assert (first.published_at, first.fields["last_edited"]) == (None, "2025-02-27T03:14:15Z")
    assert (
        second.url == "https://zh.wikipedia.org/wiki/%E4%BA%BA%E5%B7%A5%E6%99%BA%E8%83%BD%E5%8F%B2"
    )


def test_without_siteinfo_no_url_is_invented() -> None:
    (hit,) = parse(200, {}, load("search_no_siteinfo.json"))
    assert hit.title == "Nelson Mandela"
    assert hit.url is None


def test_wiki_with_its_own_article_path() -> None:
    body = {
        "batchcomplete": True,
        "query": {
            "search": [{"ns": 0, "title": "Main Page", "snippet": "x"}],
            "general": {"server": "https://wiki.example.org", "articlepath": "/index.php?title=$1"},
        },
    }
    (hit,) = parse(200, {}, body)
    assert hit.url == "https://wiki.example.org/index.php?title=Main_Page"


def test_empty_result_list_is_an_empty_list() -> None:
    assert parse(200, {}, load("search_empty.json")) == []


# --- parse_response: MediaWiki error objects (HTTP 200) ----------------------------------


def test_bad_parameter_error_is_rejected() -> None:
    with pytest.raises(ProviderRejected, match="badvalue") as caught:
        parse(200, {"MediaWiki-API-Error": "badvalue"}, load("error_badvalue.json"))
    assert caught.value.http_status == 200
    assert caught.value.category == "non_recoverable"
    assert 'Unrecognized value for parameter "srwhat"' in caught.value.message


def test_formatversion_1_error_shape_is_understood() -> None:
    with pytest.raises(ProviderRejected, match="missingparam"):
        parse(200, {}, load("error_missingparam_fv1.json"))


def test_maxlag_error_is_rate_limited_with_retry_after() -> None:
    headers = {"Retry-After": "5", "X-Database-Lag": "6", "MediaWiki-API-Error": "maxlag"}
    with pytest.raises(RateLimited, match="seconds lagged") as caught:
        parse(200, headers, load("error_maxlag.json"))
    assert caught.value.retry_after_s == 5.0
    assert caught.value.category == "recoverable"


def test_ratelimited_error_is_rate_limited() -> None:
    error = raised(RateLimited, parse, 200, {}, load("error_ratelimited.json"))
    assert error.retry_after_s is None


def test_read_denied_is_auth_failed() -> None:
    with pytest.raises(AuthFailed, match="readapidenied"):
        parse(200, {}, load("error_readapidenied.json"))


@pytest.mark.parametrize("code", ["readonly", "internal_api_error_DBQueryError"])
def test_server_side_errors_are_unavailable(code: str) -> None:
    body = {"error": {"code": code, "info": "Try again later."}, "servedby": "mw1"}
    with pytest.raises(ProviderUnavailable):
        parse(200, {}, body)


def test_errorformat_list_shape_is_understood() -> None:
    body = {"errors": [{"code": "ratelimited", "text": "Slow down.", "module": "main"}]}
    with pytest.raises(RateLimited, match="Slow down"):
        parse(200, {}, body)


# --- parse_response: HTTP failures and broken bodies -------------------------------------


def test_http_403_user_agent_block_is_auth_failed() -> None:
    text = "Please set a user-agent and respect our robot policy https://w.wiki/4wJS."
    error = raised(AuthFailed, parse, 403, {"content-type": "text/plain"}, text)
    assert error.http_status == 403
    assert "user-agent" in error.message


def test_http_401_is_auth_failed() -> None:
    with pytest.raises(AuthFailed):
        parse(401, {}, "Unauthorized")


def test_http_429_carries_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"retry-after": "120"}, "Too many requests")
    assert error.retry_after_s == 120.0


@pytest.mark.parametrize(("status", "error"), [(500, BadResponse), (503, ProviderUnavailable)])
def test_server_errors(status: int, error: type[Exception]) -> None:
    with pytest.raises(error):
        parse(status, {}, "<html><body>Wikimedia Error</body></html>")


def test_html_page_with_status_200_is_bad_response() -> None:
    page = "<!DOCTYPE html><html><head><title>Wikimedia Error</title></head></html>"
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {"content-type": "text/html"}, page)


def test_search_that_is_not_a_list_is_bad_response() -> None:
    with pytest.raises(BadResponse, match=r"query\.search"):
        parse(200, {}, load("search_not_list.json"))


def test_object_without_query_is_bad_response() -> None:
    with pytest.raises(BadResponse):
        parse(200, {}, {"batchcomplete": True})
