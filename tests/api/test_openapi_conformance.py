"""Schemathesis against the running service's own /openapi.json, `--checks all` with
positive and negative data, with a key and without one: no server error, every
response as documented, valid data accepted and invalid data refused. Real process,
providers replayed, Schemathesis's own command line; examples bounded to keep it
quick, and each excluded check named with its reason (`EXCLUDED`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from live import free_port, wait_ready

WEB = Path(__file__).parents[1] / "data" / "web.jsonl"


def command_for(*args: str) -> list[str]:
    return [sys.executable, "-m", "sleuth.api.cli", *args]


@pytest.fixture(scope="module")
def live_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    folder = tmp_path_factory.mktemp("conformance")
    config = folder / "sleuth.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "chain": ["brave", "tavily", "exa"],
                "store": {"backend": "sqlite", "path": str(folder / "state.sqlite")},
                "kb": {"path": str(folder / "kb.sqlite")},
                "tasks": {"workers": 2, "poll_s": 0.1},
                # As in production: keys required (so schemathesis also checks that a
                # request without one is refused), with a limit the run never reaches.
                "serve": {
                    "auth": "on",
                    "rate_limit": {"per_minute": 100000, "burst": 10000},
                    "processes": 1,  # one process starts faster; --processes has its own tests
                },
            }
        ),
        encoding="utf-8",
    )
    made = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [*command_for("keys", "create", "--tenant", "conformance"), "--config", str(config)],
        capture_output=True,
        text=True,
        check=True,
    )
    key = made.stdout.strip()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [*command_for("serve"), "--config", str(config)]
    log = (folder / "serve.log").open("wb")
    server = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [*command, "--port", str(port), "--replay", str(WEB)], stdout=log, stderr=log
    )
    try:
        wait_ready(base, server)
        yield base, key
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


#: Checks left out of `--checks all`, each with its reason.
EXCLUDED = {
    # Replaced by schemathesis_hooks.positive_data_accepted_unless_the_guard_refused:
    # the same check, but a query the guard refuses (nothing searchable, only
    # punctuation, the content policy) may be refused by name; JSON Schema cannot say it.
    "positive_data_acceptance": "narrowed in schemathesis_hooks.py",
    # DELETE /v1/tasks/{id} cancels a task; the cancelled task stays readable with its
    # error, as docs/service.md says, so a GET after it is 200, not 404.
    "use_after_free": "DELETE cancels a task, which stays readable",
}


def schemathesis_run(
    base: str, *headers: str, examples: int, folder: Path
) -> subprocess.CompletedProcess[str]:
    """`st run --checks all --mode all` against `base`, positive and negative data, run
    in `folder` (where Schemathesis keeps its cache)."""
    command = [str(Path(sys.executable).with_name("st")), "run", f"{base}/openapi.json"]
    command += ["--checks", "all", "--exclude-checks", ",".join(EXCLUDED), "--mode", "all"]
    command += ["--max-examples", str(examples), "--seed", SEED, "--workers", "1"]
    command += ["--request-timeout", "30", "--generation-database", "none", "--no-color"]
    for header in headers:
        command += ["-H", header]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "schemathesis_hooks"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])
    return subprocess.run(  # noqa: S603 - our own interpreter's tool and arguments
        command, capture_output=True, text=True, env=env, timeout=600, check=False, cwd=folder
    )


#: A fixed seed keeps CI repeatable; set SCHEMATHESIS_SEED_SLEUTH to explore others.
SEED = os.environ.get("SCHEMATHESIS_SEED_SLEUTH", "16")


def operations(base: str) -> int:
    """How many operations the served OpenAPI document lists: every one is tested."""
    paths = httpx.get(f"{base}/openapi.json", timeout=10).json()["paths"]
    verbs = {"get", "post", "put", "patch", "delete", "head", "options", "trace"}
    return sum(len(verbs & set(item)) for item in paths.values())


def test_schemathesis_checks_all_with_a_key_positive_and_negative(
    live_schema: tuple[str, str], tmp_path: Path
) -> None:
    base, key = live_schema
    run = schemathesis_run(base, f"Authorization: Bearer {key}", examples=30, folder=tmp_path)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    count = operations(base)
    assert f"Selected: {count}/{count}" in run.stdout and f"Tested: {count}" in run.stdout
    assert "✅ Stateful" in run.stdout  # the task lifecycle ran too


def test_schemathesis_checks_all_without_a_key(
    live_schema: tuple[str, str], tmp_path: Path
) -> None:
    base, _ = live_schema
    run = schemathesis_run(base, examples=10, folder=tmp_path)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert f"Tested: {operations(base)}" in run.stdout
