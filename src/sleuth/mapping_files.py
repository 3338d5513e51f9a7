"""Loads the field-mapping YAML files and reloads them when they change on disk.

Built-in mappings ship in `sleuth/providers/mappings/`; a deployment may put its own
`<provider>.yaml` in `mappings_dir` (sleuth.yaml), which wins. Every file is
validated when read; a changed file is noticed within a second. A file that breaks
after a good load keeps the last good mapping and logs why; a file that is broken
from the start is a `ConfigError`.

>>> builtin_mapping("searxng").fields["snippet"]
['content']
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from sleuth.errors import ConfigError
from sleuth.providers.base import Provider
from sleuth.providers.mapping import FieldMapping, PathError
from sleuth.yaml_file import read_yaml

BUILTIN_DIR = Path(__file__).parent / "providers" / "mappings"

log = logging.getLogger(__name__)


def read_mapping(path: Path) -> FieldMapping:
    """One mapping file, validated; `ConfigError` names the file and the problem."""
    data = read_yaml(path, "mapping")
    try:
        return FieldMapping.model_validate(data)
    except (ValidationError, PathError) as exc:
        raise ConfigError(f"mapping {path} is invalid: {exc}") from exc


def builtin_mapping(provider: str) -> FieldMapping:
    return read_mapping(BUILTIN_DIR / f"{provider}.yaml")


@dataclass
class _Loaded:
    path: Path
    stamp: tuple[int, int]
    mapping: FieldMapping


#: How long a provider's mapping file is trusted before its directories are looked at
#: again: each search asks for every provider's mapping, and a stat() per file per
#: search is more than a hot reload within a second needs.
RECHECK_S = 1.0


class MappingFiles:
    """The mapping of each provider, re-read when its file's mtime or size changes
    (noticed within `recheck_s` seconds of the change, by `clock`)."""

    def __init__(
        self,
        override_dir: Path | None = None,
        *,
        recheck_s: float = RECHECK_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._dirs = [d for d in (override_dir, BUILTIN_DIR) if d is not None]
        self._loaded: dict[str, _Loaded] = {}
        self._recheck_s = recheck_s
        self._clock = clock
        #: provider -> (when its file was last looked for, the file found or None).
        self._checked: dict[str, tuple[float, Path | None]] = {}

    def for_provider(self, provider: Provider) -> FieldMapping:
        now = self._clock()
        checked = self._checked.get(provider.name)
        if checked is not None and now - checked[0] < self._recheck_s:
            path = checked[1]
            loaded = self._loaded.get(provider.name)
            if path is None and provider.default_mapping is not None:
                return provider.default_mapping
            if loaded is not None and loaded.path == path:
                return loaded.mapping
        path = self._find(provider.name)
        self._checked[provider.name] = (now, path)
        if path is None:
            if provider.default_mapping is not None:
                return provider.default_mapping
            raise ConfigError(
                f"no field mapping for provider {provider.name!r}: "
                f"add {provider.name}.yaml to {' or '.join(map(str, self._dirs))}"
            )
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        loaded = self._loaded.get(provider.name)
        if loaded is not None and loaded.path == path and loaded.stamp == stamp:
            return loaded.mapping
        try:
            mapping = read_mapping(path)
        except ConfigError as exc:
            if loaded is None:
                self._checked.pop(provider.name, None)  # raise again on the next ask
                raise
            log.warning("keeping the last good mapping for %s: %s", provider.name, exc.message)
            loaded.stamp = stamp  # do not re-read a broken file on every search
            return loaded.mapping
        self._loaded[provider.name] = _Loaded(path, stamp, mapping)
        return mapping

    def _find(self, name: str) -> Path | None:
        return next(
            (d / f"{name}.yaml" for d in self._dirs if (d / f"{name}.yaml").is_file()), None
        )
