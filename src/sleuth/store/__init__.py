"""Where sleuth's shared state lives: circuit breakers, quota buckets, counters, the
response cache, tasks and API keys, behind the protocols of `store.base`.

    memory   MemoryStore: one process; tests and `sleuth.testing`
    sqlite   SqliteStore: one file shared by every process on the host (the default)
    redis    later: the same protocols, shared by replicas

Only this package (with `transport.py` and `api/`) touches the outside world; the
policies in `resilience/` take a store and never know which one.

>>> StoreSettings(backend="memory").backend
'memory'
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sleuth.store.base import (
    BreakerRecord,
    BreakerStore,
    BucketRule,
    CacheEntry,
    CacheRead,
    CacheSettings,
    CacheStore,
    CounterStore,
    EventRecord,
    KeyRecord,
    KeyStore,
    Store,
    Take,
    TaskRecord,
    TaskState,
    TaskStore,
    cache_key,
    entry_for,
)
from sleuth.store.memory import MemoryStore
from sleuth.store.sqlite import SqliteStore

__all__ = [
    "BreakerRecord",
    "BreakerStore",
    "BucketRule",
    "CacheEntry",
    "CacheRead",
    "CacheSettings",
    "CacheStore",
    "CounterStore",
    "EventRecord",
    "KeyRecord",
    "KeyStore",
    "MemoryStore",
    "SqliteStore",
    "Store",
    "StoreSettings",
    "Take",
    "TaskRecord",
    "TaskState",
    "TaskStore",
    "cache_key",
    "entry_for",
    "open_store",
]


def _default_path() -> Path:
    # Imported here: sleuth.config will import this module for StoreSettings.
    from sleuth.config import default_data_dir

    return default_data_dir() / "state.sqlite"


class StoreSettings(BaseModel):
    """The `store:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["memory", "sqlite"] = Field(
        "sqlite",
        description="memory: this process only; sqlite: shared by every process on the host.",
    )
    path: Path = Field(
        default_factory=_default_path,
        description="The SQLite file of breakers, quotas, counters and the response cache.",
    )
    busy_timeout_s: float = Field(
        5.0, gt=0, le=60, description="How long a write waits for another process's lock."
    )

    @field_validator("path")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        return value.expanduser()


def open_store(settings: StoreSettings) -> Store:
    """The configured store; close it with `await store.aclose()`."""
    if settings.backend == "memory":
        return MemoryStore()
    return SqliteStore(settings.path, busy_timeout_s=settings.busy_timeout_s)
