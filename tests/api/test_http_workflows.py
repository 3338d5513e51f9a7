"""Workflows over HTTP: listed, a run started as a task (202; the same
Idempotency-Key is the same run), followed to success with its events, and the
error contract for an unknown workflow or a bad input."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

from sleuth.api.http import create_app
from sleuth.config import Settings
from steward_kb import index, pages_at, steward


def settings(tmp_path: Path) -> Settings:
    db = tmp_path / "kb.sqlite"
    index(db, pages_at(tmp_path / "pages"))
    folder = tmp_path / "workflows"
    folder.mkdir()
    workflow = steward(inputs={"note": {"type": "string", "enum": ["nightly", "manual"]}})
    (folder / "steward.yaml").write_text(
        yaml.safe_dump(workflow.model_dump(mode="json", exclude_none=True), allow_unicode=True),
        encoding="utf-8",
    )
    return Settings(
        kb={"path": db},
        store={"backend": "sqlite", "path": tmp_path / "state.sqlite"},
        workflows_dir=folder,
        tasks={"poll_s": 0.05},
        observe={"log_to": "off"},
    )


@asynccontextmanager
async def serving(conf: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(conf, bound_host="127.0.0.1")
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sleuth.test") as client:
            yield client


async def finished(client: httpx.AsyncClient, task_id: str) -> dict[str, Any]:
    async with asyncio.timeout(30):
        while True:
            body: dict[str, Any] = (await client.get(f"/v1/tasks/{task_id}")).json()
            if body["status"] in ("success", "failed"):
                return body
            await asyncio.sleep(0.05)


async def test_a_run_is_a_task_followed_to_success(tmp_path: Path) -> None:
    async with serving(settings(tmp_path)) as client:
        listed = (await client.get("/v1/workflows")).json()
        headers = {"Idempotency-Key": "manual-1"}
        started = await client.post(
            "/v1/workflows/knowledge_steward/runs",
            json={"inputs": {"note": "manual"}},
            headers=headers,
        )
        again = await client.post(
            "/v1/workflows/knowledge_steward/runs",
            json={"inputs": {"note": "manual"}},
            headers=headers,
        )
        task_id = started.json()["task_id"]
        done = await finished(client, task_id)

    assert [w["name"] for w in listed] == ["knowledge_steward"]
    assert listed[0]["steps"] == ["changed", "each_page"]
    assert started.status_code == 202 and started.headers["Location"] == f"/v1/tasks/{task_id}"
    assert again.status_code == 200 and again.json()["task_id"] == task_id
    assert done["status"] == "success" and done["workflow"] == "knowledge_steward"
    assert done["result"] is None and done["run"]["written"] == 3
    kinds = [event["kind"] for event in done["events"]]
    assert kinds.count("item_done") == 3 and kinds[-1] == "done"
    assert (tmp_path / "workflows" / "knowledge_store.sqlite").exists()


async def test_unknown_workflows_and_bad_inputs_answer_with_the_error_contract(
    tmp_path: Path,
) -> None:
    async with serving(settings(tmp_path)) as client:
        unknown = await client.post("/v1/workflows/steward/runs", json={})
        bad = await client.post(
            "/v1/workflows/knowledge_steward/runs", json={"inputs": {"note": "weekly"}}
        )

    assert unknown.status_code == 404
    assert unknown.json()["code"] == "workflow_not_found"
    assert unknown.json()["allowed"] == ["knowledge_steward"]
    assert bad.status_code == 422
    assert (bad.json()["field"], bad.json()["allowed"]) == ("note", ["nightly", "manual"])
