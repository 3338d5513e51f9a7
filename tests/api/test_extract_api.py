"""Reading pages through each entry point, as a person and an agent use them: the
CLI (`sleuth extract`), `POST /v1/extract` over real HTTP, and the MCP tool
`extract_page` over stdio. Pages are replayed from tests/data/extract/pages.jsonl."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import jsonschema
import pytest
from live import uvicorn_thread
from mcp import Client, StdioServerParameters
from mcp.types import TextContent
from typer.testing import CliRunner

from sleuth.api.cli import app
from sleuth.api.http import create_app
from sleuth.config import Settings
from sleuth.tools import EXTRACT_PAGE, mcp_tool

DATA = Path(__file__).resolve().parents[1] / "data" / "extract"
PAGES = DATA / "pages.jsonl"
ARTICLE_URL = "https://rail.example/news/night-trains"
ZH_URL = "https://news.example.cn/a/17"
PDF_URL = "https://rail.example/notes.pdf"


# --- CLI ---------------------------------------------------------------------------------


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLEUTH_STORE__PATH", str(tmp_path / "state.sqlite"))
    monkeypatch.setenv("COLUMNS", "200")
    return CliRunner()


def test_cli_prints_json_lines_in_input_order(runner: CliRunner) -> None:
    local = DATA / "article.html"
    result = runner.invoke(
        app,
        [
            "extract",
            ZH_URL,
            str(local),
            "https://rail.example/gone",
            PDF_URL,
            "--json",
            "--replay",
            str(PAGES),
        ],
    )
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["url"] for line in lines] == [
        ZH_URL,
        str(local),
        "https://rail.example/gone",
        PDF_URL,
    ]
    zh, from_file, gone, pdf = lines
    assert zh["title"] == "北京地铁17号线北段今日开通" and "15.8公里" in zh["text"]
    assert zh["tls"]["status"] == "valid"
    assert from_file["title"] == "Night trains return to the Alps"
    assert gone["error"]["code"] == "replay_miss" and gone["text"] == ""
    assert pdf["text"].startswith("The night train leaves Zurich at 21:40.")
    assert result.exit_code == 3  # one input could not be read


def test_cli_prints_the_text_for_a_person(runner: CliRunner) -> None:
    result = runner.invoke(app, ["extract", ARTICLE_URL, "--replay", str(PAGES)])
    assert result.exit_code == 0
    assert "Night trains return to the Alps" in result.stdout
    assert "published 2025-11-03" in result.stdout
    assert "## What the new services offer" in result.stdout
    assert "Related stories" not in result.stdout


def test_cli_refuses_what_is_neither_url_nor_file(runner: CliRunner) -> None:
    result = runner.invoke(app, ["extract", "ftp://rail.example/x", "--json"])
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "invalid_request" and error["field"] == "urls"
    assert "neither an http(s) URL nor a readable file" in error["message"]
    assert result.exit_code == 3


# --- HTTP --------------------------------------------------------------------------------


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    conf = Settings(replay=PAGES, store={"backend": "sqlite", "path": tmp_path / "s.sqlite"})
    with uvicorn_thread(create_app(conf, workers=False)) as base:
        yield base


def test_http_extract_answers_each_url_in_order(service: str) -> None:
    response = httpx.post(
        f"{service}/v1/extract",
        json={"urls": [ARTICLE_URL, "javascript:alert(1)", ZH_URL], "include_links": True},
        timeout=30,
    )
    assert response.status_code == 200
    article, script, zh = response.json()["pages"]
    assert article["title"] == "Night trains return to the Alps"
    assert article["published_at"] == "2025-11-03T07:30:00+01:00"
    assert article["site_name"] == "The Rail Gazette" and article["links"] == []
    assert script["error"]["code"] == "invalid_request"
    assert script["error"]["allowed"] == ["http", "https"]
    assert zh["language"] == "zh"


@pytest.mark.parametrize(
    ("body", "field"),
    [({"urls": []}, "urls"), ({"urls": [ARTICLE_URL], "max_chars": 5}, "max_chars"),
     ({"urls": [ARTICLE_URL], "url": ARTICLE_URL}, "url")],
)  # fmt: skip
def test_http_extract_names_the_bad_field(
    service: str, body: dict[str, object], field: str
) -> None:
    response = httpx.post(f"{service}/v1/extract", json=body, timeout=30)
    assert response.status_code == 422
    error = response.json()
    assert error["code"] == "invalid_request" and error["field"] == field
    assert "allowed" in error["message"]


def test_the_openapi_page_lists_extract(service: str) -> None:
    paths = httpx.get(f"{service}/openapi.json", timeout=30).json()["paths"]
    assert "post" in paths["/v1/extract"]


# --- MCP ---------------------------------------------------------------------------------


@pytest.fixture
def sleuth_mcp(tmp_path: Path) -> StdioServerParameters:
    config = tmp_path / "sleuth.yaml"
    config.write_text("store:\n  backend: memory\n", encoding="utf-8")
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "sleuth.api.cli_mcp", "--replay", str(PAGES), "--config", str(config)],
        env={"XDG_DATA_HOME": str(tmp_path / "data")},
        cwd=tmp_path,
    )


async def test_mcp_extract_page_reads_a_page(sleuth_mcp: StdioServerParameters) -> None:
    schema = mcp_tool(EXTRACT_PAGE)["outputSchema"]
    async with Client(sleuth_mcp) as client:
        result = await client.call_tool("extract_page", {"url": ARTICLE_URL})
        assert not result.is_error
        jsonschema.validate(result.structured_content, schema)
        assert result.structured_content is not None
        assert result.structured_content["author"] == "Maria Keller"
        text = result.content[0]
        assert isinstance(text, TextContent)
        assert text.text.startswith("Night trains return to the Alps\n" + ARTICLE_URL)
        assert "Sleeper trains are coming back" in text.text

        missing = await client.call_tool("extract_page", {"url": "https://rail.example/gone"})
        assert missing.is_error
        first = missing.content[0]
        assert isinstance(first, TextContent)
        assert json.loads(first.text)["errors"][0]["code"] == "replay_miss"

        bad = await client.call_tool("extract_page", {"url": ARTICLE_URL, "max_chars": "9"})
        assert bad.is_error
        first = bad.content[0]
        assert isinstance(first, TextContent)
        assert json.loads(first.text)["errors"][0]["field"] == "max_chars"
