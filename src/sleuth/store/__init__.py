"""Where sleuth's shared state lives: circuit breakers, quota buckets, counters, the
response cache, tasks and API keys, behind the protocols of `store.base`.

    memory   MemoryStore: one process; tests and `sleuth.testing`
    sqlite   SqliteStore: one file shared by every process on the host (the default)
    redis    RedisStore: one Redis (or Valkey, or a Redis Cluster) shared by replicas

Only this package (with `transport.py` and `api/`) touches the outside world; the
policies in `resilience/` take a store and never know which one.

>>> StoreSettings(backend="memory").backend
'memory'
>>> StoreSettings.model_validate("redis://10.0.0.5:6379/0").backend  # `store: redis://...`
'redis'
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sleuth import lazy_names
from sleuth.data_dir import default_data_dir
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
    WindowCall,
    cache_key,
    entry_for,
)
from sleuth.store.memory import MemoryStore
from sleuth.store.sqlite import SqliteStore

if TYPE_CHECKING:
    from sleuth.store.redis import RedisStore

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
    "RedisStore",
    "SqliteStore",
    "Store",
    "StoreSettings",
    "Take",
    "TaskRecord",
    "TaskState",
    "TaskStore",
    "WindowCall",
    "cache_key",
    "entry_for",
    "open_store",
]


def _default_path() -> Path:
    return default_data_dir() / "state.sqlite"


_DAY_S = 86400.0
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


class StoreSettings(BaseModel):
    """The `store:` section of sleuth.yaml; `store: redis://host:6379/0` is short for
    `store: {backend: redis, url: redis://host:6379/0}`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["memory", "sqlite", "redis"] = Field(
        "sqlite",
        description="memory: this process only; sqlite: shared by every process on the host; "
        "redis: shared by every replica (tasks, quotas, breakers, cache).",
    )
    path: Path = Field(
        default_factory=_default_path,
        description="sqlite: the file of breakers, quotas, counters, cache, tasks and keys.",
    )
    busy_timeout_s: float = Field(
        5.0, gt=0, le=60, description="sqlite: how long a write waits for another process's lock."
    )
    url: str = Field(
        "redis://127.0.0.1:6379/0",
        repr=False,  # it may hold a password
        description="redis: the server (redis://, rediss:// for TLS, unix:// for a socket).",
    )
    namespace: str = Field(
        "sleuth",
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="redis: prefix of every key, so that several deployments share a server.",
    )
    cluster: bool = Field(False, description="redis: `url` names a node of a Redis Cluster.")
    task_shards: int = Field(
        1,
        ge=1,
        le=1024,
        description="redis: queues the tasks are spread over (one cluster slot each); "
        "fixed for the life of the data.",
    )
    task_ttl_s: float = Field(
        7 * _DAY_S, gt=0, description="redis: how long a finished task and its events are kept."
    )
    cache_keep_s: float = Field(
        30 * _DAY_S,
        ge=0,
        description="redis: how long a cached answer is kept once stale, for the degradation "
        "ladder to fall back on.",
    )
    state_ttl_s: float = Field(
        7 * _DAY_S,
        gt=0,
        description="redis: breakers and quota buckets untouched this long are forgotten "
        "(by then a bucket is full and a breaker closed anyway).",
    )

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, str):
            if value.startswith(_REDIS_SCHEMES):
                return {"backend": "redis", "url": value}
            return {"backend": value}  # "memory" or "sqlite"; anything else is refused
        if isinstance(value, dict) and "url" in value and "backend" not in value:
            return {**value, "backend": "redis"}
        return value

    @field_validator("path")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        return value.expanduser()

    @field_validator("url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        if not value.startswith(_REDIS_SCHEMES):
            raise ValueError(f"a Redis URL starts with one of {', '.join(_REDIS_SCHEMES)}")
        return value


def __getattr__(name: str) -> object:
    # The Redis client library is imported when a Redis store is opened (or named),
    # not by every process that keeps its state in SQLite or memory.
    return lazy_names.load(__name__, {"RedisStore": "sleuth.store.redis"}, name)


def open_store(settings: StoreSettings) -> Store:
    """The configured store; close it with `await store.aclose()`."""
    if settings.backend == "memory":
        return MemoryStore()
    if settings.backend == "redis":
        from sleuth.store.redis import RedisStore

        return RedisStore(
            settings.url,
            namespace=settings.namespace,
            cluster=settings.cluster,
            task_shards=settings.task_shards,
            task_ttl_s=settings.task_ttl_s,
            cache_keep_s=settings.cache_keep_s,
            state_ttl_s=settings.state_ttl_s,
        )
    return SqliteStore(settings.path, busy_timeout_s=settings.busy_timeout_s)
