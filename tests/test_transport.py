"""The transport against a real local HTTP server, and record/replay on disk."""

import json
import time
from pathlib import Path
from typing import ClassVar

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from sleuth.errors import (
    BadResponse,
    ProviderRejected,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    ReplayMiss,
)
from sleuth.providers.base import HttpRequest
from sleuth.testing import Cassette
from sleuth.transport import HttpTransport, RecordingTransport, ReplayTransport


@pytest.fixture
def transport(tmp_path: Path) -> HttpTransport:
    return HttpTransport(kb_path=tmp_path / "kb.sqlite", max_body_bytes=10_000)


async def test_json_body_is_decoded_and_params_are_sent(
    httpserver: HTTPServer, transport: HttpTransport
) -> None:
    httpserver.expect_request(
        "/search", query_string={"q": "北京 天气", "format": "json"}
    ).respond_with_json({"results": [{"title": "北京"}]})
    request = HttpRequest(
        "GET", httpserver.url_for("/search"), {"q": "北京 天气", "format": "json"}
    )
    response = await transport.send("searxng", "北京天气", request, timeout_s=2)
    await transport.aclose()
    assert response.status == 200
    assert response.body == {"results": [{"title": "北京"}]}
    assert response.headers["content-type"] == "application/json"
    assert response.elapsed_ms > 0


async def test_html_body_stays_text(httpserver: HTTPServer, transport: HttpTransport) -> None:
    httpserver.expect_request("/search").respond_with_data(
        "<html>captcha</html>", content_type="text/html"
    )
    response = await transport.send("x", "q", HttpRequest("GET", httpserver.url_for("/search")), 2)
    await transport.aclose()
    assert response.body == "<html>captcha</html>"


async def test_slow_server_is_a_provider_timeout(
    httpserver: HTTPServer, transport: HttpTransport
) -> None:
    def slow(_: Request) -> Response:
        time.sleep(1.0)
        return Response("{}", content_type="application/json")

    httpserver.expect_request("/slow").respond_with_handler(slow)
    with pytest.raises(ProviderTimeout) as caught:
        await transport.send("wikipedia", "q", HttpRequest("GET", httpserver.url_for("/slow")), 0.2)
    await transport.aclose()
    assert caught.value.provider == "wikipedia"
    assert caught.value.category == "recoverable"


async def test_refused_connection_is_provider_unavailable(transport: HttpTransport) -> None:
    with pytest.raises(ProviderUnavailable, match="cannot reach searxng"):
        await transport.send("searxng", "q", HttpRequest("GET", "http://127.0.0.1:9/search"), 1)
    await transport.aclose()


async def test_body_over_the_limit_is_refused(
    httpserver: HTTPServer, transport: HttpTransport
) -> None:
    httpserver.expect_request("/big").respond_with_data("x" * 50_000)
    with pytest.raises(BadResponse, match="10000-byte limit"):
        await transport.send("x", "q", HttpRequest("GET", httpserver.url_for("/big")), 2)
    await transport.aclose()


async def test_every_call_goes_through_the_egress_proxy(
    httpserver: HTTPServer, tmp_path: Path
) -> None:
    # The target host does not exist: the answer can only come from the proxy.
    httpserver.expect_request("/search", query_string={"q": "x"}).respond_with_json(
        {"via": "proxy"}
    )
    transport = HttpTransport(
        kb_path=tmp_path / "kb.sqlite", egress_proxy=httpserver.url_for("/").rstrip("/")
    )
    request = HttpRequest("GET", "http://searx.sleuth-test.invalid/search", {"q": "x"})
    response = await transport.send("searxng", "x", request, 2)
    await transport.aclose()
    assert response.body == {"via": "proxy"}
    ((seen, _),) = httpserver.log
    assert seen.headers["Host"] == "searx.sleuth-test.invalid"


async def test_replay_answers_matching_lines_in_file_order(tmp_path: Path) -> None:
    path = (
        Cassette()
        .add("brave", "q", status=429, headers={"Retry-After": "2"}, body="slow down")
        .add("brave", "q", body={"ok": True})
        .write(tmp_path / "c.jsonl")
    )
    replay = ReplayTransport.from_file(path)
    request = HttpRequest("GET", "https://api.invalid/")
    first = await replay.send("brave", "q", request, 1)
    second = await replay.send("brave", "q", request, 1)
    assert (first.status, first.headers["retry-after"], first.body) == (429, "2", "slow down")
    assert (second.status, second.body) == (200, {"ok": True})
    with pytest.raises(ReplayMiss, match="no \\(more\\) answers"):
        await replay.send("brave", "q", request, 1)
    with pytest.raises(ReplayMiss):
        await replay.send("tavily", "q", request, 1)


