"""The transport against a real local HTTP server, and record/replay on disk."""

import importlib.util
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import aiohttp
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from egress_fakes import policy
from sleuth.errors import (
    BadResponse,
    ConfigError,
    EgressDenied,
    ProviderRejected,
    ProviderTimeout,
    ProviderUnavailable,
    RateLimited,
    ReplayMiss,
)
from sleuth.providers.base import HttpRequest
from sleuth.testing import Cassette
from sleuth.transport import HttpTransport, RecordingTransport, ReplayTransport, decode_body


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


async def test_a_cookie_a_back_end_sets_is_not_sent_on_later_calls(
    httpserver: HTTPServer, transport: HttpTransport
) -> None:
    # One session serves every search and every tenant: a cookie kept from one call
    # would ride along on the next, whoever asked.
    sent: list[str | None] = []

    def answer(request: Request) -> Response:
        sent.append(request.headers.get("Cookie"))
        response = Response(json.dumps({"results": []}), content_type="application/json")
        response.set_cookie("session", "tenant-a", path="/")
        return response

    httpserver.expect_request("/search").respond_with_handler(answer)
    for _ in range(2):
        await transport.send("x", "q", HttpRequest("GET", httpserver.url_for("/search")), 2)
    await transport.aclose()
    assert sent == [None, None]


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


async def test_replay_answers_matching_lines_in_file_order_the_last_repeating(
    tmp_path: Path,
) -> None:
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
    again = await replay.send("brave", "q", request, 1)  # a replayed service is asked twice
    assert (again.status, again.body) == (200, {"ok": True})
    with pytest.raises(ReplayMiss, match="no answer for provider 'tavily'"):
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


def echo_request(request: Request) -> Response:
    """A back end that quotes the request in its error body, as some do."""
    echoed = {
        "headers": dict(request.headers),
        "args": request.args,
        "body": request.get_data(as_text=True),
    }
    body = json.dumps({"error": "bad key", "request": echoed})
    return Response(body, 401, content_type="application/json")


@pytest.mark.parametrize(
    ("where", "secret"),
    [
        ("headers", {"X-Subscription-Token": "brv9f2c71d0e4a8b5c3"}),
        ("params", {"api_key": "serp4d1e8a9b7c2f6e03"}),
        ("json", {"api_key": "tav0c3b9e7d2a5f8143"}),
    ],
)
async def test_recording_redacts_a_key_the_back_end_echoes(
    httpserver: HTTPServer, tmp_path: Path, where: str, secret: dict[str, str]
) -> None:
    httpserver.expect_request("/s").respond_with_handler(echo_request)
    cassette = tmp_path / "rec.jsonl"
    recorder = RecordingTransport(HttpTransport(kb_path=tmp_path / "kb.sqlite"), cassette)
    method = "POST" if where == "json" else "GET"
    request = HttpRequest(method, httpserver.url_for("/s"), **{where: secret})  # type: ignore[arg-type]
    answered = await recorder.send("brave", "q", request, 2)
    await recorder.aclose()
    (value,) = secret.values()
    assert value in json.dumps(answered.body), "the back end did echo the key"
    line = cassette.read_text(encoding="utf-8")
    assert value not in line
    assert "[REDACTED]" in line
    assert json.loads(line)["status"] == 401


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


# --- egress: the address policy and the proxy, fail closed ------------------------------
# Only loopback addresses are ever contacted: a refusal happens before any connection,
# and names other than localhost are answered by a fake resolver.


@pytest.fixture
def second_server() -> Iterator[HTTPServer]:
    server = HTTPServer(host="127.0.0.1")
    server.start()
    yield server
    server.clear()
    server.stop()


def loopback_url(server: HTTPServer, path: str) -> str:
    return f"http://127.0.0.1:{server.port}{path}"


