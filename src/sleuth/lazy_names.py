"""A package's public names imported on first use (PEP 562 module `__getattr__`).

A package whose `__init__` imports every name it exports makes each of its submodules
pay for all of them: `import sleuth.errors` imported the whole pipeline behind
`sleuth.Sleuth`, and `sleuth usage --help` (for `sleuth.usage.groups`) the store. Such
a package lists where each name lives and takes its module hooks from here:

    __getattr__, __dir__ = lazy_names.hooks(__name__, _HOMES)

The name is imported the first time it is read, then kept on the package, so later
reads are plain attribute reads.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["hooks", "listed", "load"]


def hooks(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The package's module `__getattr__` (`load`) and `__dir__` (`listed`)."""

    def attribute(name: str) -> object:
        return load(package, homes, name)

    def names() -> list[str]:
        return listed(package, homes)

    return attribute, names


def load(package: str, homes: Mapping[str, str], name: str) -> object:
    """`name` from the module `homes` says it lives in, kept on `package`."""
    home = homes.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    setattr(sys.modules[package], name, value)
    return value


def listed(package: str, homes: Mapping[str, str]) -> list[str]:
    """The package's `dir()`: what it holds and what it imports on first use."""
    return sorted({*vars(sys.modules[package]), *homes})
