"""What a usage report may be grouped by; apart from `report`, which needs the store's
row types, so that `sleuth usage --help` lists the groups without importing those."""

from __future__ import annotations

from typing import Literal

__all__ = ["GROUPS", "Group"]

Group = Literal["provider", "tenant", "key", "tool", "workflow", "adapter"]
GROUPS: tuple[Group, ...] = ("provider", "tenant", "key", "tool", "workflow", "adapter")
