"""Shared test set-up: no test reads or writes the user's own sleuth data."""

from pathlib import Path

import pytest

from egress_fakes import fake_dns


@pytest.fixture(autouse=True)
def _private_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    data = tmp_path_factory.mktemp("xdg-data")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    for name in ("SLEUTH_CONFIG", "SLEUTH_KB__PATH", "SLEUTH_STORE__PATH"):
        monkeypatch.delenv(name, raising=False)
    return data


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """A fake resolver (`egress_fakes.fake_dns`): add names to the table it returns."""
    return fake_dns(monkeypatch)
