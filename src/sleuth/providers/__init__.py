"""The provider registry. Built-in and external back ends register the same way.

>>> from sleuth.providers import get, names
>>> "local" in names()
True
>>> get("wikipedia").info.time_range
False
"""

from __future__ import annotations

from sleuth.errors import InvalidRequest
from sleuth.providers import (
    brave,
    duckduckgo,
    exa,
    google,
    local,
    searxng,
    serpapi,
    tavily,
    wikipedia,
)
from sleuth.providers.base import (
    HttpRequest,
    Provider,
    ProviderInfo,
    ProviderQuery,
    ProviderSettings,
    RawHit,
)

__all__ = [
    "HttpRequest",
    "Provider",
    "ProviderInfo",
    "ProviderQuery",
    "ProviderSettings",
    "RawHit",
    "get",
    "names",
    "register",
    "unregister",
]

_REGISTRY: dict[str, Provider] = {}


def register(provider: Provider) -> None:
    """Add a back end; a later registration under the same name replaces the earlier one."""
    _REGISTRY[provider.name] = provider


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def names() -> list[str]:
    return sorted(_REGISTRY)


def get(name: str) -> Provider:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise InvalidRequest(
            f"providers: unknown provider {name!r}; allowed: {', '.join(names())}",
            field="providers",
            allowed=names(),
        ) from None


_BUILTIN = (local, searxng, wikipedia, duckduckgo, brave, google, serpapi, tavily, exa)
for _builtin in (module.PROVIDER for module in _BUILTIN):
    register(_builtin)
