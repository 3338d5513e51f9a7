"""Every sink writes a record once per key, however often it is asked to; a webhook
goes through the egress rules."""

import json
import sqlite3
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from sleuth import kb
from sleuth.config import Settings
from sleuth.errors import EgressDenied
from sleuth.workflows.sinks import Sinks
from sleuth.workflows.workflow_models import SinkSpec

RECORD = {"path": "/kb/leave.md", "modified_at": "2026-12-01T10:00:00+00:00", "summary": "短"}


def spec(**destination: str) -> SinkSpec:
    record = dict.fromkeys(RECORD, "{{x}}")
    return SinkSpec.model_validate(
        {"record": record, "key": ["path", "modified_at"], **destination}
    )


async def test_jsonl_and_sqlite_sinks_write_each_key_once_even_across_runs(tmp_path: Path) -> None:
    jsonl, table = spec(jsonl="out/store.jsonl"), spec(sqlite="store.sqlite", table="pages")
    first = Sinks(Settings(), tmp_path)
    assert await first.write(jsonl, RECORD) and await first.write(table, RECORD)
    assert not await first.write(jsonl, RECORD) and not await first.write(table, RECORD)
    # A later run (a resumed one) reads what is there.
    again = Sinks(Settings(), tmp_path)
    assert not await again.write(jsonl, dict(RECORD, summary="changed"))
    assert not await again.write(table, dict(RECORD, summary="changed"))
    newer = dict(RECORD, modified_at="2026-12-02T10:00:00+00:00")
    assert await again.write(jsonl, newer) and await again.write(table, newer)

    lines = (tmp_path / "out" / "store.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["modified_at"][:10] for line in lines] == ["2026-12-01", "2026-12-02"]
    rows = sqlite3.connect(tmp_path / "store.sqlite").execute(
        "SELECT modified_at, summary FROM pages ORDER BY modified_at"
    )
    assert [(day[:10], summary) for day, summary in rows] == [
        ("2026-12-01", "短"),
        ("2026-12-02", "短"),
    ]


async def test_a_kb_folder_sink_writes_one_markdown_file_per_key_then_indexes_it(
    tmp_path: Path,
) -> None:
    sink = spec(kb_folder="summaries")
    db = tmp_path / "kb.sqlite"
    sinks = Sinks(Settings(kb={"path": db}), tmp_path)
    record = dict(RECORD, title="请假制度", summary="员工请假需提前三天申请。")
    assert await sinks.write(sink, record)
    assert not await sinks.write(sink, record)
    await sinks.aclose()
    (page,) = (tmp_path / "summaries").glob("*.md")
    text = page.read_text(encoding="utf-8")
    assert text.startswith('---\npath: "/kb/leave.md"') and "# 请假制度\n\n员工请假" in text
    (hit,) = kb.search(db, "请假申请", limit=3)
    assert hit["title"] == "请假制度"


async def test_a_webhook_posts_through_egress_with_an_idempotency_key(
    httpserver: HTTPServer, tmp_path: Path
) -> None:
    seen: list[tuple[str | None, dict[str, str]]] = []

    def receive(request: Request) -> Response:
        seen.append((request.headers.get("Idempotency-Key"), request.get_json()))
        return Response("{}", status=202, content_type="application/json")

    httpserver.expect_request("/hook", method="POST").respond_with_handler(receive)
    url = httpserver.url_for("/hook")
    allowed = Settings(egress={"allow_private": ["127.0.0.1", "localhost"]})
    sinks = Sinks(allowed, tmp_path)
    try:
        assert await sinks.write(spec(webhook=url), RECORD)
    finally:
        await sinks.aclose()
    ((key, body),) = seen
    assert body == RECORD and key is not None and len(key) == 64

    refused = Sinks(Settings(), tmp_path)
    try:
        with pytest.raises(EgressDenied):
            await refused.write(spec(webhook=url), RECORD)
    finally:
        await refused.aclose()
    assert len(seen) == 1
