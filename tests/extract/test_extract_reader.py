"""`PageReader` through `Sleuth.extract` on a loopback site: robots.txt, the
User-Agent, per-host limits, the cache, compressed bodies, record and replay, TLS."""

from __future__ import annotations

import gzip
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import brotli
import pytest
import trustme
from page_fixtures import ARTICLE, loopback_sleuth
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from sleuth import Sleuth
from sleuth.config import load_settings


async def test_an_article_page_reads_as_its_body_and_metadata(site: HTTPServer) -> None:
    site.expect_request("/news/night-trains").respond_with_data(ARTICLE, content_type="text/html")
    async with loopback_sleuth() as sleuth:
        response = await sleuth.extract({"urls": [site.url_for("/news/night-trains")]})
    page = response.pages[0]
    assert page.error is None
    assert page.title == "Night trains return to the Alps"
    assert page.text.startswith("Sleeper trains are coming back to the Alpine routes")
    assert "## What the new services offer" in page.text
    assert "- Vienna to Milan, four nights a week, from 19 December" in page.text
    assert "| Zurich – Vienna | 21:40 | 07:05 |" in page.text
    for chrome in ("We use cookies", "Related stories", "Eurostar", "Great news", "© 2025"):
        assert chrome not in page.text
    assert page.published_at is not None and page.published_at.isoformat() == (
        "2025-11-03T07:30:00+01:00"
    )
    assert page.modified_at is not None and page.modified_at.day == 4
    assert (page.author, page.site_name, page.language) == (
        "Maria Keller",
        "The Rail Gazette",
        "en-GB",
    )
    assert page.tls.status == "none" and page.missing == [] and not page.degraded


async def test_robots_txt_is_honoured_unless_turned_off(site: HTTPServer) -> None:
    site.clear()
    site.expect_request("/robots.txt").respond_with_data(
        "User-agent: sleuth\nDisallow: /private/\n\nUser-agent: *\nAllow: /\n"
    )
    site.expect_request("/private/a").respond_with_data(ARTICLE, content_type="text/html")
    site.expect_request("/public/a").respond_with_data(ARTICLE, content_type="text/html")
    async with loopback_sleuth() as sleuth:
        response = await sleuth.extract(
            {"urls": [site.url_for("/private/a"), site.url_for("/public/a")]}
        )
    refused, read = response.pages
    assert refused.error is not None and refused.error.code == "policy_violation"
    assert "robots.txt" in refused.error.message and "extract.robots" in refused.error.message
    assert read.error is None and read.title == "Night trains return to the Alps"
    async with loopback_sleuth(robots=False) as sleuth:
        response = await sleuth.extract({"urls": [site.url_for("/private/a")]})
    assert response.pages[0].error is None


async def test_a_robots_txt_the_site_cannot_serve_disallows_for_now(site: HTTPServer) -> None:
    site.clear()
    site.expect_request("/robots.txt").respond_with_data("oops", status=503)
    site.expect_request("/a").respond_with_data(ARTICLE, content_type="text/html")
    async with loopback_sleuth() as sleuth:
        response = await sleuth.extract({"urls": [site.url_for("/a")]})
    assert response.pages[0].error is not None
    assert response.pages[0].error.code == "policy_violation"


async def test_the_user_agent_says_who_is_asking(site: HTTPServer) -> None:
    seen: list[str] = []

    def page(request: Request) -> Response:
        seen.append(request.headers.get("User-Agent", ""))
        return Response(ARTICLE, content_type="text/html")

    site.expect_request("/a").respond_with_handler(page)
    async with loopback_sleuth() as sleuth:
        await sleuth.extract({"urls": [site.url_for("/a")]})
    assert seen and seen[0].startswith("sleuth/") and "robots.txt" in seen[0]


async def test_pages_of_one_host_are_fetched_at_most_per_host_at_once(site: HTTPServer) -> None:
    lock = threading.Lock()
    state = {"now": 0, "most": 0}

    def slow(_: Request) -> Response:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.2)
        with lock:
            state["now"] -= 1
        return Response(ARTICLE, content_type="text/html")

    for n in range(4):
        site.expect_request(f"/p{n}").respond_with_handler(slow)
    urls = [site.url_for(f"/p{n}") for n in range(4)]
    async with loopback_sleuth(per_host=2) as sleuth:
        response = await sleuth.extract({"urls": urls})
    assert [page.url for page in response.pages] == urls  # input order kept
    assert all(page.error is None for page in response.pages)
    assert state["most"] == 2


