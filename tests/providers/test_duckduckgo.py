"""DuckDuckGo provider (via ddgs): the `ddgs:text` call description and result parsing.

The bodies under tests/data/duckduckgo/ are written by hand, shaped exactly as the
transport builds them from `DDGS().text()`: `{"results": [...]}` holding ddgs's
`TextResult.__dict__` (`title`, `href`, `body`, "" when missing), with realistic
values. There is no HTTP endpoint of ours, so the end-to-end check replays the
cassette instead of calling a local server.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from helpers import body_loader, data_dir, parser, query_maker, raised

from sleuth.contract import TimeRange
from sleuth.errors import (
    AuthFailed,
    BadResponse,
    ConfigError,
    ProviderRejected,
    ProviderUnavailable,
    RateLimited,
)
from sleuth.mapping_files import builtin_mapping
from sleuth.providers import duckduckgo
from sleuth.providers.base import ProviderSettings
from sleuth.transport import ReplayTransport

MAPPING = builtin_mapping("duckduckgo")
DATA = data_dir("duckduckgo")
load = body_loader(DATA)
parse = parser(duckduckgo, MAPPING)
SETTINGS = ProviderSettings(base_url="")
query = query_maker("python 3.13 release notes")


# --- build_request ---------------------------------------------------------------------


def test_request_describes_a_ddgs_text_call() -> None:
    request = duckduckgo.build_request(query(), SETTINGS)

    assert request.method == "GET"
    assert request.url == "ddgs:text"
    assert request.params == {
        "q": "python 3.13 release notes",
        "region": "us-en",
        "safesearch": "moderate",
        "max_results": "5",
        "backend": "duckduckgo",
    }
    assert all(isinstance(value, str) for value in request.params.values())
    assert request.headers == {}
    assert request.json is None


def test_base_url_is_not_used() -> None:
    settings = ProviderSettings(base_url="http://x.example")
    assert duckduckgo.build_request(query(), settings).url == "ddgs:text"


@pytest.mark.parametrize(("asked", "sent"), [(1, "1"), (5, "5"), (10, "10"), (20, "10"), (0, "1")])
def test_max_results_is_capped_at_one_results_page(asked: int, sent: str) -> None:
    request = duckduckgo.build_request(query(max_results=asked), SETTINGS)
    assert request.params["max_results"] == sent


@pytest.mark.parametrize(
    ("time_range", "expected"), [("past_week", "w"), ("past_month", "m"), ("past_year", "y")]
)
def test_time_range_is_mapped_to_timelimit(time_range: TimeRange, expected: str) -> None:
    request = duckduckgo.build_request(query(time_range=time_range), SETTINGS)
    assert request.params["timelimit"] == expected


def test_time_range_any_omits_timelimit() -> None:
    assert "timelimit" not in duckduckgo.build_request(query(time_range="any"), SETTINGS).params


def test_one_domain_becomes_a_site_operator() -> None:
    request = duckduckgo.build_request(
        query("asyncio taskgroup", domain_filter=("python.org",)), SETTINGS
    )
    assert request.params["q"] == "asyncio taskgroup site:python.org"


def test_several_domains_are_or_ed() -> None:
    request = duckduckgo.build_request(
        query("asyncio taskgroup", domain_filter=("python.org", "realpython.com")), SETTINGS
    )
    assert request.params["q"] == "asyncio taskgroup site:python.org OR site:realpython.com"


@pytest.mark.parametrize(
    ("language", "expected"), [("zh", "cn-zh"), ("en", "us-en"), ("fr", "wt-wt"), ("", "wt-wt")]
)
def test_language_is_mapped_to_region(language: str, expected: str) -> None:
    request = duckduckgo.build_request(query("人工智能 发展", language=language), SETTINGS)
    assert request.params["region"] == expected
    assert request.params["q"] == "人工智能 发展"


def test_region_option_overrides_for_every_language() -> None:
    settings = ProviderSettings(base_url="", options={"region": "WT-WT"})
    assert duckduckgo.build_request(query(language="zh"), settings).params["region"] == "wt-wt"


def test_region_option_may_map_languages() -> None:
    settings = ProviderSettings(base_url="", options={"region": {"zh": "tw-tzh"}})
    assert duckduckgo.build_request(query(language="zh"), settings).params["region"] == "tw-tzh"
    assert duckduckgo.build_request(query(language="en"), settings).params["region"] == "us-en"


def test_bad_region_is_a_config_error() -> None:
    settings = ProviderSettings(base_url="", options={"region": "China"})
    with pytest.raises(ConfigError, match="region"):
        duckduckgo.build_request(query(), settings)


def test_safesearch_and_backend_options() -> None:
    settings = ProviderSettings(
        base_url="", options={"safesearch": "Off", "backend": ["duckduckgo", "brave"]}
    )
    params = duckduckgo.build_request(query(), settings).params
    assert params["safesearch"] == "off"
    assert params["backend"] == "duckduckgo,brave"


def test_backend_given_as_a_comma_separated_string() -> None:
    settings = ProviderSettings(base_url="", options={"backend": "duckduckgo, mojeek"})
    assert duckduckgo.build_request(query(), settings).params["backend"] == "duckduckgo,mojeek"


@pytest.mark.parametrize("backend", ["google", "bing", "duckgo"])
def test_unknown_or_disabled_backend_is_refused_not_turned_into_auto(backend: str) -> None:
    settings = ProviderSettings(base_url="", options={"backend": backend})
    with pytest.raises(ConfigError, match="allowed: all, auto, brave, duckduckgo"):
        duckduckgo.build_request(query(), settings)


def test_bad_safesearch_is_a_config_error() -> None:
    settings = ProviderSettings(base_url="", options={"safesearch": "strict"})
    with pytest.raises(ConfigError, match="on, moderate, off"):
        duckduckgo.build_request(query(), settings)


def test_info_declares_native_capabilities() -> None:
    info = duckduckgo.PROVIDER.info
    assert info.name == "duckduckgo"
    assert info.docs_url == "https://github.com/deedy5/ddgs"
    assert (info.time_range, info.domain_filter, info.language) == (True, True, True)
    assert info.query_style == "keywords"
    assert info.max_results == 10
    assert not info.needs_key


def test_module_does_not_import_ddgs() -> None:
    tree = ast.parse(Path(duckduckgo.__file__).read_text(encoding="utf-8"))
    imported = {
        alias.name for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names
    }
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(name.split(".")[0] == "ddgs" for name in imported)


# --- the params fit the installed ddgs ---------------------------------------------------


def test_params_are_keywords_of_ddgs_text() -> None:
    import ddgs  # a dependency: a broken import must fail, not skip

    keywords = set(inspect.signature(ddgs.DDGS._search_sync).parameters)
    request = duckduckgo.build_request(query(time_range="past_year"), SETTINGS)
    assert set(request.params) - {"q"} <= keywords


def test_allowed_backends_are_the_installed_text_engines() -> None:
    from ddgs import engines

    assert set(engines.ENGINES["text"]) | {"auto", "all"} == duckduckgo._BACKENDS


# --- parse_response: good bodies ---------------------------------------------------------


def test_results_keep_titles_urls_and_snippets_as_sent() -> None:
    hits = parse(200, {"content-type": "application/json"}, load("text_ok.json"))

    assert [hit.url for hit in hits] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://www.python.org/downloads/release/python-3130/",
        "https://realpython.com/python313-new-features/",
        "https://docs.python.org/3.13/whatsnew/changelog.html",
        None,
    ]
    first, second, _third, fourth, _fifth = hits
    assert first.title == "What's New In Python 3.13 — Python 3.13.1 documentation"
    assert first.snippet is not None
    assert first.snippet.startswith("This article explains the new features in Python 3.13")
    assert second.title == "Python Release Python 3.13.0 | Python.org"
    assert fourth.snippet is None  # body: ""
    assert all(hit.published_at is None for hit in hits)  # ddgs text results carry no date
    assert all(hit.fields == {} for hit in hits)


def test_a_result_without_snippet_link_has_no_url_and_none_is_made_up() -> None:
    # ddgs reads a DuckDuckGo result's href and body from the same snippet link, so a
    # result without a snippet comes back with href "" as well: only its title is known.
    fifth = parse(200, {}, load("text_ok.json"))[4]
    assert fifth.title == "Python Insider: Python 3.13.0 (final) released"
    assert (fifth.url, fifth.snippet, fifth.published_at) == (None, None, None)


def test_a_record_with_every_field_empty_is_not_a_hit() -> None:
    hits = parse(200, {}, load("text_ok.json"))
    assert len(hits) == 5  # the sixth record is {"title": "", "href": "", "body": ""}


def test_missing_href_stays_missing() -> None:
    (hit,) = parse(200, {}, {"results": [{"title": "Python 3.13", "href": "", "body": "JIT"}]})
    assert hit.url is None
    assert hit.title == "Python 3.13"


def test_missing_keys_count_as_missing() -> None:
    (hit,) = parse(200, {}, {"results": [{"href": "https://a.example/"}]})
    assert (hit.url, hit.title, hit.snippet) == ("https://a.example/", None, None)


def test_a_renamed_field_is_read_after_adding_the_alias() -> None:
    body = {"results": [{"title": "A", "url": "https://a.example/", "description": "about A"}]}
    (before,) = parse(200, {}, body)
    assert (before.url, before.snippet) == (None, None)

    renamed = MAPPING.model_copy(
        update={
            "fields": {
                **MAPPING.fields,
                "url": [*MAPPING.fields["url"], "url"],
                "snippet": [*MAPPING.fields["snippet"], "description"],
            }
        }
    )
    (after,) = duckduckgo.parse_response(200, {}, body, renamed)
    assert (after.url, after.snippet) == ("https://a.example/", "about A")


def test_chinese_results_are_kept_verbatim() -> None:
    (hit,) = parse(200, {}, load("text_zh.json"))
    assert hit.title == "人工智能 - 维基百科，自由的百科全书"
    # ddgs percent-decodes href (utils._normalize_url); it is passed on as it came.
    assert hit.url == "https://zh.wikipedia.org/wiki/人工智能"
    assert hit.snippet is not None
    assert hit.snippet.startswith("人工智能（英语")


def test_empty_result_list_is_an_empty_list() -> None:
    assert parse(200, {}, load("text_empty.json")) == []


def test_non_object_entries_are_skipped() -> None:
    body = {"results": ["junk", None, {"href": "https://a.example/", "title": "A", "body": ""}]}
    (hit,) = parse(200, {}, body)
    assert hit.url == "https://a.example/"


async def test_cassette_replays_through_the_transport() -> None:
    transport = ReplayTransport.from_file(DATA / "cassette.jsonl")
    original = "what's new in python 3.13"
    request = duckduckgo.build_request(query(original), SETTINGS)
    response = await transport.send("duckduckgo", original, request, 3.0)
    await transport.aclose()

    hits = parse(response.status, response.headers, response.body)
    assert hits[0].url == "https://docs.python.org/3/whatsnew/3.13.html?utm_source=duckduckgo"
    assert any(hit.snippet is None for hit in hits)
    assert all(hit.url for hit in hits)


# --- parse_response: failures ------------------------------------------------------------


def test_http_401_is_auth_failed() -> None:
    error = raised(AuthFailed, parse, 401, {}, "Unauthorized")
    assert error.http_status == 401


def test_http_403_is_auth_failed() -> None:
    error = raised(AuthFailed, parse, 403, {}, "<html><title>403 Forbidden</title></html>")
    assert error.http_status == 403


def test_http_429_carries_retry_after() -> None:
    error = raised(RateLimited, parse, 429, {"retry-after": "30"}, "Too Many Requests")
    assert error.retry_after_s == 30.0
    assert error.http_status == 429


def test_http_500_is_bad_response() -> None:
    error = raised(BadResponse, parse, 500, {}, "Internal Server Error")
    assert error.http_status == 500


def test_http_503_is_unavailable() -> None:
    error = raised(ProviderUnavailable, parse, 503, {}, "<html>Service Unavailable</html>")
    assert error.http_status == 503
    assert error.category == "recoverable"


def test_http_400_is_rejected() -> None:
    with pytest.raises(ProviderRejected):
        parse(400, {}, "bad request")


def test_html_page_with_status_200_is_bad_response() -> None:
    page = "<!DOCTYPE html><html><body><form>Unfortunately, bots use DuckDuckGo too.</form>"
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(200, {"content-type": "text/html"}, page)


def test_results_that_are_not_a_list_are_bad_response() -> None:
    # ddgs signals failure by raising (mapped by the transport), never with an error
    # body; a body of another shape is therefore malformed.
    with pytest.raises(BadResponse, match="results"):
        parse(200, {}, {"results": "No results found."})


def test_object_without_results_is_bad_response() -> None:
    with pytest.raises(BadResponse):
        parse(200, {}, {"error": "No results found."})
