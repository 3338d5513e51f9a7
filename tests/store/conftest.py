"""The stores every contract test runs against.

`store` is each backend; `open_shared` opens another handle on one shared state, as a
second process (or replica) would, for each backend that several processes can share.
Redis runs on a private `redis-server` started once per session (`tests/redis_server.py`);
each test gets a namespace of its own, so nothing needs flushing between tests. The
Redis store runs with two task shards, so that claims across shards are tested too;
`redis-cluster` is a one-node Redis Cluster, which refuses any script or command that
would span two slots.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from redis_server import namespace, redis_url_or_skip, stop_shared_servers
from sleuth.store import MemoryStore, RedisStore, SqliteStore, Store


@pytest.fixture(scope="session", autouse=True)
def _stop_redis_servers() -> Iterator[None]:
    yield
    stop_shared_servers()


def open_redis(backend: str, key_namespace: str) -> RedisStore:
    cluster = backend == "redis-cluster"
    url = redis_url_or_skip(cluster=cluster)
    return RedisStore(url, namespace=key_namespace, cluster=cluster, task_shards=2)


@pytest.fixture(params=["memory", "sqlite", "redis", "redis-cluster"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    backend: Store
    if request.param == "memory":
        backend = MemoryStore()
    elif request.param == "sqlite":
        backend = SqliteStore(tmp_path / "state.sqlite")
    else:
        backend = open_redis(request.param, namespace())
    yield backend
    await backend.aclose()


@pytest.fixture(params=["sqlite", "redis", "redis-cluster"])
async def open_shared(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Callable[[], Store]]:
    """Opens handles on one shared state, each as another process would."""
    opened: list[Store] = []
    shared_namespace = namespace()

    def open_one() -> Store:
        handle: Store = (
            SqliteStore(tmp_path / "shared.sqlite")
            if request.param == "sqlite"
            else open_redis(request.param, shared_namespace)
        )
        opened.append(handle)
        return handle

    yield open_one
    for handle in opened:
        await handle.aclose()
