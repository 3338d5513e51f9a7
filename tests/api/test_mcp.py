"""The MCP server as agents reach it: the SDK's own client over stdio and streamable HTTP,
with every provider answering from the recorded web cassette."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import jsonschema
import pytest
from fastapi import FastAPI
from live import uvicorn_thread
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent
from starlette.requests import Request
from starlette.routing import Route

from sleuth.api.mcp import McpEndpoint, build_mcp
from sleuth.errors import Unauthorized
from sleuth.gateway import Sleuth
from sleuth.store import MemoryStore
from sleuth.tasks import DEFAULT_TENANT, TaskRunner
from sleuth.testing import memory_settings

DATA = Path(__file__).parents[1] / "data"
CASSETTE = DATA / "web.jsonl"
QUERY = "what's new in python 3.13"
# Each cassette line answers once: a second search for QUERY asks other back ends.
FIRST = ["brave", "tavily", "serpapi"]
SECOND = ["google", "exa", "duckduckgo"]


def text_of(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


def errors_of(result: CallToolResult) -> list[dict[str, Any]]:
    """The error contract of an `isError` result: JSON in its text, no structured
    content (which clients would check against the success output schema)."""
    assert result.is_error
    assert result.structured_content is None
    errors: list[dict[str, Any]] = json.loads(text_of(result))["errors"]
    return errors


def assert_cited_search(result: CallToolResult) -> None:
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert isinstance(data, dict)
    assert data["query"] == QUERY
    titles = [item["title"] for item in data["results"]]
    assert titles and all(titles)
    assert any("3.13" in title for title in titles)
    assert all(item["url"].startswith("https://") for item in data["results"])
    text = text_of(result)
    # The summary's sentences carry [n] marks that point into the numbered sources.
    marks = {int(n) for n in re.findall(r"\[(\d+)\]\s*$", text.split("Sources:")[0], re.M)}
    assert marks and marks <= set(range(1, len(titles) + 1))
    for number, item in enumerate(data["results"], start=1):
        assert f"[{number}] {item['title']} — {item['url']}" in text


def assert_invalid_time_range(result: CallToolResult) -> None:
    (error,) = errors_of(result)
    assert error["code"] == "invalid_request"
    assert error["field"] == "time_range"
    assert error["allowed"] == ["any", "past_week", "past_month", "past_year"]
    assert "time_range" in text_of(result) and "past_week" in text_of(result)


async def finished(client: Client, task_id: str) -> dict[str, Any]:
    with anyio.fail_after(10):
        while True:
            result = await client.call_tool("search_task_status", {"task_id": task_id})
            assert not result.is_error, text_of(result)
            task = result.structured_content
            assert isinstance(task, dict)
            if task["status"] in ("success", "failed"):
                return task
            await anyio.sleep(0.05)


# --- stdio: the `sleuth mcp` process a desktop agent starts ------------------------------


@pytest.fixture
def sleuth_mcp(tmp_path: Path) -> StdioServerParameters:
    config = tmp_path / "sleuth.yaml"
    config.write_text(f"chain: [{', '.join(FIRST)}]\nstore:\n  backend: memory\n", encoding="utf-8")
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "sleuth.api.cli_mcp", "--replay", str(CASSETTE), "--config", str(config)],
        env={"XDG_DATA_HOME": str(tmp_path / "data")},
        cwd=tmp_path,
    )


async def test_stdio_lists_the_tools_and_searches(sleuth_mcp: StdioServerParameters) -> None:
    async with Client(sleuth_mcp) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert list(listed) == [
            "web_search",
            "search_task_submit",
            "search_task_status",
            "extract_page",
        ]
        search = listed["web_search"]
        assert "query" in search.input_schema["properties"]
        assert search.input_schema["required"] == ["query"]
        assert search.output_schema is not None
        assert search.annotations is not None
        assert search.annotations.read_only_hint is True
        assert search.annotations.open_world_hint is True
        status = listed["search_task_status"].annotations
        assert status is not None and status.idempotent_hint is True

        # The client itself checks the structured content against the output schema.
        result = await client.call_tool("web_search", {"query": QUERY, "include": ["url"]})
        assert_cited_search(result)
        assert set(result.structured_content["providers"]) == set(FIRST)

        bad = await client.call_tool("web_search", {"query": "q", "time_range": "yesterday"})
        assert_invalid_time_range(bad)


async def test_stdio_runs_a_submitted_task_to_success(sleuth_mcp: StdioServerParameters) -> None:
    async with Client(sleuth_mcp) as client:
        submitted = await client.call_tool(
            "search_task_submit",
            {"query": QUERY, "providers": SECOND, "idempotency_key": "k1"},
        )
        assert not submitted.is_error, text_of(submitted)
        task = submitted.structured_content
        assert isinstance(task, dict)
        assert task["task_id"].startswith("task_") and task["status"] == "pending"

        again = await client.call_tool(
            "search_task_submit", {"query": QUERY, "providers": SECOND, "idempotency_key": "k1"}
        )
        assert again.structured_content["task_id"] == task["task_id"]

        done = await finished(client, task["task_id"])
        assert done["status"] == "success"
        assert done["result"]["results"][0]["title"]
        assert done["events"][0]["kind"] == "accepted"

        missing = await client.call_tool("search_task_status", {"task_id": "task_nope"})
        (error,) = errors_of(missing)
        assert error["code"] == "task_not_found" and error["field"] == "task_id"


# --- streamable HTTP: mounted at /mcp in a FastAPI app, served by uvicorn ----------------


KEYS = {"alice-key": "alice", "bob-key": "bob"}


async def tenant_of_key(request: Request) -> str:
    """Stands in for the service's API keys."""
    presented = request.headers.get("x-api-key")
    if presented is None:
        return DEFAULT_TENANT
    if presented not in KEYS:
        raise Unauthorized("the API key is not valid")
    return KEYS[presented]


