"""Packages that import their public names on first use still offer every one."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("package", ["sleuth", "sleuth.usage", "sleuth.store", "sleuth.kb"])
def test_every_listed_name_is_there_and_an_unknown_one_is_not(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
        assert name in dir(module), name
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = module.no_such_name
