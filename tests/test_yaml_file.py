"""Tests for sleuth.yaml_file: one reading of configuration files, errors that name them."""

from __future__ import annotations

from pathlib import Path

import pytest

from sleuth.errors import ConfigError
from sleuth.yaml_file import read_yaml


def test_a_document_is_read(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("rules:\n  - name: 限流\n", encoding="utf-8")
    assert read_yaml(path, "rules") == {"rules": [{"name": "限流"}]}


def test_an_empty_file_is_none(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    assert read_yaml(path, "config") is None


def test_broken_yaml_names_what_and_where(tmp_path: Path) -> None:
    path = tmp_path / "brave.yaml"
    path.write_text("fields: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"mapping {path} is not valid YAML"):
        read_yaml(path, "mapping")