async def test_with_a_policy_a_loopback_server_is_refused_before_any_connection(
    httpserver: HTTPServer, tmp_path: Path
) -> None:
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite", egress=policy())
    for url in (
        loopback_url(httpserver, "/search"),
        f"http://localhost:{httpserver.port}/search",
        f"http://2130706433:{httpserver.port}/search",  # 127.0.0.1 spelled as a number
        f"http://[::ffff:127.0.0.1]:{httpserver.port}/search",
    ):
        with pytest.raises(EgressDenied) as caught:
            await transport.send("searxng", "q", HttpRequest("GET", url), 2)
        assert caught.value.provider == "searxng"
        assert caught.value.info().code == "egress_denied"
    await transport.aclose()
    assert httpserver.log == []


async def test_an_allowed_loopback_server_answers(httpserver: HTTPServer, tmp_path: Path) -> None:
    httpserver.expect_request("/search").respond_with_json({"ok": True})
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite", egress=policy("127.0.0.1"))
    request = HttpRequest("GET", loopback_url(httpserver, "/search"))
    response = await transport.send("searxng", "q", request, 2)
    await transport.aclose()
    assert response.body == {"ok": True}


async def test_the_connection_goes_to_the_address_that_was_checked(
    httpserver: HTTPServer, tmp_path: Path, dns: dict[str, list[str]]
) -> None:
    # "pinned.test" exists only in the fake resolver: the answer proves that the
    # connection used the checked address, not a second lookup somewhere else.
    dns["pinned.test"] = ["127.0.0.1"]
    httpserver.expect_request("/search").respond_with_json({"pinned": True})
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite", egress=policy("127.0.0.1"))
    request = HttpRequest("GET", f"http://pinned.test:{httpserver.port}/search")
    response = await transport.send("searxng", "q", request, 2)
    await transport.aclose()
    assert response.body == {"pinned": True}
    ((seen, _),) = httpserver.log
    assert seen.headers["Host"] == f"pinned.test:{httpserver.port}"


async def test_a_name_resolving_inside_is_refused(
    httpserver: HTTPServer, tmp_path: Path, dns: dict[str, list[str]]
) -> None:
    dns["searx.rebind.test"] = ["127.0.0.1"]
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite", egress=policy())
    request = HttpRequest("GET", f"http://searx.rebind.test:{httpserver.port}/search")
    with pytest.raises(EgressDenied, match=re.escape("searx.rebind.test resolves to 127.0.0.1")):
        await transport.send("searxng", "q", request, 2)
    await transport.aclose()
    assert httpserver.log == []


@pytest.mark.parametrize("host", ["012.0.0.1", "0127.0.0.1", "1.2.3.04"])
async def test_an_ambiguous_address_spelling_is_an_egress_refusal(
    tmp_path: Path, host: str
) -> None:
    # A leading zero reads as octal to some resolvers (012 = 10): neither an address to
    # connect to nor an unexpected error that weighs toward the breaker.
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite", egress=policy())
    with pytest.raises(EgressDenied) as refused:
        await transport.send("searxng", "q", HttpRequest("GET", f"http://{host}/search"), 2)
    await transport.aclose()
    assert refused.value.provider == "searxng" and refused.value.category == "non_recoverable"
    assert host in refused.value.message


@pytest.mark.parametrize("target", ["file:///etc/passwd", "gopher://127.0.0.1:70/x"])
async def test_a_redirect_to_another_scheme_is_an_egress_refusal(
    httpserver: HTTPServer, tmp_path: Path, target: str
) -> None:
    httpserver.expect_request("/search").respond_with_data(
        "", status=302, headers={"Location": target}
    )
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite", egress=policy("127.0.0.1/32"))
    with pytest.raises(EgressDenied) as refused:
        await transport.send(
            "searxng", "q", HttpRequest("GET", loopback_url(httpserver, "/search")), 2
        )
    await transport.aclose()
    assert refused.value.code == "egress_denied" and "http or https" in refused.value.message


async def test_a_redirect_inside_the_network_is_refused(
    httpserver: HTTPServer, tmp_path: Path
) -> None:
    # 127.0.0.2 is loopback too: even a broken check would send nothing off the machine.
    target = f"http://127.0.0.2:{httpserver.port}/meta-data"
    httpserver.expect_request("/search").respond_with_data(
        "", status=302, headers={"Location": target}
    )
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite", egress=policy("127.0.0.1/32"))
    request = HttpRequest("GET", loopback_url(httpserver, "/search"))
    with pytest.raises(EgressDenied, match=re.escape("127.0.0.2 is a loopback address")):
        await transport.send("searxng", "q", request, 2)
    await transport.aclose()
    assert [seen.path for seen, _ in httpserver.log] == ["/search"]


