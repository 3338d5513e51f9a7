"""Declared tools as agents reach them: listed by GET /v1/tools, called by POST
/v1/tools/{name} and over MCP, with their arguments checked by name, against a real
local knowledge base; a new file in tools_dir shows without a restart."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import jsonschema
from mcp import Client
from mcp.types import TextContent

from sleuth.api.http import create_app
from sleuth.api.mcp import build_mcp
from sleuth.config import Settings
from sleuth.gateway import Sleuth
from sleuth.kb import index_folder
from sleuth.store import MemoryStore
from sleuth.tasks import TaskRunner

TOOL = """\
name: kb_howto
description: How-to pages of the team's knowledge base on one topic
parameters:
  topic: {type: string, required: true, description: What the page is about}
  audience: {type: string, enum: [ops, dev], default: ops}
search:
  query: "how to {{topic}}"
  providers: [local]
  max_results: 2
  projection: [title, url]
"""

PAGES = {
    "rotate-keys.md": "# Rotating API keys\n\nTo rotate keys, create a new key, deploy it, "
    "then revoke the old key. Rotate keys every ninety days.\n",
    "restore-backup.md": "# Restoring a backup\n\nTo restore a backup, stop the service, copy "
    "the snapshot back and start the service again.\n",
    "holidays.md": "# Office holidays\n\nThe office closes between the two holidays.\n",
}


def knowledge_base(tmp_path: Path) -> Path:
    pages = tmp_path / "pages"
    pages.mkdir()
    for name, text in PAGES.items():
        (pages / name).write_text(text, encoding="utf-8")
    db = tmp_path / "kb.sqlite"
    index_folder(db, pages)
    return db


def settings(tmp_path: Path) -> Settings:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "kb_howto.yaml").write_text(TOOL, encoding="utf-8")
    return Settings(
        chain=["local"],
        kb={"path": knowledge_base(tmp_path)},
        store={"backend": "sqlite", "path": tmp_path / "state.sqlite"},
        tools_dir=tools,
        observe={"log_to": "off"},
    )


@asynccontextmanager
async def serving(conf: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(conf, bound_host="127.0.0.1")
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sleuth.test") as client:
            yield client


async def test_a_declared_tool_is_listed_in_every_form_and_answers(tmp_path: Path) -> None:
    async with serving(settings(tmp_path)) as client:
        listed = (await client.get("/v1/tools")).json()
        answer = await client.post("/v1/tools/kb_howto", json={"topic": "rotate API keys"})

    for form in ("openai", "openai_strict", "openai_responses", "anthropic", "mcp"):
        names = [tool.get("name") or tool["function"]["name"] for tool in listed["all"][form]]
        assert names[-1] == "kb_howto" and "web_search" in names
    mcp_form = listed["all"]["mcp"][-1]
    assert mcp_form["inputSchema"]["properties"]["audience"]["enum"] == ["ops", "dev"]
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["query"] == "how to rotate API keys"
    assert body["results"][0]["title"].startswith("Rotating API keys")
    assert all(set(item) == {"title", "url"} for item in body["results"])
    assert len(body["results"]) <= 2
    jsonschema.validate(body, mcp_form["outputSchema"])


async def test_bad_arguments_and_unknown_tools_answer_with_the_error_contract(
    tmp_path: Path,
) -> None:
    async with serving(settings(tmp_path)) as client:
        wrong = await client.post("/v1/tools/kb_howto", json={"topic": "x", "audience": "all"})
        missing = await client.post("/v1/tools/kb_howto", json={})
        unknown = await client.post("/v1/tools/kb_how", json={"topic": "x"})
        not_an_object = await client.post("/v1/tools/kb_howto", json=["x"])

    assert wrong.status_code == 422
    assert wrong.json()["field"] == "audience" and wrong.json()["allowed"] == ["ops", "dev"]
    assert missing.status_code == 422 and missing.json()["field"] == "topic"
    assert unknown.status_code == 404
    assert unknown.json()["code"] == "tool_not_found"
    assert unknown.json()["allowed"] == ["kb_howto"]
    assert not_an_object.status_code == 422


async def test_a_tool_file_added_while_serving_is_listed_and_callable(tmp_path: Path) -> None:
    conf = settings(tmp_path)
    assert conf.tools_dir is not None
    async with serving(conf) as client:
        before = await client.post("/v1/tools/kb_backup", json={})
        added = conf.tools_dir / "kb_backup.yaml"
        added.write_text(
            "name: kb_backup\ndescription: Backups\n"
            "search: {query: restore a backup, providers: [local]}\n",
            encoding="utf-8",
        )
        stat = added.stat()
        os.utime(added, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        listed = (await client.get("/v1/tools")).json()["all"]["mcp"]
        after = await client.post("/v1/tools/kb_backup", json={})

    assert before.status_code == 404
    assert [tool["name"] for tool in listed][-2:] == ["kb_backup", "kb_howto"]
    assert after.status_code == 200
    assert after.json()["results"][0]["title"].startswith("Restoring a backup")


async def test_mcp_lists_and_calls_a_declared_tool(tmp_path: Path) -> None:
    store = MemoryStore()
    async with (
        Sleuth(settings(tmp_path), store=store) as sleuth,
        TaskRunner(sleuth, store) as runner,
        Client(build_mcp(sleuth, runner)) as client,
    ):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        ok = await client.call_tool("kb_howto", {"topic": "restore a backup"})
        bad = await client.call_tool("kb_howto", {"topic": 7})

    assert "kb_howto" in tools and "web_search" in tools
    assert not ok.is_error
    data: dict[str, Any] = ok.structured_content or {}
    assert data["results"][0]["title"].startswith("Restoring a backup")
    (block,) = ok.content
    assert isinstance(block, TextContent) and "Restoring a backup" in block.text
    assert bad.is_error and bad.structured_content is None
    (text,) = bad.content
    assert isinstance(text, TextContent) and '"field": "topic"' in text.text
