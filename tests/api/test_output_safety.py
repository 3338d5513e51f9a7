"""A snippet carrying `<script>` and `onerror=` never leaves sleuth as markup: not in
the HTTP JSON, not in the MCP tool's structured content or text (the dashboard's
share of this is tests/api/test_dashboard.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hostile import QUERY, hostile_brave, markup_in, write_cassette
from mcp import Client
from mcp.types import TextContent
from test_http import serving, settings

from sleuth.api.mcp import build_mcp
from sleuth.gateway import Sleuth
from sleuth.store import MemoryStore
from sleuth.tasks import TaskRunner
from sleuth.testing import memory_settings


def snippets_of(body: dict[str, Any]) -> str:
    return " ".join(item["snippet"] for item in body["results"])


async def test_http_output_carries_no_markup(tmp_path: Path) -> None:
    cassette = write_cassette(tmp_path / "hostile.jsonl", [hostile_brave()])
    async with serving(settings(tmp_path, replay=cassette, chain=["brave"])) as client:
        answer = await client.post("/v1/search", json={"query": QUERY, "include": ["url"]})

    assert answer.status_code == 200
    assert markup_in(answer.text) == []
    # The planted snippet is there, made inert, not dropped: the escaped tags survive
    # as look-alike text ("‹script>", "onerror꞊").
    shown = snippets_of(answer.json())
    assert "alert(2)" in shown and "‹script>" in shown and "onerror꞊alert(3)" in shown


async def test_mcp_output_carries_no_markup(tmp_path: Path) -> None:
    cassette = write_cassette(tmp_path / "hostile.jsonl", [hostile_brave()])
    store = MemoryStore()
    conf = memory_settings(chain=["brave"], replay=cassette)
    async with (
        Sleuth(conf, store=store) as sleuth,
        TaskRunner(sleuth, store) as runner,
        Client(build_mcp(sleuth, runner)) as client,
    ):
        result = await client.call_tool("web_search", {"query": QUERY})

    assert not result.is_error
    (block,) = result.content
    assert isinstance(block, TextContent)
    assert markup_in(block.text) == []
    assert isinstance(result.structured_content, dict)
    assert markup_in(json.dumps(result.structured_content, ensure_ascii=False)) == []
    assert "alert(2)" in snippets_of(result.structured_content)
    assert "alert(2)" in block.text
