"""Shared test set-up: no test reads or writes the user's own sleuth data."""

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    data = tmp_path_factory.mktemp("xdg-data")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    for name in ("SLEUTH_CONFIG", "SLEUTH_KB__PATH", "SLEUTH_STORE__PATH"):
        monkeypatch.delenv(name, raising=False)
    return data
