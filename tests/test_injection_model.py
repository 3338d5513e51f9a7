"""Tests for sleuth.injection_model: the model file and the settings that choose it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from sleuth.injection_model import BUNDLED, InjectionModel, ModelSettings, bundled_model, load_model


def test_the_shipped_model_says_how_it_was_trained() -> None:
    model = bundled_model()
    assert 0.0 < model.threshold < 1.0
    assert len(model.weights) > 1000
    assert model.about["trained_on"] > 2000
    assert set(model.about["cross_validated"]) == {"detection", "false_positives"}


def test_a_broken_model_file_is_refused_by_field(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"bias": 0.0, "weights": {}}), encoding="utf-8")
    with pytest.raises(ValidationError, match=r"model\.path: .*needs bias, threshold, weights"):
        ModelSettings(path=path)
    with pytest.raises(ValidationError, match="cannot read"):
        ModelSettings(path=tmp_path / "missing.json")
    with pytest.raises(ValidationError, match="less than or equal to 1"):
        ModelSettings(threshold=1.5)


def test_probability_is_the_logistic_of_the_weights() -> None:
    model = InjectionModel(bias=-1.0, threshold=0.5, weights={"a": 1.0, "b": 2.0})
    assert model.probability(["a"]) == pytest.approx(0.5)
    assert model.probability(["a", "b", "unknown"]) == pytest.approx(1 / (1 + 2.718281828**-2))
    assert InjectionModel(-1000.0, 0.5, {}).probability([]) == 0.0


def test_load_model_reads_the_shipped_file() -> None:
    assert load_model(BUNDLED) == bundled_model()