async def test_an_unresolvable_name_is_unavailable_not_denied(
    tmp_path: Path, dns: dict[str, list[str]]
) -> None:
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite", egress=policy())
    request = HttpRequest("GET", "http://nowhere.test/search")
    with pytest.raises(ProviderUnavailable, match=re.escape("cannot resolve nowhere.test")):
        await transport.send("searxng", "q", request, 2)
    await transport.aclose()


async def test_through_the_proxy_the_destination_is_checked_first(
    httpserver: HTTPServer, tmp_path: Path, dns: dict[str, list[str]]
) -> None:
    # The proxy (a loopback server) is configuration and trusted; the destinations
    # are checked before it is asked, and a name only it can resolve is its to judge.
    httpserver.expect_request("/search").respond_with_json({"via": "proxy"})
    dns["metadata.cloud.test"] = ["169.254.169.254"]
    transport = HttpTransport(
        kb_path=tmp_path / "kb.sqlite",
        egress_proxy=loopback_url(httpserver, ""),
        egress=policy(),
    )
    request = HttpRequest("GET", "http://searx.sleuth-test.invalid/search")
    assert (await transport.send("searxng", "q", request, 2)).body == {"via": "proxy"}
    for url in (
        "http://10.0.0.1/search",
        "http://0x7f.1/search",
        "http://localhost:8888/search",
        "http://metadata.cloud.test/latest/meta-data",
    ):
        with pytest.raises(EgressDenied):
            await transport.send("searxng", "q", HttpRequest("GET", url), 2)
    await transport.aclose()
    assert len(httpserver.log) == 1


async def test_through_the_proxy_a_redirect_inside_is_refused(
    httpserver: HTTPServer, tmp_path: Path, dns: dict[str, list[str]]
) -> None:
    httpserver.expect_request("/search").respond_with_data(
        "", status=302, headers={"Location": "http://169.254.169.254/latest/meta-data"}
    )
    transport = HttpTransport(
        kb_path=tmp_path / "kb.sqlite",
        egress_proxy=loopback_url(httpserver, ""),
        egress=policy(),
    )
    request = HttpRequest("GET", "http://searx.sleuth-test.invalid/search")
    with pytest.raises(EgressDenied, match=re.escape("169.254.169.254")):
        await transport.send("searxng", "q", request, 2)
    await transport.aclose()
    assert len(httpserver.log) == 1


async def test_a_proxy_that_is_down_fails_the_call_instead_of_going_direct(
    httpserver: HTTPServer, tmp_path: Path
) -> None:
    httpserver.expect_request("/search").respond_with_json({"direct": True})
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite", egress_proxy="http://127.0.0.1:9")
    request = HttpRequest("GET", loopback_url(httpserver, "/search"))
    with pytest.raises(ProviderUnavailable):
        await transport.send("searxng", "q", request, 1)
    await transport.aclose()
    assert httpserver.log == []


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"])
async def test_proxy_variables_in_the_environment_are_ignored(
    httpserver: HTTPServer,
    second_server: HTTPServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
) -> None:
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, loopback_url(second_server, ""))
    second_server.expect_request("/search").respond_with_json({"via": "env proxy"})
    httpserver.expect_request("/search").respond_with_json({"direct": True})
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite")
    request = HttpRequest("GET", loopback_url(httpserver, "/search"))
    response = await transport.send("searxng", "q", request, 2)
    await transport.aclose()
    assert response.body == {"direct": True}
    assert second_server.log == []


