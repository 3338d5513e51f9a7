"""Usage, budgets and the audit log through the HTTP service, as tenants see them.

The paid back end is the example YAML provider (docs/examples/providers/internal_search.yaml)
on a real local HTTP server, priced in `usage.prices`; the store is SQLite (the
default), so what one request records is what the next reads.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from sleuth import keys, providers
from sleuth.api.http import create_app
from sleuth.config import Settings
from sleuth.gateway import Sleuth
from sleuth.observe import call_context
from sleuth.store import SqliteStore, open_store
from sleuth.store.base import KeyRole

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "providers" / "internal_search.yaml"
PRICE = "1.50"  # per 1,000 calls: 1,500 micro-dollars a call
CALL = Decimal("0.0015")


@pytest.fixture(autouse=True)
def _forget_the_declared_provider() -> Any:
    yield
    providers.unregister("internal_search")


@pytest.fixture
def api(httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> HTTPServer:
    """The internal search API: three hits whatever is asked, each query answered."""
    monkeypatch.setenv("INTERNAL_SEARCH_KEY", "isk-0123456789")

    def answer(request: Request) -> Response:
        query = json.loads(request.data)["query"]
        hits = [
            {
                "doc": {
                    "link": f"https://wiki.corp.example/{abs(hash(query)) % 997}/{n}",
                    "headline": f"{query} — report {n}",
                    "summary": f"Customers wrote about {query} in report {n}.",
                }
            }
            for n in range(3)
        ]
        return Response(json.dumps({"status": "ok", "hits": hits}), content_type="application/json")

    httpserver.expect_request("/api/v2/search", method="POST").respond_with_handler(answer)
    return httpserver


def settings(tmp_path: Path, api: HTTPServer, **kw: Any) -> Settings:
    entry = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    entry["base_url"] = api.url_for("").rstrip("/")
    base: dict[str, Any] = {
        "chain": ["internal_search"],
        "providers": {"internal_search": entry},
        "store": {"backend": "sqlite", "path": tmp_path / "state.sqlite"},
        "kb": {"path": tmp_path / "kb.sqlite"},
        "egress": {"allow_private": ["127.0.0.1", "localhost"]},
        "serve": {"auth": "on"},
        "deadline_s": 5.0,
        "usage": {"prices": {"internal_search": {"per_1000": PRICE, "currency": "USD"}}},
    }
    base.update(kw)
    return Settings(**base)


@asynccontextmanager
async def serving(conf: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(conf, bound_host="127.0.0.1", workers=False)
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


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def search(client: httpx.AsyncClient, key: str, query: str) -> httpx.Response:
    return await client.post("/v1/search", json={"query": query}, headers=auth(key))


async def test_tenants_see_only_their_own_usage_and_an_operator_sees_all(
    tmp_path: Path, api: HTTPServer
) -> None:
    conf = settings(tmp_path, api)
    acme, beta = await make_key(conf, "acme"), await make_key(conf, "beta")
    admin = await make_key(conf, "ops", role="admin")
    async with serving(conf) as client:
        for query in ("checkout timeouts", "login loops", "refund delays"):
            assert (await search(client, acme, query)).status_code == 200
        again = await search(client, acme, "login loops")  # answered from the cache
        assert again.json()["cache"] == "hit"
        assert (await search(client, beta, "invoice errors")).status_code == 200

        own = (await client.get("/v1/usage", headers=auth(acme))).json()
        other = await client.get("/v1/usage", params={"tenant": "beta"}, headers=auth(acme))
        everyone = await client.get("/v1/usage", params={"by": "tenant"}, headers=auth(admin))
        one = await client.get("/v1/usage", params={"tenant": "beta"}, headers=auth(admin))

    assert own["tenant"] == "acme"
    assert (own["total"]["calls"], own["total"]["cache_hits"], own["total"]["failures"]) == (
        3,
        1,
        0,
    )
    assert Decimal(own["total"]["cost"]["USD"]) == 3 * CALL
    assert Decimal(own["total"]["cache_savings"]["USD"]) == CALL
    assert other.status_code == 403 and other.json()["code"] == "forbidden"
    assert everyone.status_code == 200
    (today,) = everyone.json()["periods"]
    assert set(today["by_tenant"]) == {"acme", "beta"}
    assert Decimal(today["cost"]["USD"]) == 4 * CALL
    assert today["by_tenant"]["beta"]["calls"] == 1
    assert one.json()["total"]["calls"] == 1


async def test_costs_add_up_exactly_to_the_recorded_calls(tmp_path: Path, api: HTTPServer) -> None:
    conf = settings(tmp_path, api, serve={"auth": "off"})
    async with serving(conf) as client:
        for n in range(7):
            response = await client.post("/v1/search", json={"query": f"complaint {n}"})
            assert response.status_code == 200
        report = (await client.get("/v1/usage", params={"by": "provider"})).json()
    store = SqliteStore(tmp_path / "state.sqlite")
    rows = await store.usage_rows(0, time.time() + 1)
    await store.aclose()
    assert len(rows) == 7 and {row.cost_micros for row in rows} == {1500}
    assert report["total"]["cost_micros"]["USD"] == sum(row.cost_micros or 0 for row in rows)
    assert Decimal(report["total"]["cost"]["USD"]) == 7 * CALL == Decimal("0.010500")
    assert report["periods"][0]["by_provider"]["internal_search"]["calls"] == 7


async def test_an_exhausted_budget_refuses_with_the_error_contract(
    tmp_path: Path, api: HTTPServer
) -> None:
    budget = {"acme": {"period": "day", "limit": "0.003", "currency": "USD"}}
    conf = settings(
        tmp_path, api, usage={**settings(tmp_path, api).usage.model_dump(), "budgets": budget}
    )
    acme, beta = await make_key(conf, "acme"), await make_key(conf, "beta")
    async with serving(conf) as client:
        first, second = [await search(client, acme, q) for q in ("checkout", "refunds")]
        refused = await search(client, acme, "login loops")
        cached = await search(client, acme, "checkout")  # costs nothing: still served
        other = await search(client, beta, "login loops")  # beta has no budget
        audit = (await client.get("/v1/audit", headers=auth(acme))).json()["entries"]
    assert (first.status_code, second.status_code) == (200, 200)
    assert refused.status_code == 402
    body = refused.json()
    assert (body["code"], body["category"]) == ("budget_exceeded", "non_recoverable")
    assert "spent 0.003000 USD of its daily budget of 0.003000 USD" in body["message"]
    assert 0 < body["retry_after_s"] <= 86400
    assert int(refused.headers["retry-after"]) >= 1
    assert cached.status_code == 200 and cached.json()["cache"] == "hit"
    assert other.status_code == 200
    assert [e["status"] for e in audit] == ["cached", "refused", "ok", "ok"]
    assert audit[1]["error_code"] == "budget_exceeded" and audit[1]["providers"] == []


async def test_a_spent_budget_can_degrade_to_free_providers(
    tmp_path: Path, api: HTTPServer
) -> None:
    budget = {"*": {"period": "month", "limit": "0", "when_spent": "degrade"}}
    usage = {**settings(tmp_path, api).usage.model_dump(), "budgets": budget}
    conf = settings(tmp_path, api, usage=usage, serve={"auth": "off"})
    async with serving(conf) as client:
        response = (await client.post("/v1/search", json={"query": "checkout"})).json()
    assert list(response["providers"]) == ["local"]
    (spent,) = [d for d in response["degradations"] if d["kind"] == "budget_exhausted"]
    assert "only free providers were asked: local" in spent["reason"]
    assert len(api.log) == 0  # the paid API was not called


async def test_the_audit_log_says_who_with_which_key_and_what_it_cost(
    tmp_path: Path, api: HTTPServer
) -> None:
    conf = settings(tmp_path, api)
    acme = await make_key(conf, "acme")
    async with serving(conf) as client:
        await search(client, acme, "checkout timeouts")
        (entry,) = (await client.get("/v1/audit", headers=auth(acme))).json()["entries"]
    assert entry["tenant"] == "acme" and entry["key"] == acme[:11]
    assert (entry["adapter"], entry["providers"], entry["cost"]) == (
        "http_search",
        ["internal_search"],
        {"USD": "0.001500"},
    )
    assert "query" not in entry and len(entry["query_hash"]) == 64
    assert acme not in json.dumps(entry)


async def test_a_search_names_its_tool_and_workflow_through_call_context(
    tmp_path: Path, api: HTTPServer
) -> None:
    conf = settings(tmp_path, api, audit={"record_query": True})
    async with Sleuth(conf) as sleuth:
        with call_context(tenant="acme", tool="internal_search", workflow="knowledge_steward"):
            await sleuth.search("最近一周关于 checkout 的客户投诉")
        report = await sleuth.ledger.report(
            sleuth.store, since=0, until=time.time() + 1, by=["tool", "workflow"]
        )
        (entry,) = await sleuth.ledger.audit_entries(sleuth.store, since=0, until=time.time() + 1)
    (today,) = report["periods"]
    assert today["by_tool"]["internal_search"]["calls"] == 1
    assert today["by_workflow"]["knowledge_steward"]["cost"] == {"USD": "0.001500"}
    assert (entry.tool, entry.workflow, entry.query) == (
        "internal_search",
        "knowledge_steward",
        "最近一周关于 checkout 的客户投诉",
    )