async def test_a_read_page_is_answered_from_the_cache(site: HTTPServer) -> None:
    hits = {"n": 0}

    def counted(_: Request) -> Response:
        hits["n"] += 1
        return Response(ARTICLE, content_type="text/html")

    site.expect_request("/a").respond_with_handler(counted)
    async with loopback_sleuth() as sleuth:
        first = await sleuth.extract({"urls": [site.url_for("/a")]})
        again = await sleuth.extract({"urls": [site.url_for("/a")]})
        fresh = await sleuth.extract({"urls": [site.url_for("/a")], "no_cache": True})
    assert first.pages[0].text == again.pages[0].text == fresh.pages[0].text
    assert hits["n"] == 2


@pytest.mark.parametrize("encoding", ["gzip", "br"])
async def test_compressed_pages_are_read(site: HTTPServer, encoding: str) -> None:
    body = gzip.compress(ARTICLE) if encoding == "gzip" else brotli.compress(ARTICLE)
    site.expect_request("/z").respond_with_data(
        body, headers={"Content-Type": "text/html", "Content-Encoding": encoding}
    )
    async with loopback_sleuth() as sleuth:
        page = (await sleuth.extract({"urls": [site.url_for("/z")]})).pages[0]
    assert page.error is None and "Sleeper trains" in page.text


async def test_a_gzip_bomb_stops_at_the_cap(site: HTTPServer) -> None:
    bomb = gzip.compress(b"<html><body>" + b" " * 30_000_000)
    site.expect_request("/bomb").respond_with_data(
        bomb, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"}
    )
    async with loopback_sleuth(max_bytes=1_000_000) as sleuth:
        page = (await sleuth.extract({"urls": [site.url_for("/bomb")]})).pages[0]
    assert page.error is not None and "1000000-byte limit" in page.error.message


async def test_recorded_pages_replay_offline(site: HTTPServer, tmp_path: Path) -> None:
    cassette = tmp_path / "pages.jsonl"
    site.expect_request("/a").respond_with_data(ARTICLE, content_type="text/html")
    url = site.url_for("/a")
    recording = Sleuth(load_settings(record=cassette, egress={"allow_private": ["127.0.0.1"]}))
    async with recording:
        recorded = (await recording.extract({"urls": [url]})).pages[0]
    site.stop()  # from here on nothing answers on that port
    async with Sleuth(load_settings(replay=cassette)) as replaying:
        replayed = (await replaying.extract({"urls": [url, url + "-missing"]})).pages
    assert replayed[0].text == recorded.text and replayed[0].title == recorded.title
    assert replayed[1].error is not None and replayed[1].error.code == "replay_miss"
    site.start()  # the fixture stops it again


@pytest.fixture
def tls_site() -> Iterator[tuple[trustme.CA, str]]:
    """An https server whose certificate a test authority signed (trusted by nobody
    unless a test says so)."""
    authority = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    server = HTTPServer(host="127.0.0.1", ssl_context=context, threaded=True)
    server.start()
    server.expect_request("/a").respond_with_data(ARTICLE, content_type="text/html")
    yield authority, server.url_for("/a")
    server.clear()
    server.stop()


async def test_an_untrusted_certificate_is_reported_and_not_read(
    tls_site: tuple[trustme.CA, str],
) -> None:
    _, url = tls_site
    async with loopback_sleuth(robots=False) as sleuth:
        page = (await sleuth.extract({"urls": [url]})).pages[0]
    assert page.error is not None and page.error.code == "tls_invalid"
    assert page.tls.status == "invalid" and page.tls.reason is not None
    assert "certificate" in page.tls.reason and page.text == ""


async def test_a_certificate_that_verifies_is_valid(
    tls_site: tuple[trustme.CA, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    authority, url = tls_site
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))  # as an operator trusts a private CA
    async with loopback_sleuth(robots=False) as sleuth:
        page = (await sleuth.extract({"urls": [url]})).pages[0]
    assert page.error is None and page.tls.status == "valid"
    assert page.tls.reason == "certificate verified for 127.0.0.1"
