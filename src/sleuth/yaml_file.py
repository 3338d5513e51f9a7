"""Reading one YAML file of configuration: sleuth.yaml, a field mapping, a rules file.

One place for the two ways it fails, each a `ConfigError` that names what the file is
and where it lives: it cannot be read, or it is not YAML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from sleuth.errors import ConfigError

__all__ = ["read_yaml"]


def read_yaml(path: Path, what: str) -> Any:
    """The document in the YAML file at `path` (None when it is empty); `what` names
    the file in errors ("config", "mapping", "rules").

    >>> read_yaml(Path("/nonexistent.yaml"), "mapping")
    Traceback (most recent call last):
    ...
    sleuth.errors.ConfigError: cannot read mapping /nonexistent.yaml: No such file or directory
    """
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what} {path} is not valid YAML: {exc}") from exc
