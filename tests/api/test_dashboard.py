"""The dashboard and /metrics: served by sleuth, keyed like the API, and, in a real
headless Chromium against a real server, drawn from replayed searches with no console
error and no markup from the data in the DOM. The screenshot is kept as an artifact."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hostile import QUERY, failing, hostile_brave, recorded, write_cassette
from live import uvicorn_thread
from test_http import make_key, serving, settings

from sleuth.api.http import create_app
from sleuth.contract import ErrorInfo, ProjectedItem, SearchResponse
from sleuth.observe import CallRecord

ARTIFACT = Path(__file__).parents[1] / "artifacts" / "dashboard.png"

#: Planted straight into the observer, past the output gate: the page alone must keep
#: it text.
RAW_MESSAGE = "upstream said <img src=x onerror=alert(6)> and <script>alert(7)</script>"
RAW_KEYWORD = "<script>alert(8)</script>"


# --- over ASGI: headers, keys, what is served -----------------------------------------


async def test_the_page_is_self_contained_under_a_strict_policy(tmp_path: Path) -> None:
    async with serving(settings(tmp_path)) as client:
        page = await client.get("/dashboard")
        script = await client.get("/dashboard/app.js")

    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    # One script, ours, by path; nothing fetched from anywhere else.
    assert re.findall(r"<script[^>]*>", page.text) == ['<script src="dashboard/app.js">']
    assert not re.search(r"(?:src|href)=\"(?:https?:)?//", page.text)
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert "innerHTML" not in script.text and "eval(" not in script.text
    assert "http://" not in script.text.replace("http://www.w3.org/2000/svg", "")


async def test_metrics_and_data_need_a_key_when_auth_is_on(tmp_path: Path) -> None:
    conf = settings(tmp_path, serve={"auth": "on"})
    key = {"Authorization": f"Bearer {await make_key(conf, 'ops', role='admin')}"}
    async with serving(conf) as client:
        page = await client.get("/dashboard")
        anonymous = [await client.get(path) for path in ("/metrics", "/dashboard/data")]
        await client.post("/v1/search", json={"query": QUERY}, headers=key)
        metrics = await client.get("/metrics", headers=key)
        data = await client.get("/dashboard/data", headers=key)

    assert page.status_code == 200  # the page holds no data
    assert [answer.status_code for answer in anonymous] == [401, 401]
    assert metrics.status_code == 200
    assert metrics.headers["content-type"].startswith("text/plain")
    text = metrics.text
    assert 'sleuth_searches_total{status="ok",tool_name="http_search"} 1.0' in text
    assert 'sleuth_provider_calls_total{outcome="ok",provider="brave"} 1.0' in text
    assert 'sleuth_breaker_state{provider="brave"} 0.0' in text
    assert "sleuth_task_queue_depth 0.0" in text
    assert data.status_code == 200 and data.headers["cache-control"] == "no-store"
    body = data.json()
    assert body["searches"] == 1 and body["statuses"]["ok"] == 1
    assert body["tasks"]["pending"] == 0
    assert {b["provider"] for b in body["breakers"]} >= {"brave", "google"}


async def test_a_tenant_sees_only_its_own_figures_and_an_operator_sees_all(
    tmp_path: Path,
) -> None:
    conf = settings(tmp_path, serve={"auth": "on"})
    acme = {"Authorization": f"Bearer {await make_key(conf, 'acme')}"}
    beta = {"Authorization": f"Bearer {await make_key(conf, 'beta')}"}
    ops = {"Authorization": f"Bearer {await make_key(conf, 'ops', role='admin')}"}
    secret_search = {"query": "secret merger talks", "providers": ["google"], "no_cache": True}
    async with serving(conf) as client:
        await client.post("/v1/search", json=secret_search, headers=acme)
        await client.post("/v1/search", json={"query": QUERY}, headers=beta)
        seen = {
            name: (await client.get("/dashboard/data", headers=key)).json()
            for name, key in (("acme", acme), ("beta", beta), ("ops", ops))
        }
        metrics = {
            name: (await client.get("/metrics", headers=key)).status_code
            for name, key in (("beta", beta), ("ops", ops))
        }

    def words(data: dict[str, Any]) -> set[str]:
        return {k["keyword"] for k in data["hot_keywords"]}

    beta_view = seen["beta"]
    assert (beta_view["scope"], beta_view["tenant"], beta_view["searches"]) == ("tenant", "beta", 1)
    assert not {"secret", "merger"} & words(beta_view)
    assert "merger" not in str(beta_view)
    assert beta_view["breakers"] is None and beta_view["tasks"] is None
    assert "merger" in words(seen["acme"]) and seen["acme"]["searches"] == 1
    assert seen["ops"]["scope"] == "global" and seen["ops"]["searches"] == 2
    assert {"merger", "python"} <= words(seen["ops"]) and seen["ops"]["breakers"]
    assert metrics == {"beta": 403, "ops": 200}


async def test_the_http_search_is_logged_with_its_tenant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conf = settings(tmp_path, serve={"auth": "on"})
    key = {"X-API-Key": await make_key(conf, "acme")}
    async with serving(conf) as client:
        await client.post("/v1/search", json={"query": QUERY}, headers=key)

    lines = [line for line in capsys.readouterr().out.splitlines() if '"event": "search"' in line]
    (line,) = lines
    assert '"tenant": "acme"' in line and '"tool_name": "http_search"' in line
    assert key["X-API-Key"] not in line and QUERY not in line


# --- in a real browser ------------------------------------------------------------------


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """sleuth over uvicorn on 127.0.0.1 (a free port), every provider replayed: brave
    with the planted snippet, google failing with 503 twice."""
    web = recorded()
    lines = [
        hostile_brave(),
        failing("google"),
        failing("google"),
        *(web[name] for name in ("serpapi", "tavily", "exa", "duckduckgo")),
    ]
    cassette = write_cassette(tmp_path / "dashboard.jsonl", lines)
    conf = settings(tmp_path, replay=cassette, retry={"max_attempts": 1})
    app = create_app(conf, bound_host="127.0.0.1")
    with uvicorn_thread(app) as base:
        yield base, app


def run_searches(base: str) -> None:
    first = {"query": QUERY, "providers": ["brave", "google", "serpapi"], "include": ["url"]}
    with httpx.Client(base_url=base, timeout=20) as client:
        answers = [
            client.post("/v1/search", json=first),  # degraded: google 503
            client.post("/v1/search", json=first),  # the same again: from the cache
            client.post(
                "/v1/search",
                json={"query": QUERY, "providers": ["tavily", "exa", "duckduckgo"]},
            ),
            client.post(
                "/v1/search", json={"query": QUERY, "providers": ["google"], "no_cache": True}
            ),  # failed: its only provider answers 503
        ]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 200]
    assert [answer.json()["cache"] for answer in answers[:2]] == ["miss", "hit"]
    assert answers[3].json()["results"] == []


def plant_raw_markup(app: Any) -> None:
    """A record whose error message and keyword are raw markup, as if every gate
    before the dashboard had failed."""
    now = time.time()
    response = SearchResponse(
        task_id="srch_planted",
        query="planted",
        rewritten_query=RAW_KEYWORD,
        results=[ProjectedItem(title="t", snippet=RAW_MESSAGE)],
        errors=[
            ErrorInfo(
                code="provider_unavailable",
                category="recoverable",
                provider="google",
                message=RAW_MESSAGE,
            )
        ],
    )
    app.state.service.sleuth.observer.record(
        CallRecord("srch_planted", "default", "library", "planted", now, now, 0.2, response)
    )


def test_the_dashboard_in_headless_chromium(server: tuple[str, Any]) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium binary on PATH (as root: apt-get install -y chromium)")
    base, app = server
    run_searches(base)
    plant_raw_markup(app)

    problems: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))

            def dialog(opened: Any) -> None:  # an alert() that ran: the worst outcome
                problems.append(f"dialog: {opened.message}")
                opened.dismiss()

            page.on("dialog", dialog)
            page.goto(f"{base}/dashboard")
            page.wait_for_selector("#chart circle.point", timeout=10_000)

            points = page.locator("#chart circle.point").count()
            codes = page.locator("#error-codes li .name").all_inner_texts()
            providers = page.locator("#providers li .name").all_inner_texts()
            breakers = page.locator("#breakers li").all_inner_texts()
            recent = page.locator("#recent-errors").inner_text()
            keywords = page.locator("#keywords").inner_text()
            searches = page.locator("#searches").inner_text()
            failed = page.locator("#failure-rate").inner_text()
            dom = page.evaluate(
                """() => ({
                    scripts: [...document.scripts].map(s => s.getAttribute("src")),
                    handlers: [...document.querySelectorAll("*")].filter(
                        e => [...e.attributes].some(a => a.name.toLowerCase().startsWith("on"))
                    ).length,
                    images: document.images.length,
                })"""
            )
            ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACT), full_page=True)
        finally:
            browser.close()
    print(f"dashboard screenshot: {ARTIFACT}")  # noqa: T201 - where the artifact is

    assert problems == []
    assert points >= 1  # the p95 chart has data
    assert "provider_unavailable" in codes and len(codes) <= 3
    assert set(providers) >= {"brave", "google", "serpapi", "tavily", "exa", "duckduckgo"}
    assert any(line.startswith("google") for line in breakers)
    assert searches == "5" and failed != "–"
    # The planted markup is on the page as text, and nowhere as markup.
    assert "onerror=alert(6)" in recent and "<script>alert(7)</script>" in recent
    assert RAW_KEYWORD in keywords
    assert dom == {"scripts": ["dashboard/app.js"], "handlers": 0, "images": 0}
    assert ARTIFACT.stat().st_size > 10_000
