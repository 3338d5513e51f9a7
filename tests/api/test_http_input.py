"""Hostile input over HTTP: every bad request is refused in the error contract, naming
the field, before anything is accepted or read further (issue 16)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_http import QUERY, finished, serving, settings

from sleuth.contract import NOT_ONLY_WHITESPACE

# --- Last-Event-ID --------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "²".encode(),  # a digit to str.isdigit(), not to int()
        "٣".encode(),  # an Arabic-Indic three: int() reads it, a seq it is not
        b"9223372036854775808",  # 2**63: past SQLite's integers
        b"18446744073709551616",  # past Redis's stream ids
        b"-1",
        b"3.0",
    ],
)
async def test_a_last_event_id_that_is_not_a_small_ascii_number_is_refused_by_name(
    tmp_path: Path, value: bytes
) -> None:
    async with serving(settings(tmp_path)) as client:
        task_id = (await client.post("/v1/tasks", json={"query": QUERY})).json()["task_id"]
        await finished(client, task_id)
        answer = await client.get(f"/v1/tasks/{task_id}/events", headers={"Last-Event-ID": value})
    assert answer.status_code == 422
    error = answer.json()
    assert (error["code"], error["field"]) == ("invalid_request", "Last-Event-ID")
    assert "0-9" in error["message"]


async def test_the_largest_allowed_last_event_id_ends_the_stream_cleanly(tmp_path: Path) -> None:
    async with serving(settings(tmp_path)) as client:
        task_id = (await client.post("/v1/tasks", json={"query": QUERY})).json()["task_id"]
        await finished(client, task_id)
        past = await client.get(
            f"/v1/tasks/{task_id}/events", headers={"Last-Event-ID": "999999999999999"}
        )
        empty = await client.get(f"/v1/tasks/{task_id}/events", headers={"Last-Event-ID": ""})
    assert past.status_code == 200 and past.text == ""  # nothing after it, the task is done
    assert empty.status_code == 200 and "event: accepted" in empty.text


# --- tasks validate as search does -----------------------------------------------------

REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"query": "\u200b\u200c\u0007\u200d"}, "query"),  # only invisible and control characters
    ({"query": QUERY, "providers": ["nosuch"]}, "providers"),
    ({"query": QUERY, "providers": []}, "providers"),
    ({"query": QUERY, "include": ["price_history"]}, "include"),
]


@pytest.mark.parametrize(("body", "field"), REFUSED)
async def test_a_task_is_refused_exactly_as_the_search_is(
    tmp_path: Path, body: dict[str, Any], field: str
) -> None:
    async with serving(settings(tmp_path)) as client:
        searched = await client.post("/v1/search", json=body)
        submitted = await client.post("/v1/tasks", json=body)
        pending = (await client.get("/readyz")).json()["pending_tasks"]
    assert searched.status_code == 422 and searched.json()["field"] == field
    assert submitted.status_code == 422
    assert submitted.json() == searched.json()
    assert pending == 0


# --- bodies that are not a JSON object -------------------------------------------------


@pytest.mark.parametrize(
    ("content", "content_type", "says"),
    [
        (b'{"query": "caf\xe9"}', "application/json", "not UTF-8"),
        (b"[" * 10_000 + b"]" * 10_000, "application/json", "nested too deep"),
        (b"what is sleuth", "text/plain", "content-type text/plain"),
        (b"", "application/json", "empty"),
        (b"{nope", "application/json", "not valid JSON"),
        (b'"a string"', "application/json", "not a JSON object"),
    ],
)
async def test_a_body_that_is_not_a_json_object_says_what_to_send(
    tmp_path: Path, content: bytes, content_type: str, says: str
) -> None:
    async with serving(settings(tmp_path)) as client:
        answer = await client.post(
            "/v1/search", content=content, headers={"content-type": content_type}
        )
    assert answer.status_code == 422
    error = answer.json()
    assert (error["code"], error["field"]) == ("invalid_request", "body")
    assert says in error["message"]
    assert "send a JSON object with content-type application/json" in error["message"]


async def test_a_refused_method_says_which_are_allowed(tmp_path: Path) -> None:
    async with serving(settings(tmp_path)) as client:
        answer = await client.request("TRACE", "/v1/search")
    assert answer.status_code == 405 and answer.json()["code"] == "method_not_allowed"
    assert answer.headers["allow"] == "POST"
    async with serving(settings(tmp_path)) as client:
        task = await client.request("PUT", "/v1/tasks/task_x")
    assert task.headers["allow"] == "DELETE, GET"


async def test_the_openapi_document_says_what_this_deployment_accepts(tmp_path: Path) -> None:
    deployment = settings(tmp_path)
    async with serving(deployment) as client:
        document = (await client.get("/openapi.json")).json()
    request = document["components"]["schemas"]["SearchRequest"]["properties"]
    providers = request["providers"]["anyOf"][0]
    assert providers["minItems"] == 1 and "brave" in providers["items"]["enum"]
    assert "searxng" not in providers["items"]["enum"]  # off by default
    assert request["query"]["pattern"] == NOT_ONLY_WHITESPACE
    context = request["context"]["anyOf"]  # null stands for the default, as strict callers send
    assert context[1] == {"type": "null"}
    assert context[0]["maxItems"] == 20 and context[0]["items"]["maxLength"] == 2000
    served = request["include"]["anyOf"][0]["items"]["enum"]
    assert served == list(deployment.projection.optional) and "url" in served
    feedback = document["components"]["schemas"]["Feedback"]["properties"]["url"]
    assert feedback["pattern"].startswith("^https?://")
    events = document["paths"]["/v1/tasks/{task_id}/events"]["get"]["responses"]
    assert events["200"]["content"]["text/event-stream"]["itemSchema"]["required"] == [
        "id",
        "event",
        "data",
    ]
    assert {"408", "413", "503"} <= set(document["paths"]["/v1/search"]["post"]["responses"])


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": QUERY, "no_cache": 0}, "no_cache"),
        ({"query": QUERY, "max_results": "5"}, "max_results"),
        ({"query": QUERY, "max_results": 5.5}, "max_results"),
    ],
)
async def test_json_types_are_held_as_the_schema_says(
    tmp_path: Path, body: dict[str, Any], field: str
) -> None:
    async with serving(settings(tmp_path)) as client:
        searched = await client.post("/v1/search", json=body)
        submitted = await client.post("/v1/tasks", json=body)
        document = (await client.get("/openapi.json")).json()
    assert searched.status_code == submitted.status_code == 422
    assert searched.json()["field"] == submitted.json()["field"] == field
    async with serving(settings(tmp_path)) as client:  # an integer to JSON Schema
        integral = await client.post("/v1/search", json={"query": QUERY, "max_results": 5.0})
    assert integral.status_code == 200
    schema = document["paths"]["/v1/search"]["post"]["requestBody"]["content"]
    assert schema["application/json"]["schema"] == {"$ref": "#/components/schemas/SearchRequest"}


async def test_the_api_docs_load_nothing_from_elsewhere(tmp_path: Path) -> None:
    async with serving(settings(tmp_path)) as client:
        page = await client.get("/docs")
        assets = re.findall(r"""(?:src|href)=["']?([^"' >]+)""", page.text)
        answers = {url: await client.get(url) for url in assets}
    assert page.status_code == 200 and "swagger" in page.text.lower()
    assert assets and all(url.startswith("/") for url in assets), assets
    assert "//" not in " ".join(assets)
    script = next(url for url in assets if url.endswith(".js"))
    assert answers[script].status_code == 200 and "SwaggerUIBundle" in answers[script].text
