"""Fixtures shared by the provider tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sleuth.transport import HttpTransport


@pytest.fixture
async def http_transport(tmp_path: Path) -> AsyncIterator[HttpTransport]:
    """A real HTTP transport (its index in `tmp_path`), closed after the test."""
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite")
    try:
        yield transport
    finally:
        await transport.aclose()
