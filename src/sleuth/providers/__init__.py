"""The provider registry. Built-in and external back ends register the same way.

>>> from sleuth.providers import get, names
>>> "local" in names()
True
>>> get("wikipedia").info.time_range
False
"""

from __future__ import annotations

import importlib
import pkgutil

from sleuth.errors import InvalidRequest
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
    "declare",
    "get",
    "names",
    "register",
    "unregister",
]

_REGISTRY: dict[str, Provider] = {}
#: Providers declared in configuration (`kind: http`), by name; kept apart so that
#: `names()` lists the installed back ends whatever configurations this process read.
_DECLARED: dict[str, Provider] = {}


def register(provider: Provider) -> None:
    """Add a back end; a later registration under the same name replaces the earlier one."""
    _REGISTRY[provider.name] = provider


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)
    _DECLARED.pop(name, None)


def declare(provider: Provider) -> None:
    """Add (or replace) a provider a configuration declares (`sleuth.config` calls it
    for each `kind: http` entry it reads); a built-in name cannot be declared. The
    registry is the process's: for one name, the configuration read last wins."""
    if provider.name in _REGISTRY:
        raise ValueError(f"{provider.name!r} is a built-in provider; choose another name")
    _DECLARED[provider.name] = provider


def names() -> list[str]:
    return sorted(_REGISTRY)


def get(name: str) -> Provider:
    try:
        return _REGISTRY.get(name) or _DECLARED[name]
    except KeyError:
        raise InvalidRequest(
            f"providers: unknown provider {name!r}; allowed: {', '.join(names())}",
            field="providers",
            allowed=names(),
        ) from None


# Every module of this package that defines `PROVIDER` is a built-in back end, so adding
# one is adding its module (and mapping): this list is not edited per provider.
_NOT_PROVIDERS = frozenset({"base", "declared", "mapping"})


def _builtin_modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.iter_modules(__path__)
        if not info.ispkg and info.name not in _NOT_PROVIDERS and not info.name.startswith("_")
    )


for _module_name in _builtin_modules():
    _module = importlib.import_module(f"{__name__}.{_module_name}")
    if isinstance(getattr(_module, "PROVIDER", None), Provider):
        register(_module.PROVIDER)
