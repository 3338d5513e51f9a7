"""The fault-injection server does what each mode promises, seen from a plain httpx client.

These tests wait for real (a real server is the point), never more than about a second.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from fault_server import MODES, FaultServer, MiB, refused_url


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as started:
        yield started


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=2.0) as started:
        yield started


def search(client: httpx.Client, base_url: str, **params: str) -> httpx.Response:
    return client.get(base_url + "/search", params={"q": "python 3.13", **params})


def test_a_healthy_answer_is_searxng_json_for_the_query(
    server: FaultServer, client: httpx.Client
) -> None:
    response = search(client, server.url_for("ok"))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["query"] == "python 3.13"
    assert body["results"][0]["url"] == "https://docs.python.org/3/whatsnew/3.13.html"
    assert "unresponsive_engines" in body


def test_an_empty_answer_has_an_empty_result_list(
    server: FaultServer, client: httpx.Client
) -> None:
    response = search(client, server.url_for("empty"))
    assert response.status_code == 200 and response.json()["results"] == []


def test_the_mode_comes_from_the_query_parameter_the_path_the_queue_or_the_default(
    server: FaultServer, client: httpx.Client
) -> None:
    assert search(client, server.url_for("503"), fault="401").status_code == 401
    assert search(client, server.url_for("503")).status_code == 503
    server.queue("504", "429")
    assert [search(client, server.url).status_code for _ in range(3)] == [504, 429, 200]
    server.default_mode = "500"
    assert search(client, server.url).status_code == 500
    assert [r.mode for r in server.requests] == ["401", "503", "504", "429", "ok", "500"]
    assert server.requests[0].path == "/503/search" and server.requests[0].query["q"]


def test_an_unknown_mode_is_refused_with_the_list_of_modes(
    server: FaultServer, client: httpx.Client
) -> None:
    response = search(client, server.url, fault="slowish")
    assert response.status_code == 404 and "trickle" in response.json()["error"]
    with pytest.raises(ValueError, match="unknown mode"):
        server.url_for("slowish")
    with pytest.raises(ValueError, match="unknown modes"):
        server.queue("ok", "slowish")


def test_timeout_never_answers_within_the_clients_timeout(server: FaultServer) -> None:
    started = time.perf_counter()
    with httpx.Client(timeout=0.3) as client, pytest.raises(httpx.ReadTimeout):
        search(client, server.url_for("timeout"))
    assert 0.3 <= time.perf_counter() - started < 1.5


def test_trickle_keeps_each_read_within_the_read_timeout_but_the_body_takes_long(
    server: FaultServer,
) -> None:
    received = bytearray()
    started = time.perf_counter()
    with (
        httpx.Client(timeout=0.5) as client,
        client.stream("GET", server.url_for("trickle") + "/search", params={"q": "x"}) as response,
    ):
        for chunk in response.iter_bytes():  # no read waits over 0.2 s: no ReadTimeout
            received.extend(chunk)
            if time.perf_counter() - started > 0.6:
                break
    length = int(response.headers["content-length"])
    assert response.status_code == 200
    assert 0 < len(received) < length / 2  # after 0.6 s, less than half has come


def test_trickle_speed_is_set_per_request_and_the_body_ends_up_whole(
    server: FaultServer, client: httpx.Client
) -> None:
    started = time.perf_counter()
    response = search(client, server.url_for("trickle"), chunk="256", interval="0.02")
    chunks = -(-len(response.content) // 256)
    assert time.perf_counter() - started >= (chunks - 1) * 0.02
    assert response.json()["query"] == "python 3.13"


def test_429_says_when_to_retry(server: FaultServer, client: httpx.Client) -> None:
    response = search(client, server.url_for("429"))
    assert response.status_code == 429 and response.headers["retry-after"] == "2"
    assert search(client, server.url_for("429"), retry_after="7").headers["retry-after"] == "7"


@pytest.mark.parametrize(
    ("mode", "content_type", "text"),
    [
        ("500", "application/json", "internal server error"),
        ("502", "text/html", "502 Bad Gateway"),
        ("503", "text/plain", "Service Unavailable"),
        ("504", "text/html", "504 Gateway Timeout"),
        ("451", "application/json", "geoblocked"),
        ("400", "application/json", "policy_violation"),
        ("401", "application/json", "invalid API key"),
    ],
)
def test_error_statuses_come_with_the_bodies_such_servers_send(
    server: FaultServer, client: httpx.Client, mode: str, content_type: str, text: str
) -> None:
    response = search(client, server.url_for(mode))
    assert response.status_code == int(mode)
    assert response.headers["content-type"].startswith(content_type)
    assert text in response.text


def test_401_asks_for_credentials(server: FaultServer, client: httpx.Client) -> None:
    assert "Bearer" in search(client, server.url_for("401")).headers["www-authenticate"]


def test_malformed_json_is_labelled_json_but_does_not_parse(
    server: FaultServer, client: httpx.Client
) -> None:
    response = search(client, server.url_for("malformed"))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    with pytest.raises(json.JSONDecodeError):
        response.json()


def test_a_truncated_body_promises_more_bytes_than_it_sends(
    server: FaultServer, client: httpx.Client
) -> None:
    with pytest.raises(httpx.RemoteProtocolError, match="without sending complete message body"):
        search(client, server.url_for("truncated"))


@pytest.mark.parametrize("mode", ["html", "captcha"])
def test_html_pages_come_with_status_200(
    server: FaultServer, client: httpx.Client, mode: str
) -> None:
    response = search(client, server.url_for(mode))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.text.startswith("<!DOCTYPE html>")


def test_the_captcha_page_reads_like_a_bot_check(server: FaultServer, client: httpx.Client) -> None:
    text = search(client, server.url_for("captcha")).text.lower()
    assert "captcha" in text and "unusual traffic" in text and "robot" in text


def test_huge_streams_50_mib_of_valid_searxng_json(
    server: FaultServer, client: httpx.Client
) -> None:
    with client.stream("GET", server.url_for("huge") + "/search", params={"q": "x"}) as response:
        chunks = response.iter_raw()
        first = next(chunks)
        total = len(first) + sum(len(chunk) for chunk in chunks)
    assert int(response.headers["content-length"]) == total == 50 * MiB
    assert first.startswith(b'{"query": "x"')
    small = search(client, server.url_for("huge"), size="100000")
    assert len(small.content) == 100_000 and len(small.json()["results"]) > 100


def test_a_client_that_abandons_a_huge_body_leaves_the_server_serving(
    server: FaultServer, client: httpx.Client
) -> None:
    with client.stream("GET", server.url_for("huge")) as response:
        next(response.iter_raw())
    assert search(client, server.url_for("ok")).status_code == 200


def test_reset_closes_the_connection_with_rst(server: FaultServer, client: httpx.Client) -> None:
    with pytest.raises(httpx.ReadError, match="reset by peer"):
        search(client, server.url_for("reset"))


def test_the_refused_url_refuses_connections_at_once(
    server: FaultServer, client: httpx.Client
) -> None:
    started = time.perf_counter()
    with pytest.raises(httpx.ConnectError, match="refused"):
        client.get(server.refused_url + "/search")
    with refused_url() as url, pytest.raises(httpx.ConnectError, match="refused"):
        client.get(url)
    assert time.perf_counter() - started < 1.0


def test_stopping_drops_held_connections_and_frees_the_port() -> None:
    with FaultServer() as server:
        held = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        held.sendall(b"GET /timeout HTTP/1.1\r\nHost: x\r\n\r\n")
        while not server.requests:
            time.sleep(0.01)
        started = time.perf_counter()
    assert time.perf_counter() - started < 2.0 and not server.running
    with held:
        assert held.recv(1024) == b""  # closed without an answer
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=1).close()


async def test_an_async_client_in_the_tests_event_loop_is_served(server: FaultServer) -> None:
    async with httpx.AsyncClient(timeout=2.0) as client:
        response = await client.get(server.url_for("ok") + "/search", params={"q": "async"})
    assert response.json()["query"] == "async"


def test_every_mode_answers_or_fails_as_a_client_would_see_it(server: FaultServer) -> None:
    fails = {"timeout": httpx.ReadTimeout, "truncated": httpx.RemoteProtocolError}
    fails |= {"reset": httpx.ReadError, "trickle": httpx.ReadTimeout}
    with httpx.Client(timeout=0.3) as client:
        for mode in MODES:
            if mode == "huge":
                continue  # its own test
            params = {"interval": "0.5"} if mode == "trickle" else {}
            if mode in fails:
                with pytest.raises(fails[mode]):
                    search(client, server.url_for(mode), **params)
            else:
                expected = int(mode) if mode.isdigit() else 200
                assert search(client, server.url_for(mode)).status_code == expected
