"""A package's public names imported on first use (PEP 562 module `__getattr__`).

A package whose `__init__` imports every name it exports makes each of its submodules
pay for all of them: `import sleuth.errors` imported the whole pipeline behind
`sleuth.Sleuth`, and `sleuth usage --help` (for `sleuth.usage.groups`) the store. Such
a package lists where each name lives and defines

    def __getattr__(name: str) -> object:
        return lazy_names.load(__name__, _HOMES, name)

The name is imported the first time it is read, then kept on the package, so later
reads are plain attribute reads.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping

__all__ = ["listed", "load"]


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
