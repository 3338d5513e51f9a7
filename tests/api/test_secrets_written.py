"""No credential in any file sleuth writes. Four back ends on loopback quote the whole
request (headers, parameters, body: the key included) in their error bodies, as some
real ones do; then sleuth records a cassette, logs calls to a file, keeps tasks and
cache in SQLite, profiles raw bodies into a folder and serves the HTTP API with a
tenant's key. Every byte under the run's folder is searched for every key."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
import yaml
from live import uvicorn_thread
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from sleuth.api.http import create_app
from sleuth.config import load_settings

QUERY = "what's new in python 3.13"
PROVIDERS = ("brave", "serpapi", "exa", "tavily")


def echo(request: Request) -> Response:
    quoted = {
        "headers": dict(request.headers),
        "args": request.args.to_dict(),
        "body": request.get_data(as_text=True),
        "url": request.url,
    }
    body = {"error": f"invalid credentials in {json.dumps(quoted)}", "request": quoted}
    return Response(json.dumps(body), 401, content_type="application/json")


@pytest.fixture
def keys() -> dict[str, str]:
    """Provider keys that look like nothing in particular (no known issuer's prefix)."""
    return {name: f"{name[:3]}{secrets.token_hex(14)}" for name in PROVIDERS}


@pytest.fixture
def setup(
    tmp_path: Path, httpserver: HTTPServer, keys: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    httpserver.expect_request("/").respond_with_handler(echo)
    for name, key in keys.items():
        monkeypatch.setenv(f"{name.upper()}_API_KEY", key)
    config = tmp_path / "sleuth.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "chain": list(PROVIDERS),
                "egress": {"allow_private": ["127.0.0.1", "localhost"]},
                "providers": {name: {"base_url": httpserver.url_for("/")} for name in PROVIDERS},
                "store": {"backend": "sqlite", "path": str(tmp_path / "state.sqlite")},
                "kb": {"path": str(tmp_path / "kb.sqlite")},
                "observe": {"log_to": str(tmp_path / "calls.log")},
                "serve": {"auth": "on"},
                "tasks": {"poll_s": 0.05},
            }
        ),
        encoding="utf-8",
    )
    return config


def sleuth(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "sleuth.api.cli", *args, "--config", str(config)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
        check=False,
    )


def test_no_key_is_in_any_file_after_runs_with_echoing_providers(
    setup: Path, keys: dict[str, str], tmp_path: Path
) -> None:
    config = setup
    cassette = tmp_path / "recorded.jsonl"
    searched = sleuth("search", QUERY, "--json", "--record", str(cassette), config=config)
    assert searched.returncode == 0, searched.stderr
    profiled = sleuth(
        "fields", "profile", "--provider", "brave", "--query", QUERY, "--runs", "1",
        "--out", str(tmp_path / "profiles"), config=config,
    )  # fmt: skip
    made = sleuth("keys", "create", "--tenant", "acme", config=config)
    api_key = made.stdout.strip()
    assert api_key.startswith("sk_"), made.stderr

    with uvicorn_thread(create_app(load_settings(config), bound_host="0.0.0.0")) as base:  # noqa: S104 - auth on, as off loopback
        auth = {"Authorization": f"Bearer {api_key}"}
        answered = httpx.post(f"{base}/v1/search", json={"query": QUERY}, headers=auth, timeout=30)
        assert answered.status_code == 200
        submitted = httpx.post(f"{base}/v1/tasks", json={"query": QUERY + "?"}, headers=auth)
        task = f"{base}/v1/tasks/{submitted.json()['task_id']}"
        deadline = time.monotonic() + 30
        while httpx.get(task, headers=auth).json()["status"] not in {"success", "failed"}:
            assert time.monotonic() < deadline, "the task did not finish"
            time.sleep(0.1)
        assert httpx.get(f"{base}/dashboard/data", headers=auth).status_code == 200

    # The back ends did quote every key, so a leak had every chance.
    recorded = [json.loads(line) for line in cassette.read_text(encoding="utf-8").splitlines()]
    assert {line["provider"] for line in recorded} == set(PROVIDERS)
    assert all(line["status"] == 401 and "[REDACTED]" in json.dumps(line) for line in recorded)
    assert profiled.returncode == 0, profiled.stderr
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    names = {path.name for path in written}
    assert {"recorded.jsonl", "calls.log", "state.sqlite", "brave-1.json"} <= names
    leaks = [
        (path.name, name)
        for path in written
        for name, key in [*keys.items(), ("api key", api_key)]
        for form in {key, quote(key, safe="")}
        if form.encode() in path.read_bytes()
    ]
    assert leaks == []
    outputs = searched.stdout + profiled.stdout
    assert not [name for name, key in keys.items() if key in outputs]
