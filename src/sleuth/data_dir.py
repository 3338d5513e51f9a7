"""Where sleuth keeps its files when no path is configured: `$XDG_DATA_HOME/sleuth`,
else `~/.local/share/sleuth`. Its own module so that the store and the settings, which
both default into it, need not import each other."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["default_data_dir"]


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "sleuth"
