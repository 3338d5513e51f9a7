"""The query injection model as a file: read once, and the `guard.injection.model:`
settings that choose it.

The model is data, not code: a JSON file holding the bias, the two thresholds, the
weights and how they were trained, written by `scripts/train_query_injection_model.py`.
The one shipped with sleuth is `query_injection_model.json` next to this module;
`guard.injection.model.path` names another. This module reads it (the only I/O of
the model, done once, when the settings are built); the features it weighs are
`sleuth.stages.safety.query_injection_model`'s.

>>> bundled_model().threshold > 0
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from itertools import repeat
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from sleuth.private_attrs import private

__all__ = ["BUNDLED", "InjectionModel", "ModelSettings", "bundled_model", "load_model"]

#: The model shipped with sleuth.
BUNDLED = Path(__file__).with_name("query_injection_model.json")


@dataclass(frozen=True)
class InjectionModel:
    """A trained model: `probability(features)`, the `threshold` from which a query is
    an order, and the lower `threshold_with_pattern` that suffices when a pattern or
    the score found an order too (both chosen at training)."""

    bias: float
    threshold: float
    weights: Mapping[str, float]
    about: Mapping[str, Any] = field(default_factory=dict)
    threshold_with_pattern: float | None = None

    def probability(self, features: Iterable[str]) -> float:
        # map() adds the same weights in the same order as a generator would, faster.
        logit = self.bias + sum(map(self.weights.get, features, repeat(0.0)))
        if logit < -30:  # exp() overflows far beyond any threshold
            return 0.0
        return 1.0 / (1.0 + math.exp(-logit))


def load_model(path: Path) -> InjectionModel:
    """Read a model file written by the training script.

    >>> load_model(BUNDLED).threshold > 0
    True
    """
    data = _json(path.read_bytes())
    try:
        return InjectionModel(
            bias=float(data["bias"]),
            threshold=float(data["threshold"]),
            weights={str(name): float(weight) for name, weight in data["weights"].items()},
            about=dict(data.get("about", {})),
            threshold_with_pattern=(
                float(data["threshold_with_pattern"])
                if data.get("threshold_with_pattern") is not None
                else None
            ),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ValueError(
            f"{path}: not a query injection model (needs bias, threshold, weights): {error}"
        ) from error


def _json(content: bytes) -> Any:
    """orjson reads the bundled model (1.5 MB) in a third of the time `json` takes, on
    every process's first query; what it refuses (NaN, say) `json` reads as before."""
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return json.loads(content.decode("utf-8"))


@cache
def bundled_model() -> InjectionModel:
    """The model shipped with sleuth, read once."""
    return load_model(BUNDLED)


class ModelSettings(BaseModel):
    """The `guard.injection.model:` section of sleuth.yaml.

    >>> ModelSettings().loaded.threshold == bundled_model().threshold
    True
    >>> ModelSettings(path="/nonexistent/model.json")
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelSettings
      Value error, model.path: cannot read /nonexistent/model.json: ...
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(
        default=True,
        description=(
            "Whether the trained classifier has the last word on whether a query is an "
            "order (sleuth.stages.safety.query_injection_model); false leaves the patterns and "
            "the score to decide alone."
        ),
    )
    path: Path | None = Field(
        default=None,
        description=(
            "A model file written by scripts/train_query_injection_model.py; by default "
            "the one shipped with sleuth."
        ),
    )
    threshold: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description=(
            "The probability from which a query is an order; by default the model's own, "
            "chosen at training for few false positives."
        ),
    )
    threshold_with_pattern: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description=(
            "The lower probability that suffices when a pattern or the score found an "
            "order too; by default the model's own (or `threshold` when it has none)."
        ),
    )

    _model: InjectionModel | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _load(self) -> ModelSettings:
        # A model file given is read here, so that a missing or broken one is refused
        # with the settings; the bundled one (1.5 MB of JSON) when first used, so that
        # a command that only reads the settings does not read it (`Sleuth.warm_up`
        # reads it before a service's first search).
        if self.enabled and self.path is not None:
            try:
                self._model = load_model(self.path)
            except OSError as error:
                raise ValueError(f"model.path: cannot read {self.path}: {error}") from error
            except ValueError as error:
                raise ValueError(f"model.path: {error}") from error
        return self

    @property
    def loaded(self) -> InjectionModel | None:
        """The model in use, None when disabled (`sleuth.private_attrs`)."""
        model: InjectionModel | None = private(self, "_model")
        if model is None and self.enabled and self.path is None:
            model = self._model = bundled_model()
        return model

    @property
    def cutoff(self) -> float:
        """The threshold in force: the configured one, else the model's."""
        if self.threshold is not None:
            return self.threshold
        model = self.loaded
        return model.threshold if model is not None else 1.0

    def cutoff_for(self, patterns_found: bool) -> float:
        """The threshold in force for a query where the patterns or the score found an
        order (`patterns_found`) or did not: never above `cutoff`."""
        if not patterns_found:
            return self.cutoff
        lower = self.threshold_with_pattern
        model = self.loaded
        if lower is None and model is not None:
            lower = model.threshold_with_pattern
        return min(lower, self.cutoff) if lower is not None else self.cutoff
