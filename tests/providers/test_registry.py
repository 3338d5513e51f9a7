"""Every registered provider keeps the sans-I/O rule and declares its capabilities."""

import ast
from pathlib import Path

import pytest

from sleuth import providers
from sleuth.config import Settings
from sleuth.errors import InvalidRequest
from sleuth.providers.base import ProviderQuery, ProviderSettings
from sleuth.testing import fake_provider, registered

PROVIDER_DIR = Path(providers.__file__).parent
FORBIDDEN = {
    "httpx",
    "asyncio",
    "redis",
    "requests",
    "aiohttp",
    "socket",
    "urllib.request",
    "sqlite3",
}


@pytest.mark.parametrize("module", sorted(PROVIDER_DIR.glob("*.py")), ids=lambda p: p.name)
def test_provider_modules_do_no_io(module: Path) -> None:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert not {name for name in imported if name.split(".")[0] in FORBIDDEN or name in FORBIDDEN}


BUILTIN = [
    *("local", "searxng", "wikipedia", "duckduckgo"),
    *("brave", "google", "serpapi", "tavily", "exa"),
    *("bocha", "zhipu", "baidu", "iqs"),
    *("perplexity", "firecrawl", "linkup", "youcom", "kagi"),
]


def test_every_module_with_a_provider_is_registered_without_a_list() -> None:
    # Adding a provider is adding its module: the registry finds it, and its
    # ProviderInfo gives `providers.<name>` its default endpoint and key variable.
    assert sorted(BUILTIN) == providers.names()
    for name in BUILTIN[9:]:
        info = providers.get(name).info
        conf = Settings().providers[name]
        assert (conf.base_url, conf.api_key_env) == (info.default_url, info.api_key_env)


@pytest.mark.parametrize("name", BUILTIN)
def test_builtin_providers_declare_themselves(name: str) -> None:
    provider = providers.get(name)
    assert provider.info.name == name
    assert provider.info.docs_url.startswith("https://")
    assert provider.info.query_style in ("keywords", "natural")
    conf = Settings().providers[name]
    assert conf.base_url, "every built-in provider has a default endpoint"
    assert bool(conf.api_key_env) == provider.info.needs_key
    request = provider.build_request(
        ProviderQuery(text="python", original="python", max_results=5, language="en"),
        ProviderSettings(base_url=conf.base_url, api_key="test-key", options={"cx": "test-cx"}),
    )
    assert request.method in ("GET", "POST")


def test_registering_and_removing_a_provider() -> None:
    with registered(fake_provider("extra")):
        assert "extra" in providers.names()
    assert "extra" not in providers.names()
    with pytest.raises(InvalidRequest, match="unknown provider 'extra'"):
        providers.get("extra")