async def test_no_proxy_in_the_environment_cannot_exempt_a_host(
    httpserver: HTTPServer,
    second_server: HTTPServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NO_PROXY", "*")
    second_server.expect_request("/search").respond_with_json({"direct": True})
    httpserver.expect_request("/search").respond_with_json({"via": "proxy"})
    transport = HttpTransport(
        kb_path=tmp_path / "kb.sqlite", egress_proxy=loopback_url(httpserver, "")
    )
    request = HttpRequest("GET", loopback_url(second_server, "/search"))
    assert (await transport.send("searxng", "q", request, 2)).body == {"via": "proxy"}
    await transport.aclose()
    assert second_server.log == []


async def test_a_client_handed_in_with_a_proxy_or_a_policy_is_refused(tmp_path: Path) -> None:
    for settings in ({"egress_proxy": "http://127.0.0.1:3128"}, {"egress": policy()}):
        async with aiohttp.ClientSession() as session:
            with pytest.raises(ConfigError, match="could bypass them"):
                HttpTransport(kb_path=tmp_path / "kb.sqlite", client=session, **settings)


@pytest.mark.parametrize(
    "proxy",
    [
        "ftp://user:s3cret@proxy.internal:21",
        "proxy.internal:3128",
        "http://",
        "http://user:s3cret@[::1",
        "http://user:s3cret@proxy.internal:99999",
    ],
)
def test_an_unusable_proxy_url_is_a_config_error(tmp_path: Path, proxy: str) -> None:
    with pytest.raises(ConfigError, match="egress_proxy") as caught:
        HttpTransport(kb_path=tmp_path / "kb.sqlite", egress_proxy=proxy)
    assert "s3cret" not in caught.value.message


def test_a_socks_proxy_without_its_extra_is_a_config_error(tmp_path: Path) -> None:
    if importlib.util.find_spec("aiohttp_socks") is not None:
        pytest.skip("aiohttp-socks is installed: socks proxies work")
    with pytest.raises(ConfigError, match="cannot be used"):
        HttpTransport(
            kb_path=tmp_path / "kb.sqlite", egress_proxy="socks5://user:s3cret@127.0.0.1:1080"
        )


class DDGSWithoutProxy:
    def __init__(self, timeout: int | None = 5) -> None:
        raise AssertionError("must not be built: it would call out directly")


async def test_a_ddgs_that_cannot_take_the_proxy_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import ddgs

    monkeypatch.setattr(ddgs, "DDGS", DDGSWithoutProxy)
    transport = HttpTransport(
        kb_path=tmp_path / "kb.sqlite", egress_proxy="http://proxy.internal:3128"
    )
    with pytest.raises(EgressDenied, match="bypass egress_proxy") as caught:
        await transport.send("duckduckgo", "q", DDG_REQUEST, 2.0)
    assert caught.value.provider == "duckduckgo"


async def test_ddgs_is_internal_to_the_address_policy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import ddgs

    monkeypatch.setattr(ddgs, "DDGS", FakeDDGS)
    FakeDDGS.answer = []
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite", egress=policy())
    response = await transport.send("duckduckgo", "q", DDG_REQUEST, 2.0)
    assert response.body == {"results": []}
    assert FakeDDGS.built["proxy"] is None


@pytest.mark.parametrize(
    "body",
    [
        b'{"results": [{"title": "caf\\u00e9", "score": 0.1, "n": 12345678901234567890123}]}',
        b'{"score": NaN, "t": "x"}',  # Python's json reads NaN; orjson does not
        b'\xef\xbb\xbf{"t": "with a byte order mark"}',
        b'{"t": "not utf-8: \xff\xfe"}',
        b'{"t": "lone surrogate \\ud800"}',
        b'{"a": 1, "a": 2}',
        b"not json at all",
        b"",
    ],
)
def test_a_json_body_decodes_as_pythons_json_reads_it(body: bytes) -> None:
    text = body.decode("utf-8", errors="replace")
    try:
        expected = json.loads(text)
    except json.JSONDecodeError:
        expected = text
    decoded = decode_body(body, "application/json; charset=utf-8")
    assert decoded == expected or (decoded != decoded and expected != expected)
    assert type(decoded) is type(expected)


def test_a_body_that_is_not_json_is_its_text() -> None:
    assert decode_body(b'{"a": 1}\xff', "text/html") == '{"a": 1}\ufffd'