@pytest.fixture
def served() -> Iterator[str]:
    """A FastAPI app with the MCP endpoint mounted as api/http.py mounts it: the route
    made with the app, the server started in its lifespan once the runner exists."""
    mcp = McpEndpoint(host="127.0.0.1", authenticate=tenant_of_key)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = MemoryStore()
        async with (
            Sleuth(memory_settings(chain=FIRST, replay=CASSETTE), store=store) as sleuth,
            TaskRunner(sleuth, store) as runner,
            mcp.serving(build_mcp(sleuth, runner)),
        ):
            yield

    app = FastAPI(lifespan=lifespan)
    app.router.routes.append(Route("/mcp", endpoint=mcp))

    with uvicorn_thread(app) as base:
        yield f"{base}/mcp"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_http_lists_and_calls_tools(served: str, mode: str) -> None:
    async with Client(served, mode=mode) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert names == ["web_search", "search_task_submit", "search_task_status", "extract_page"]
        assert_cited_search(
            await client.call_tool("web_search", {"query": QUERY, "include": ["url"]})
        )
        assert_invalid_time_range(
            await client.call_tool("web_search", {"query": "q", "time_range": "yesterday"})
        )


async def test_http_tasks_belong_to_their_tenant(served: str) -> None:
    @asynccontextmanager
    async def with_key(key: str) -> AsyncIterator[Client]:
        async with (
            httpx2.AsyncClient(headers={"x-api-key": key}, timeout=10) as http,
            Client(streamable_http_client(served, http_client=http)) as client,
        ):
            yield client

    async with with_key("alice-key") as alice, with_key("bob-key") as bob:
        submitted = await alice.call_tool("search_task_submit", {"query": QUERY})
        task_id = submitted.structured_content["task_id"]
        done = await finished(alice, task_id)
        assert done["status"] == "success"
        assert done["result"]["results"]
        other = await bob.call_tool("search_task_status", {"task_id": task_id})
        assert errors_of(other)[0]["code"] == "task_not_found"


def test_http_refuses_a_bad_key_a_foreign_host_and_an_unknown_tool(served: str) -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
    }
    with httpx.Client(timeout=5) as http:
        # The key is checked before any MCP message is read, with the error contract.
        bad_key = http.post(served, json=listing, headers={**headers, "x-api-key": "nope"})
        assert bad_key.status_code == 401
        assert bad_key.headers["www-authenticate"] == "Bearer"
        assert bad_key.json()["code"] == "unauthorized"
        # On loopback, where keys may be off, a DNS-rebound page cannot reach /mcp.
        rebound = http.post(served, json=listing, headers={**headers, "host": "evil.example"})
        assert rebound.status_code == 421
        unknown = http.post(
            served,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "rm"}},
            headers=headers,
        )
    assert unknown.status_code == 200
    assert "unknown tool 'rm'" in unknown.json()["error"]["message"]


async def test_the_endpoint_answers_503_until_its_server_runs() -> None:
    endpoint = McpEndpoint()
    transport = httpx.ASGITransport(app=endpoint)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        answer = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "1"
    assert answer.json()["code"] == "service_unavailable"


# --- in memory: strict arguments and the error contract ----------------------------------