async def test_recording_writes_replayable_lines_without_secrets(
    httpserver: HTTPServer, tmp_path: Path
) -> None:
    httpserver.expect_request("/s").respond_with_json(
        {"n": 1}, headers={"Set-Cookie": "session=secret"}
    )
    cassette = tmp_path / "rec.jsonl"
    inner = HttpTransport(kb_path=tmp_path / "kb.sqlite")
    recorder = RecordingTransport(inner, cassette)
    request = HttpRequest(
        "GET", httpserver.url_for("/s"), headers={"Authorization": "Bearer sk-live-123"}
    )
    await recorder.send("brave", "original words", request, 2)
    await recorder.aclose()
    (line,) = cassette.read_text(encoding="utf-8").splitlines()
    entry = json.loads(line)
    assert entry["provider"] == "brave"
    assert entry["query"] == "original words"
    assert entry["status"] == 200
    assert entry["body"] == {"n": 1}
    assert "sk-live-123" not in line and "secret" not in line
    replayed = await ReplayTransport.from_file(cassette).send("brave", "original words", request, 1)
    assert replayed.body == {"n": 1}


# --- ddgs: DuckDuckGo through its library, behind the same error mapping ----------------

DDG_REQUEST = HttpRequest(
    "GET",
    "ddgs:text",
    {
        "q": "python 3.13",
        "region": "us-en",
        "safesearch": "moderate",
        "max_results": "10",
        "backend": "duckduckgo",
    },
)


class FakeDDGS:
    """Stands in for ddgs.DDGS: records how it was built and called, answers as told."""

    answer: ClassVar[object] = None
    built: ClassVar[dict[str, object]] = {}
    called: ClassVar[dict[str, object]] = {}

    def __init__(self, **kwargs: object) -> None:
        FakeDDGS.built = kwargs

    def text(self, query: str, **kwargs: object) -> object:
        FakeDDGS.called = {"query": query, **kwargs}
        if isinstance(FakeDDGS.answer, BaseException):
            raise FakeDDGS.answer
        if FakeDDGS.answer == "slow":
            time.sleep(0.5)
            return []
        return FakeDDGS.answer


@pytest.fixture
def ddg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> HttpTransport:
    import ddgs

    monkeypatch.setattr(ddgs, "DDGS", FakeDDGS)
    return HttpTransport(kb_path=tmp_path / "kb.sqlite", egress_proxy="http://proxy.internal:3128")


async def test_ddgs_results_come_back_as_a_json_body_through_the_proxy(ddg: HttpTransport) -> None:
    FakeDDGS.answer = [
        {
            "title": "What's New In Python 3.13",
            "href": "https://docs.python.org/3/whatsnew/3.13.html",
            "body": "…",
        }
    ]
    response = await ddg.send("duckduckgo", "python 3.13", DDG_REQUEST, 2.0)
    assert response.status == 200
    assert response.body == {"results": FakeDDGS.answer}
    assert FakeDDGS.built == {"proxy": "http://proxy.internal:3128", "timeout": 2}
    assert FakeDDGS.called == {
        "query": "python 3.13", "region": "us-en", "safesearch": "moderate",
        "timelimit": None, "max_results": 10, "backend": "duckduckgo",
    }  # fmt: skip


async def test_ddgs_no_results_is_an_empty_list(ddg: HttpTransport) -> None:
    from ddgs.exceptions import DDGSException

    FakeDDGS.answer = DDGSException("No results found.")
    response = await ddg.send("duckduckgo", "q", DDG_REQUEST, 2.0)
    assert response.body == {"results": []}


async def test_ddgs_errors_map_to_the_contract(ddg: HttpTransport) -> None:
    from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

    cases = [
        (RatelimitException("202 Ratelimit"), RateLimited),
        (TimeoutException("timed out"), ProviderTimeout),
        (DDGSException(TimeoutException("read timed out")), ProviderTimeout),
        (DDGSException("ConnectError: dns"), ProviderUnavailable),
        (DDGSException("query is mandatory."), ProviderRejected),
    ]
    for raised, expected in cases:
        FakeDDGS.answer = raised
        with pytest.raises(expected) as caught:
            await ddg.send("duckduckgo", "q", DDG_REQUEST, 2.0)
        assert caught.value.provider == "duckduckgo"


async def test_ddgs_slower_than_the_timeout_is_cut(ddg: HttpTransport) -> None:
    FakeDDGS.answer = "slow"
    started = time.perf_counter()
    with pytest.raises(ProviderTimeout):
        await ddg.send("duckduckgo", "q", DDG_REQUEST, 0.1)
    assert time.perf_counter() - started < 0.4
