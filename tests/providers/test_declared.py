"""Providers declared in YAML alone (`kind: http`, `sleuth.providers.declared`).

The example is `docs/examples/providers/internal_search.yaml`, an internal search API
whose request and bodies the file's header (and docs/providers.md) documents; the
bodies under tests/data/yaml_provider/internal_search/ follow it. Its cassette is replayed as the
built-in providers' are, and pages, errors, egress and key redaction are checked
against a real local HTTP server.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import body_loader, cassette_entries, data_dir, query_maker, raised
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from sleuth import providers
from sleuth.config import ProviderConfig, Settings, load_settings
from sleuth.errors import AuthFailed, BadResponse, ConfigError, MissingApiKey, QuotaExceeded
from sleuth.gateway import Sleuth
from sleuth.providers.base import Provider, ProviderSettings
from sleuth.providers.declared import HttpSpec, provider_for
from sleuth.transport import ReplayTransport

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "providers" / "internal_search.yaml"
# Under yaml_provider/: the sweeps over tests/data/*/cassette.jsonl replay built-ins only.
DATA = data_dir("yaml_provider") / "internal_search"
load = body_loader(DATA)
KEY = "isk-test-0123456789abcdef"
QUERY = "最近一周关于 checkout 的客户投诉"
query = query_maker(QUERY)


def example() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    return loaded


def spec() -> HttpSpec:
    return ProviderConfig.model_validate(example()).http or HttpSpec.model_validate({})


@pytest.fixture
def internal() -> Iterator[Provider]:
    provider = provider_for("internal_search", spec())
    providers.declare(provider)
    yield provider
    providers.unregister("internal_search")


def settings(base_url: str = "http://search.corp.example:8080") -> ProviderSettings:
    return ProviderSettings(base_url=base_url, api_key=KEY)


def parse(provider: Provider, status: int, body: Any) -> list[Any]:
    assert provider.default_mapping is not None
    return provider.parse_response(status, {}, body, provider.default_mapping)


# --- the declaration -------------------------------------------------------------------


def test_the_example_declares_what_it_can_do(internal: Provider) -> None:
    info = internal.info
    assert (info.needs_key, info.time_range, info.language, info.domain_filter) == (
        True,
        True,
        True,
        False,
    )
    assert (info.query_style, info.text_format, info.max_results) == ("natural", "text", 10)
    assert providers.get("internal_search") is internal
    assert "internal_search" not in providers.names()  # the installed back ends only


def test_the_request_is_the_documented_post_with_typed_body_values(internal: Provider) -> None:
    request = internal.build_request(query(max_results=10, language="zh"), settings())
    assert (request.method, request.url) == (
        "POST",
        "http://search.corp.example:8080/api/v2/search",
    )
    assert request.headers["X-Api-Key"] == KEY
    # A placeholder alone keeps its type; {time_range} over any time is left out.
    assert request.json == {"query": QUERY, "limit": 10, "lang": "zh", "page": 1}


def test_a_time_range_is_sent_as_the_apis_value(internal: Provider) -> None:
    request = internal.build_request(query(time_range="past_week"), settings())
    assert request.json["updated_within"] == "7d"


def test_without_its_key_it_is_refused_before_any_request(internal: Provider) -> None:
    with pytest.raises(MissingApiKey):
        internal.build_request(query(), ProviderSettings(base_url="http://x"))


def test_mapping_check_reads_every_field_and_says_which_fell_back(internal: Provider) -> None:
    hits = parse(internal, 200, load("search_ok.json"))
    assert [hit.url for hit in hits] == [
        "https://wiki.corp.example/support/tickets/4711",
        "https://wiki.corp.example/feedback/2026-11/app-rating",
        "https://wiki.corp.example/support/tickets/4702",
    ]
    assert hits[0].published_at == "2026-11-26T09:12:00Z" and hits[0].fell_back == ()
    # The second hit has no summary and no published date: body and updated answer.
    assert hits[1].snippet is not None and hits[1].snippet.startswith("Twelve one-star")
    assert hits[1].published_at == "2026-11-28T17:40:00Z"
    assert set(hits[1].fell_back) == {"snippet", "published_at"}
    assert hits[2].fields == {"team": "support", "score": 4.9}


def test_an_empty_answer_is_no_hits(internal: Provider) -> None:
    assert parse(internal, 200, load("search_empty.json")) == []


@pytest.mark.parametrize(
    ("name", "status", "kind"),
    [
        ("error_quota.json", 200, QuotaExceeded),
        ("error_bad_key.json", 401, AuthFailed),
        ("error_bad_key.json", 200, AuthFailed),
    ],
)
def test_the_error_table_names_the_class(
    internal: Provider, name: str, status: int, kind: type[Exception]
) -> None:
    error = raised(
        kind, lambda *answer: parse(internal, answer[0], answer[2]), status, {}, load(name)
    )
    assert "internal_search answered HTTP" in str(error)


def test_a_body_without_the_result_list_is_a_bad_response(internal: Provider) -> None:
    with pytest.raises(BadResponse, match="no result list at `hits`"):
        parse(internal, 200, {"status": "ok"})
    with pytest.raises(BadResponse, match="not a JSON object"):
        parse(internal, 200, "<html>sign in</html>")


def test_the_cassette_replays_the_documented_body(internal: Provider) -> None:
    (entry,) = cassette_entries(DATA / "cassette.jsonl")
    assert (entry["provider"], entry["query"]) == ("internal_search", QUERY)
    assert entry["body"] == load("search_ok.json")


async def test_a_search_replays_from_the_cassette_with_no_network() -> None:
    conf = {"internal_search": example()}
    replayed = Settings(
        chain=["internal_search"],
        providers=conf,
        store={"backend": "memory"},
        replay=DATA / "cassette.jsonl",
    )
    async with Sleuth(replayed, ReplayTransport.from_file(DATA / "cassette.jsonl")) as sleuth:
        response = await sleuth.search({"query": QUERY, "include": ["url"]})
    assert response.providers["internal_search"].status == "ok"
    assert {item.url for item in response.results} >= {
        "https://wiki.corp.example/support/tickets/4711"
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"url": "{base_url}/{index}"}, "url: unknown placeholder {index}; allowed: query"),
        (
            {"params": {"p": "{page}"}, "pagination": None},
            "params.p: {page} needs a pagination section",
        ),
        ({"method": "GET"}, "body: a GET sends no body"),
        ({"errors": [{"match": {"status": 700}, "error": "rate_limited"}]}, "700"),
        ({"errors": [{"match": {}, "error": "teapot"}]}, "rate_limited"),
    ],
)
def test_a_bad_declaration_names_the_field_and_what_is_allowed(
    change: dict[str, Any], message: str
) -> None:
    entry = example()
    entry["http"].update(change)
    with pytest.raises(ConfigError, match=r"providers\.internal_search\.http") as caught:
        load_settings_from({"providers": {"internal_search": entry}})
    assert message in caught.value.message


def test_a_built_in_name_cannot_be_declared() -> None:
    with pytest.raises(ConfigError, match="built-in provider's name"):
        load_settings_from({"providers": {"brave": example()}})


def test_kind_http_needs_its_section() -> None:
    with pytest.raises(ConfigError, match="kind http needs an `http:` section"):
        load_settings_from({"providers": {"acme": {"kind": "http"}}})


def test_providers_dir_declares_each_file_and_sleuth_yaml_wins_key_by_key(
    tmp_path: Path,
) -> None:
    (tmp_path / "internal_search.yaml").write_text(EXAMPLE.read_text(encoding="utf-8"))
    loaded = load_settings_from(
        {
            "providers_dir": str(tmp_path),
            "providers": {"internal_search": {"timeout_s": 5.0}},
            "chain": ["internal_search"],
        }
    )
    conf = loaded.providers["internal_search"]
    assert (conf.kind, conf.timeout_s, conf.api_key_env) == ("http", 5.0, "INTERNAL_SEARCH_KEY")
    assert "INTERNAL_SEARCH_KEY" in loaded.secret_env()
    providers.unregister("internal_search")


def load_settings_from(data: dict[str, Any]) -> Settings:
    path = Path(tempfile.mkdtemp()) / "sleuth.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return load_settings(path)


# --- against a real local server ---------------------------------------------------------


def served(server: HTTPServer, **extra: Any) -> Settings:
    entry = example()
    entry.update(base_url=server.url_for("").rstrip("/"), **extra)
    return Settings(
        chain=["internal_search"],
        providers={"internal_search": entry},
        store={"backend": "memory"},
        egress={"allow_private": ["127.0.0.1", "localhost"]},
        deadline_s=5.0,
    )


def page_of(number: int, count: int) -> dict[str, Any]:
    hits = [
        {
            "doc": {
                "link": f"https://wiki.corp.example/support/tickets/{number * 100 + i}",
                "headline": f"Ticket {number * 100 + i}: checkout fails at step {i}",
                "summary": f"Customer {i} on page {number} cannot finish paying.",
            },
            "team": "support",
        }
        for i in range(count)
    ]
    return {"status": "ok", "page": number, "hits": hits}


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("INTERNAL_SEARCH_KEY", KEY)
    return KEY


async def test_pages_are_asked_for_until_one_comes_short(httpserver: HTTPServer, key: str) -> None:
    pages_asked: list[int] = []

    def answer(request: Request) -> Response:
        body = json.loads(request.data)
        assert request.headers["X-Api-Key"] == key
        pages_asked.append(body["page"])
        page = page_of(body["page"], 10 if body["page"] == 1 else 4)
        return Response(json.dumps(page), content_type="application/json")

    httpserver.expect_request("/api/v2/search", method="POST").respond_with_handler(answer)
    async with Sleuth(served(httpserver)) as sleuth:
        response = await sleuth.search({"query": "checkout fails", "max_results": 20})
    assert pages_asked == [1, 2]
    assert response.providers["internal_search"].results == 14
    assert response.providers["internal_search"].retries == 0
    assert not [d for d in response.degradations if d.kind == "pagination_stopped"]


async def test_a_failing_later_page_keeps_the_first_and_says_so(
    httpserver: HTTPServer, key: str
) -> None:
    def answer(request: Request) -> Response:
        number = json.loads(request.data)["page"]
        if number == 1:
            return Response(json.dumps(page_of(1, 10)), content_type="application/json")
        return Response('{"status": "error"}', status=503, content_type="application/json")

    httpserver.expect_request("/api/v2/search", method="POST").respond_with_handler(answer)
    async with Sleuth(served(httpserver)) as sleuth:
        response = await sleuth.search({"query": "checkout fails", "max_results": 20})
    assert response.providers["internal_search"].status == "ok"
    assert response.providers["internal_search"].results == 10
    (stopped,) = [d for d in response.degradations if d.kind == "pagination_stopped"]
    assert "page 2 failed" in stopped.reason and "kept 10 results" in stopped.reason


async def test_a_quota_body_is_classified_by_the_rules_as_from_any_provider(
    httpserver: HTTPServer, key: str
) -> None:
    httpserver.expect_request("/api/v2/search", method="POST").respond_with_json(
        load("error_quota.json")
    )
    async with Sleuth(served(httpserver)) as sleuth:
        response = await sleuth.search("checkout fails")
    (error,) = response.errors
    assert (error.provider, error.code, error.category, error.action) == (
        "internal_search",
        "quota_exceeded",
        "non_recoverable",
        "fallback",
    )


async def test_egress_refuses_a_private_address_unless_allowed(
    httpserver: HTTPServer, key: str
) -> None:
    httpserver.expect_request("/api/v2/search").respond_with_json(load("search_ok.json"))
    refused = served(httpserver).model_copy(update={"egress": Settings().egress})
    async with Sleuth(refused) as sleuth:
        response = await sleuth.search("checkout fails")
    (error,) = response.errors
    assert (error.provider, error.code) == ("internal_search", "egress_denied")
    assert len(httpserver.log) == 0


async def test_the_key_is_never_recorded_even_when_the_api_echoes_it(
    httpserver: HTTPServer, key: str, tmp_path: Path
) -> None:
    echoed = {"status": "error", "error": {"code": "BAD_KEY", "message": f"key {key} is revoked"}}
    httpserver.expect_request("/api/v2/search").respond_with_json(echoed, status=401)
    cassette = tmp_path / "recorded.jsonl"
    recording = served(httpserver).model_copy(update={"record": cassette})
    async with Sleuth(recording) as sleuth:
        response = await sleuth.search("checkout fails")
    assert response.errors[0].code == "auth_failed"
    assert key not in response.model_dump_json()
    text = cassette.read_text(encoding="utf-8")
    assert "internal_search" in text and key not in text and "[REDACTED]" in text
