"""The HTTP service as an agent sees it, with every provider replayed from the recorded
web cassette: searches, tasks and their events, errors in the contract, keys, tenants,
limits, feedback and health."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from sleuth import keys
from sleuth.api.http import create_app
from sleuth.config import Settings
from sleuth.feedback import prior
from sleuth.store import open_store
from sleuth.store.base import KeyRole

WEB = Path(__file__).parents[1] / "data" / "web.jsonl"
QUERY = "what's new in python 3.13"
WEB_CHAIN = ["brave", "google", "serpapi", "tavily", "exa", "duckduckgo"]


def settings(tmp_path: Path, **kw: Any) -> Settings:
    base: dict[str, Any] = {
        "chain": WEB_CHAIN,
        "providers": {"google": {"options": {"cx": "replayed"}}},
        "replay": WEB,
        "store": {"backend": "sqlite", "path": tmp_path / "state.sqlite"},
        "tasks": {"workers": 2, "poll_s": 0.05, "lease_s": 2.0},
    }
    base.update(kw)
    return Settings(**base)


@asynccontextmanager
async def serving(conf: Settings, *, host: str = "127.0.0.1") -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(conf, bound_host=host)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sleuth.test") as client:
            yield client


async def make_key(conf: Settings, tenant: str, role: KeyRole = "tenant") -> str:
    store = open_store(conf.store)
    try:
        key, _ = await keys.create_key(store, tenant, now=time.time(), role=role)
    finally:
        await store.aclose()
    return key


async def finished(client: httpx.AsyncClient, task_id: str, **kw: Any) -> dict[str, Any]:
    async with asyncio.timeout(20):
        while True:
            body: dict[str, Any] = (await client.get(f"/v1/tasks/{task_id}", **kw)).json()
            if body["status"] in ("success", "failed"):
                return body
            await asyncio.sleep(0.05)


async def test_a_search_answers_with_projected_cited_results(tmp_path: Path) -> None:
    async with serving(settings(tmp_path)) as client:
        answer = await client.post("/v1/search", json={"query": QUERY, "include": ["url"]})

    assert answer.status_code == 200
    body = answer.json()
    assert body["query"] == QUERY and body["task_id"].startswith("srch_")
    assert 1 <= len(body["results"]) <= 5
    assert all(set(item) >= {"title", "snippet", "url"} for item in body["results"])
    assert body["summary"] and all(s["citations"] for s in body["summary"])
    assert set(body["providers"]) == set(WEB_CHAIN)


async def test_an_unsupported_value_gets_422_naming_the_field_and_allowed_values(
    tmp_path: Path,
) -> None:
    async with serving(settings(tmp_path)) as client:
        answer = await client.post("/v1/search", json={"query": QUERY, "time_range": "today"})
        missing = await client.post("/v1/tasks", json={"max_results": 3})
        not_json = await client.post(
            "/v1/search", content=b"{oops", headers={"content-type": "application/json"}
        )

    assert answer.status_code == 422
    error = answer.json()
    assert (error["code"], error["field"]) == ("invalid_request", "time_range")
    assert error["allowed"] == ["any", "past_week", "past_month", "past_year"]
    assert "past_week" in error["message"]
    assert missing.status_code == 422 and missing.json()["field"] == "query"
    assert not_json.status_code == 422 and not_json.json()["code"] == "invalid_request"


async def test_a_task_is_accepted_at_once_then_succeeds_with_its_events(tmp_path: Path) -> None:
    async with serving(settings(tmp_path)) as client:
        accepted = await client.post("/v1/tasks", json={"query": QUERY})
        task_id = accepted.json()["task_id"]
        done = await finished(client, task_id)
        stream = await client.get(f"/v1/tasks/{task_id}/events")
        resumed = await client.get(f"/v1/tasks/{task_id}/events", headers={"Last-Event-ID": "2"})

    assert accepted.status_code == 202
    assert accepted.headers["location"] == f"/v1/tasks/{task_id}"
    assert accepted.json()["status"] == "pending"
    assert done["status"] == "success" and done["result"]["task_id"] == task_id
    assert done["result"]["results"] and done["started_at"] and done["finished_at"]

    assert stream.headers["content-type"].startswith("text/event-stream")
    events = _sse(stream.text)
    kinds = [kind for _, kind, _ in events]
    assert kinds[:2] == ["accepted", "started"] and kinds[-1] == "done"
    started = {d["provider"] for _, k, d in events if k == "provider_started"}
    ended = {d["provider"]: d for _, k, d in events if k == "provider_finished"}
    assert started == set(ended) == set(WEB_CHAIN)
    assert ended["brave"]["status"] == "ok" and ended["brave"]["results"] > 0
    assert "rank" in [d["stage"] for _, k, d in events if k == "stage"]
    assert [seq for seq, _, _ in events] == list(range(1, len(events) + 1))
    assert _sse(resumed.text)[0][0] == 3


async def test_a_retried_submit_with_the_same_idempotency_key_gets_the_same_task(
    tmp_path: Path,
) -> None:
    conf = settings(tmp_path)
    async with serving(conf) as client:
        headers = {"Idempotency-Key": "agent-7-call-1"}
        first = await client.post("/v1/tasks", json={"query": QUERY}, headers=headers)
        again = await client.post("/v1/tasks", json={"query": QUERY}, headers=headers)

    assert (first.status_code, again.status_code) == (202, 200)
    assert first.json()["task_id"] == again.json()["task_id"]


async def test_cancelling_a_pending_task_fails_it_as_cancelled(tmp_path: Path) -> None:
    conf = settings(tmp_path)
    app = create_app(conf, workers=False)  # nobody runs tasks: it stays pending
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            task_id = (await client.post("/v1/tasks", json={"query": QUERY})).json()["task_id"]
            cancelled = await client.delete(f"/v1/tasks/{task_id}")
            missing = await client.delete("/v1/tasks/task_nope")

    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "failed"
    assert cancelled.json()["error"]["code"] == "cancelled"
    assert missing.status_code == 404 and missing.json()["code"] == "task_not_found"


async def test_a_full_queue_answers_429_with_retry_after(tmp_path: Path) -> None:
    conf = settings(tmp_path, tasks={"queue_max": 1, "queue_full_retry_after_s": 3})
    app = create_app(conf, workers=False)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            first = await client.post("/v1/tasks", json={"query": QUERY})
            refused = await client.post("/v1/tasks", json={"query": "another"})

    assert first.status_code == 202
    assert refused.status_code == 429 and refused.headers["retry-after"] == "3"
    assert refused.json()["code"] == "too_many_requests"


async def test_with_auth_on_every_route_but_health_needs_a_key(tmp_path: Path) -> None:
    conf = settings(tmp_path, serve={"auth": "on"})
    key = await make_key(conf, "acme")
    async with serving(conf) as client:
        anonymous = await client.post("/v1/search", json={"query": QUERY})
        wrong = await client.get("/v1/tools", headers={"Authorization": "Bearer sk_wrong"})
        bearer = await client.get("/v1/tools", headers={"Authorization": f"Bearer {key}"})
        header = await client.get("/v1/tools", headers={"X-API-Key": key})
        health = await client.get("/healthz")
        ready = await client.get("/readyz")

    assert anonymous.status_code == 401 and anonymous.json()["code"] == "unauthorized"
    assert anonymous.headers["www-authenticate"] == "Bearer"
    assert wrong.status_code == 401
    assert bearer.status_code == 200 and header.status_code == 200
    assert health.json() == {"status": "ok"} and ready.json()["status"] == "ready"


@pytest.mark.parametrize(
    "form",
    ["Bearer {key}", "Bearer  {key}", "X-API-Key", "Basic eA== and X-API-Key", "none"],
)
async def test_a_key_is_read_alike_by_the_routes_and_mcp(tmp_path: Path, form: str) -> None:
    conf = settings(tmp_path, serve={"auth": "on"})
    key = await make_key(conf, "acme")
    headers = {
        "Bearer {key}": {"Authorization": f"Bearer {key}"},
        "Bearer  {key}": {"Authorization": f"Bearer  {key}"},
        "X-API-Key": {"X-API-Key": key},
        "Basic eA== and X-API-Key": {"Authorization": "Basic eA==", "X-API-Key": key},
        "none": {},
    }[form]
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    mcp_headers = {"accept": "application/json, text/event-stream", "host": "127.0.0.1"}
    async with serving(conf) as client:
        tools = await client.get("/v1/tools", headers=headers)
        search = await client.post("/v1/search", json={"query": QUERY}, headers=headers)
        mcp = await client.post("/mcp", json=ping, headers={**headers, **mcp_headers})

    expected = 401 if form == "none" else 200
    assert (tools.status_code, search.status_code, mcp.status_code) == (expected,) * 3


async def test_a_task_is_visible_only_to_its_tenant(tmp_path: Path) -> None:
    conf = settings(tmp_path, serve={"auth": "on"})
    acme = {"Authorization": f"Bearer {await make_key(conf, 'acme')}"}
    globex = {"Authorization": f"Bearer {await make_key(conf, 'globex')}"}
    async with serving(conf) as client:
        task_id = (await client.post("/v1/tasks", json={"query": QUERY}, headers=acme)).json()[
            "task_id"
        ]
        mine = await finished(client, task_id, headers=acme)
        theirs = await client.get(f"/v1/tasks/{task_id}", headers=globex)
        their_events = await client.get(f"/v1/tasks/{task_id}/events", headers=globex)
        their_cancel = await client.delete(f"/v1/tasks/{task_id}", headers=globex)

    assert mine["status"] == "success"
    assert theirs.status_code == their_events.status_code == their_cancel.status_code == 404
    assert theirs.json()["code"] == "task_not_found"


async def test_auth_is_on_by_default_off_loopback(tmp_path: Path) -> None:
    async with serving(settings(tmp_path), host="0.0.0.0") as client:  # noqa: S104
        refused = await client.get("/v1/tools")
    async with serving(settings(tmp_path), host="127.0.0.1") as client:
        allowed = await client.get("/v1/tools")

    assert refused.status_code == 401
    assert allowed.status_code == 200


async def test_a_revoked_key_is_refused(tmp_path: Path) -> None:
    conf = settings(tmp_path, serve={"auth": "on"})
    key = await make_key(conf, "acme")
    store = open_store(conf.store)
    try:
        assert await store.revoke_key(keys.key_prefix(key)) == 1
    finally:
        await store.aclose()
    async with serving(conf) as client:
        answer = await client.get("/v1/tools", headers={"X-API-Key": key})
    assert answer.status_code == 401


async def test_each_key_has_its_own_rate_limit(tmp_path: Path) -> None:
    conf = settings(tmp_path, serve={"auth": "on", "rate_limit": {"per_minute": 6, "burst": 2}})
    busy = {"X-API-Key": await make_key(conf, "acme")}
    other = {"X-API-Key": await make_key(conf, "acme")}
    async with serving(conf) as client:
        codes = [(await client.get("/v1/tools", headers=busy)).status_code for _ in range(3)]
        limited = await client.get("/v1/tools", headers=busy)
        fresh = await client.get("/v1/tools", headers=other)

    assert codes == [200, 200, 429]
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    assert limited.json()["code"] == "too_many_requests"
    assert fresh.status_code == 200


async def test_feedback_feeds_the_click_prior_of_the_domain(tmp_path: Path) -> None:
    conf = settings(tmp_path)
    app = create_app(conf)
    used = {"url": "https://docs.python.org/3/whatsnew/3.13.html", "action": "used"}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            await client.post("/v1/search", json={"query": QUERY})
            sent = [await client.post("/v1/feedback", json=used) for _ in range(3)]
            bad = await client.post("/v1/feedback", json={"url": "javascript:alert(1)"})
            svc = app.state.service
            await svc.sleuth.feedback.flush(svc.store)
            shown = (await svc.store.counters("feedback:shown:"))["feedback:shown:python.org"]
            priors = await svc.sleuth.feedback.priors(svc.store)

    assert all(r.status_code == 202 for r in sent)
    assert sent[0].json() == {"domain": "python.org", "action": "used"}
    assert bad.status_code == 422 and bad.json()["field"] == "url"
    assert shown >= 1  # the search showed python.org pages
    assert priors == {"python.org": pytest.approx(prior(clicks=3, shown=shown))}


async def test_tools_are_generated_from_the_contract(tmp_path: Path) -> None:
    async with serving(settings(tmp_path)) as client:
        tools = (await client.get("/v1/tools")).json()
        schema = (await client.get("/openapi.json")).json()

    openai = tools["openai"]
    assert openai["type"] == "function"
    properties = openai["function"]["parameters"]["properties"]
    assert "query" in properties and "time_range" in properties
    request_schema = schema["components"]["schemas"]["SearchRequest"]["properties"]
    assert set(properties) == set(request_schema)
    assert {"/v1/search", "/v1/tasks", "/v1/tasks/{task_id}/events", "/v1/feedback"} <= set(
        schema["paths"]
    )


async def test_an_unknown_route_answers_in_the_error_contract(tmp_path: Path) -> None:
    async with serving(settings(tmp_path)) as client:
        answer = await client.get("/v2/everything")
    assert answer.status_code == 404
    assert answer.json()["code"] == "not_found" and answer.json()["category"]


def _sse(text: str) -> list[tuple[int, str, dict[str, Any]]]:
    """(id, event, data detail) of each server-sent event."""
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        data = json.loads(fields["data"])
        events.append((int(fields["id"]), fields["event"], data["detail"]))
    return events


@pytest.fixture(autouse=True)
def _no_stray_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLEUTH_SERVE__AUTH", raising=False)
