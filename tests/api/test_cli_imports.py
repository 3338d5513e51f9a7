"""What starting the `sleuth` command imports: each command loads what it uses when it
runs, so `sleuth --help` and the CLI's import stay free of the server, the Redis
client and the pipeline (they cost seconds of a loaded machine's start before)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def modules_after(code: str) -> set[str]:
    """The modules loaded once `code` ran, in a fresh interpreter on this checkout."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "100"}
    done = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def loaded(modules: set[str], package: str) -> bool:
    return any(name == package or name.startswith(package + ".") for name in modules)


@pytest.mark.parametrize(
    "code",
    [
        "import sleuth.api.cli",
        "from typer.testing import CliRunner\n"
        "from sleuth.api.cli import app\n"
        "assert CliRunner().invoke(app, ['search', '--help']).exit_code == 0",
    ],
    ids=["import", "search --help"],
)
def test_the_cli_and_its_help_load_no_server_store_or_pipeline(code: str) -> None:
    modules = modules_after(code)
    for package in ("fastapi", "uvicorn", "mcp", "redis", "aiohttp", "rjieba", "tantivy"):
        assert not loaded(modules, package), package
    for module in ("sleuth.gateway", "sleuth.config", "sleuth.store", "sleuth.kb"):
        assert not loaded(modules, module), module


def test_importing_sleuth_loads_no_pipeline_until_a_name_is_used() -> None:
    assert not loaded(modules_after("import sleuth"), "sleuth.gateway")
    used = modules_after("from sleuth import Sleuth, SearchRequest")
    assert {"sleuth.gateway", "sleuth.contract"} <= used


def test_a_search_with_a_local_store_loads_neither_the_server_nor_redis(tmp_path: Path) -> None:
    modules = modules_after(
        "from sleuth import Sleuth\n"
        "from sleuth.config import KnowledgeBaseConfig, Settings\n"
        "from sleuth.store import StoreSettings\n"
        f"kb = KnowledgeBaseConfig(path={str(tmp_path / 'kb.sqlite')!r})\n"
        "settings = Settings(store=StoreSettings(backend='memory'), kb=kb)\n"
        "assert Sleuth(settings).search_sync('sleuth').query == 'sleuth'"
    )
    assert "sleuth.gateway" in modules
    # aiohttp too: a search of the knowledge base alone sends nothing over HTTP (and
    # croniter: it runs no schedule).
    for package in ("fastapi", "uvicorn", "redis", "aiohttp", "croniter"):
        assert not loaded(modules, package), package


def test_reading_the_settings_loads_no_indexer_metrics_or_http_client() -> None:
    """The settings import every stage's settings model, not what the stages use only
    when they run (each of these cost 0.1 to 0.6 s of a command's start)."""
    modules = modules_after("from sleuth.config import load_settings\nload_settings(None)")
    for package in ("aiohttp", "prometheus_client", "rjieba", "croniter", "publicsuffixlist"):
        assert not loaded(modules, package), package
    assert "sleuth.kb.index" not in modules


def test_a_redis_store_still_opens_through_the_package() -> None:
    modules = modules_after(
        "from sleuth.store import RedisStore, StoreSettings, open_store\n"
        "store = open_store(StoreSettings(backend='redis'))\n"
        "assert isinstance(store, RedisStore)"
    )
    assert "redis" in modules
