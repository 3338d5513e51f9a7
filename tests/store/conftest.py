"""The stores every contract test runs against.

`store` is each backend; `open_shared` opens another handle on one shared state, as a
second process would, for each backend that several processes can share.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from sleuth.store import MemoryStore, SqliteStore, Store


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    backend: Store = (
        MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "state.sqlite")
    )
    yield backend
    await backend.aclose()


@pytest.fixture(params=["sqlite"])
async def open_shared(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Callable[[], Store]]:
    """Opens handles on one shared state, each as another process would."""
    opened: list[Store] = []

    def open_one() -> Store:
        handle = SqliteStore(tmp_path / "shared.sqlite")
        opened.append(handle)
        return handle

    yield open_one
    for handle in opened:
        await handle.aclose()
