"""Request bodies held to their JSON Schema's types, as the OpenAPI document states
them: `"5"`, `0` or `"yes"` for an integer or a boolean are refused by name, where
FastAPI's own reading would coerce them. `5.0` is an integer to JSON Schema, so it
is one here too."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from sleuth.contract import describe_validation_error
from sleuth.errors import InvalidRequest

__all__ = ["schema_typed", "strict_model"]

M = TypeVar("M", bound=BaseModel)


def schema_typed(data: Any, model: type[BaseModel]) -> Any:
    """`data` with each whole float of an integer field as the integer it is."""
    if not isinstance(data, dict):
        return data
    fields = model.model_fields
    return {
        name: int(value)
        if isinstance(value, float)
        and value.is_integer()
        and name in fields
        and fields[name].annotation in (int, int | None)
        else value
        for name, value in data.items()
    }


def strict_model(model: type[M], data: Any) -> M:
    """`data` (decoded JSON) as `model`, strictly typed; `InvalidRequest` naming each
    bad field otherwise."""
    try:
        return model.model_validate_json(json.dumps(schema_typed(data, model)), strict=True)
    except ValidationError as exc:
        raise InvalidRequest.from_details(describe_validation_error(exc)) from None