@asynccontextmanager
async def in_memory() -> AsyncIterator[Client]:
    store = MemoryStore()
    async with (
        Sleuth(memory_settings(chain=FIRST, replay=CASSETTE), store=store) as sleuth,
        TaskRunner(sleuth, store) as runner,
        Client(build_mcp(sleuth, runner)) as client,
    ):
        yield client


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("web_search", {"query": "q", "max_results": True}, "max_results"),
        ("web_search", {"query": "q", "max_results": "5"}, "max_results"),
        ("web_search", {"query": "q", "max_results": 5.0}, "max_results"),
        ("web_search", {"query": "q", "max_results": 0}, "max_results"),
        ("web_search", {"query": "q", "no_cache": "yes"}, "no_cache"),
        ("web_search", {"query": "q", "page": 2}, "page"),
        ("web_search", {"query": 42}, "query"),
        ("search_task_submit", {"query": "q", "max_results": "5"}, "max_results"),
    ],
)
async def test_arguments_are_held_to_the_schemas_json_types(
    tool: str, arguments: dict[str, Any], field: str
) -> None:
    async with in_memory() as client:
        result = await client.call_tool(tool, arguments)

    (error,) = errors_of(result)
    assert error["code"] == "invalid_request"
    assert error["field"] == field
    assert error["message"].startswith(f"{field}: ")


async def test_an_error_result_carries_no_structured_content_to_fail_the_output_schema() -> None:
    async with in_memory() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        ok = await client.call_tool("web_search", {"query": QUERY, "max_results": 3})
        bad = await client.call_tool("web_search", {"query": QUERY, "max_results": 21})

    schema = tools["web_search"].output_schema
    assert schema is not None
    jsonschema.validate(ok.structured_content, schema)
    assert len(ok.structured_content["results"]) == 3
    (error,) = errors_of(bad)
    assert error["allowed"] == ["1..20"]


async def test_an_unknown_include_value_lists_what_this_deployment_serves() -> None:
    async with in_memory() as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool("web_search", {"query": "q", "include": ["link"]})

    offered = listed["web_search"].input_schema["properties"]["include"]["items"]["enum"]
    (error,) = errors_of(result)
    assert error["field"] == "include"
    assert error["allowed"] == offered


# --- the MCP Inspector CLI: what a user running it sees ----------------------------------

INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"
#: What the Inspector is asked, and the field sleuth's message must name. The
#: Inspector converts each value by the schema's type first ("true" for an integer
#: becomes 1), so the wrong types are those it passes on: a fraction for an integer,
#: a bare string for a list.
MISTAKES = [
    (["max_results=0"], "max_results"),
    (["page=2"], "page"),  # an unknown field
    (["max_results=2.5"], "max_results"),
    (["domain_filter=python.org"], "domain_filter"),
]


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    """The Inspector CLI through npx (fetched from the npm registry on first use)."""
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not installed: the MCP Inspector CLI cannot run here")
    command = [npx, "--yes", INSPECTOR, "--cli"]
    try:
        probe = subprocess.run(  # noqa: S603 (npx found on PATH, fixed arguments)
            [*command, "--help"], capture_output=True, text=True, timeout=240, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npx could not fetch {INSPECTOR} within 240 s")
    if probe.returncode != 0 and "Usage" not in probe.stdout + probe.stderr:
        pytest.skip(f"npx could not run {INSPECTOR}: {probe.stderr.strip()[-300:]}")
    return command


def inspect_call(command: list[str], target: list[str], args: list[str], cwd: Path) -> Any:
    pairs = [part for pair in ["query=python", *args] for part in ("--tool-arg", pair)]
    done = subprocess.run(  # noqa: S603 (the test's own command line)
        [*command, *target, "--method", "tools/call", "--tool-name", "web_search", *pairs],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def assert_sleuths_message(shown: Any, field: str) -> None:
    assert shown["isError"] is True
    assert "structuredContent" not in shown
    (error,) = json.loads(shown["content"][0]["text"])["errors"]
    assert error["field"] == field
    assert error["message"].startswith(f"{field}: ")


@pytest.mark.parametrize(("args", "field"), MISTAKES)
def test_the_inspector_shows_sleuths_message_over_stdio(
    inspector: list[str], sleuth_mcp: StdioServerParameters, args: list[str], field: str
) -> None:
    env = [f"-e XDG_DATA_HOME={sleuth_mcp.env['XDG_DATA_HOME']}"] if sleuth_mcp.env else []
    target = [*" ".join(env).split(), "--", sleuth_mcp.command, *sleuth_mcp.args]
    cwd = Path(str(sleuth_mcp.cwd))
    assert_sleuths_message(inspect_call(inspector, target, args, cwd), field)


@pytest.mark.parametrize(("args", "field"), MISTAKES)
def test_the_inspector_shows_sleuths_message_over_http(
    inspector: list[str], served: str, args: list[str], field: str, tmp_path: Path
) -> None:
    target = [served, "--transport", "http"]
    assert_sleuths_message(inspect_call(inspector, target, args, tmp_path), field)
