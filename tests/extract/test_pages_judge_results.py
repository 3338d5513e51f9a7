"""What only a read page tells, in a search with `include: content`: a loopback SearXNG
(its documented JSON) lists pages served on loopback over plain http and https, and
the search then judges each result by its page as well as its snippet: copies of one
article merge (dedupe on the full text), the page's TLS scores transport security
(an https link whose certificate fails is not trusted as https), the page's own dates
give `published_at` and `freshness`, and the content policy reads the page's text."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import trustme
from page_fixtures import ARTICLE
from pytest_httpserver import HTTPServer

from sleuth import Sleuth
from sleuth.config import load_settings
from sleuth.contract import SearchResponse
from sleuth.store import MemoryStore

QUERY = "When does the night train from Zurich reach Vienna?"
NOW = datetime(2025, 11, 20, 12, 0, tzinfo=UTC)
INCLUDE = ["url", "content", "published_at", "freshness", "dated_from", "trust_breakdown"]
INCLUDE += ["providers", "sources", "flags", "source_trust_score"]
#: The same article republished elsewhere: another page, other chrome, the same text.
COPY = (
    ARTICLE.replace(b"The Rail Gazette", b"Alpine Travel Digest")
    .replace(b"Maria Keller", b"Digest staff")
    .replace(b"Campaigners welcomed", b"Rail campaigners welcomed")
)
OTHER = b"""<!DOCTYPE html><html lang="en"><head><title>Ski passes compared</title>
<meta property="article:published_time" content="2025-11-19T08:00:00Z"></head><body>
<article><h1>Ski passes compared</h1>
<p>We compared the season passes of twelve resorts in Austria and Switzerland for the
coming winter, from the cheapest family tickets to the unlimited regional passes.</p>
<p>Most resorts raised their prices by four to six percent; two kept them as they were,
and one now sells its pass only online, with a discount for early buyers.</p>
</article></body></html>"""


def hit(url: str, title: str, snippet: str, engine: str, position: int) -> dict[str, Any]:
    """One SearXNG result, as its JSON API documents it (no publishedDate: undated)."""
    return {
        "url": url,
        "title": title,
        "content": snippet,
        "engine": engine,
        "engines": [engine],
        "positions": [position],
        "score": 1.0 / position,
        "category": "general",
    }


@pytest.fixture
def authority() -> trustme.CA:
    return trustme.CA()


def https_site(authority: trustme.CA) -> HTTPServer:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(context)
    server = HTTPServer(host="127.0.0.1", ssl_context=context, threaded=True)
    server.start()
    return server


@pytest.fixture
def trusted(authority: trustme.CA) -> Iterator[HTTPServer]:
    """An https site whose certificate verifies (its authority is trusted below)."""
    server = https_site(authority)
    yield server
    server.stop()


@pytest.fixture
def untrusted() -> Iterator[HTTPServer]:
    """An https site whose certificate an authority nobody trusts signed."""
    server = https_site(trustme.CA())
    yield server
    server.stop()


@pytest.fixture
def trust_authority(authority: trustme.CA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))  # as an operator trusts a private CA


async def search(site: HTTPServer, hits: list[dict[str, Any]], **settings: Any) -> SearchResponse:
    body = {"query": QUERY, "number_of_results": len(hits), "results": hits, "answers": []}
    body |= {"corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}
    site.expect_request("/search").respond_with_json(body)
    configured = load_settings(
        chain=["searxng"],
        providers={"searxng": {"enabled": True, "base_url": site.url_for("/")}},
        egress={"allow_private": ["127.0.0.1"]},
        extract={"robots": False},
        cache={"enabled": False},
        projection={"optional": INCLUDE},
        **settings,
    )
    async with Sleuth(configured, store=MemoryStore(), clock=lambda: NOW) as sleuth:
        return await sleuth.search({"query": QUERY, "include": INCLUDE, "max_results": 5})


def by_url(response: SearchResponse) -> dict[str, dict[str, Any]]:
    return {
        item.url: item.model_dump(mode="json", exclude_unset=True)
        for item in response.results
        if item.url
    }


async def test_copies_of_one_article_merge_on_their_full_text(site: HTTPServer) -> None:
    site.expect_request("/news/night-trains").respond_with_data(ARTICLE, content_type="text/html")
    site.expect_request("/digest/sleepers").respond_with_data(COPY, content_type="text/html")
    site.expect_request("/ski").respond_with_data(OTHER, content_type="text/html")
    original, copy = site.url_for("/news/night-trains"), site.url_for("/digest/sleepers")
    answer = await search(
        site,
        [
            hit(
                original,
                "Night trains return to the Alps",
                "Three operators bring back sleeper services between Zurich, Vienna and Milan.",
                "brave",
                1,
            ),
            hit(
                copy,
                "Sleepers are back: Zurich–Vienna overnight",
                "The Alpine Travel "
                "Digest republishes the Rail Gazette report on the winter timetable.",
                "bing",
                1,
            ),
            hit(
                site.url_for("/ski"),
                "Ski passes compared",
                "Twelve resorts, their season passes and what they cost this winter.",
                "qwant",
                2,
            ),
        ],
    )
    results = by_url(answer)
    assert list(results) == [original, site.url_for("/ski")]
    merged = results[original]
    assert merged["sources"] == [original, copy]
    assert "reaches Vienna at 07:05" in merged["content"]
    assert merged["trust_breakdown"]["diversity"] == 0.6  # one registrable domain: 127.0.0.1


async def test_without_the_pages_the_copies_stay_two_results(site: HTTPServer) -> None:
    site.expect_request("/news/night-trains").respond_with_data(ARTICLE, content_type="text/html")
    site.expect_request("/digest/sleepers").respond_with_data(COPY, content_type="text/html")
    hits = [
        hit(
            site.url_for("/news/night-trains"),
            "Night trains return to the Alps",
            "Three operators bring back sleeper services between Zurich, Vienna and Milan.",
            "brave",
            1,
        ),
        hit(
            site.url_for("/digest/sleepers"),
            "Sleepers are back: Zurich–Vienna overnight",
            "The Alpine Travel Digest republishes the Rail Gazette report on the winter timetable.",
            "bing",
            1,
        ),
    ]
    answer = await search(site, hits, dedupe={"page_simhash_max_distance": 0})
    assert len(answer.results) == 2


async def test_the_pages_tls_scores_security_not_the_links_scheme(
    site: HTTPServer, trusted: HTTPServer, untrusted: HTTPServer, trust_authority: None
) -> None:
    for server in (trusted, untrusted):
        server.expect_request("/a").respond_with_data(ARTICLE, content_type="text/html")
    site.expect_request("/ski").respond_with_data(OTHER, content_type="text/html")
    good, bad, plain = trusted.url_for("/a"), untrusted.url_for("/a"), site.url_for("/ski")
    answer = await search(
        site,
        [
            hit(
                good,
                "Night trains return to the Alps",
                "Sleeper services between Zurich, Vienna and Milan.",
                "brave",
                1,
            ),
            hit(
                bad,
                "Overnight to Vienna: the new timetable",
                "A mirror of the night train story, served with a certificate nobody signed.",
                "bing",
                1,
            ),
            hit(
                plain, "Ski passes compared", "Twelve resorts and their season passes.", "qwant", 2
            ),
        ],
    )
    results = by_url(answer)
    assert results[good]["trust_breakdown"]["security"] == 1.0
    assert results[bad]["trust_breakdown"]["security"] == 0.0  # https, but the cert failed
    assert results[plain]["trust_breakdown"]["security"] == 0.0
    assert results[bad]["content"] is None and "content" in results[bad]["missing"]
    assert results[good]["source_trust_score"] > results[bad]["source_trust_score"]
    reasons = [note.reason for note in answer.degradations if note.kind == "content_unavailable"]
    assert any(bad in reason and "tls_invalid" in reason for reason in reasons)


async def test_the_pages_own_dates_give_published_at_and_freshness(site: HTTPServer) -> None:
    site.expect_request("/news/night-trains").respond_with_data(ARTICLE, content_type="text/html")
    site.expect_request("/ski").respond_with_data(OTHER, content_type="text/html")
    article, ski = site.url_for("/news/night-trains"), site.url_for("/ski")
    answer = await search(
        site,
        [
            hit(
                article,
                "Night trains return to the Alps",
                "Sleeper services between Zurich, Vienna and Milan.",
                "brave",
                1,
            ),
            hit(ski, "Ski passes compared", "Twelve resorts and their season passes.", "bing", 2),
        ],
    )
    results = by_url(answer)
    # Published 3 November, modified 4 November: 16 days before NOW, past_month.
    assert results[article]["published_at"] == "2025-11-03T06:30:00Z"
    assert (results[article]["freshness"], results[article]["dated_from"]) == (
        "past_month",
        "page",
    )
    assert results[article]["trust_breakdown"]["freshness"] == 0.7
    assert results[ski]["published_at"] == "2025-11-19T08:00:00Z"
    assert results[ski]["freshness"] == "past_week"


async def test_the_content_policy_reads_the_page_text(site: HTTPServer) -> None:
    site.expect_request("/news/night-trains").respond_with_data(ARTICLE, content_type="text/html")
    site.expect_request("/ski").respond_with_data(OTHER, content_type="text/html")
    article = site.url_for("/news/night-trains")
    answer = await search(
        site,
        [
            # "subsidies" is in the article's text only, not in its title or snippet.
            hit(
                article,
                "Night trains return to the Alps",
                "Sleeper services between Zurich, Vienna and Milan.",
                "brave",
                1,
            ),
            hit(
                site.url_for("/ski"),
                "Ski passes compared",
                "Twelve resorts and their season passes.",
                "bing",
                2,
            ),
        ],
        content_policy={"terms": {"en": ["subsidies"]}},
    )
    withheld, kept = answer.results
    assert withheld.title == "This result is withheld under the content policy"
    assert withheld.url is None and withheld.content is None
    assert withheld.flags == ["withheld_by_policy"]
    assert kept.title == "Ski passes compared" and kept.content
    (note,) = [n for n in answer.degradations if n.kind == "result_withheld"]
    assert note.reason.endswith("its page matches content_policy.terms.en entry #1")
    assert "subsidies" not in answer.model_dump_json()
