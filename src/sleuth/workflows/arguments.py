"""A declared tool's arguments, checked against its parameters.

`check_arguments` takes decoded JSON (HTTP, MCP, a workflow step) and holds it to the
parameters' JSON types, as the tool's schema promises: `"5"` is no integer, `1` no
boolean. `from_command_line` reads `--param k=v` text into those types first. Every
complaint is an `InvalidRequest` whose details name the parameter and, where there
is a short list, the values allowed; all of them at once, so a caller fixes its call
in one go. Pure: no I/O.

>>> from sleuth.workflows.tool_models import ParameterSpec
>>> params = {"tone": ParameterSpec(enum=["angry", "calm"], default="calm"),
...           "days": ParameterSpec(type="integer", default=7, minimum=1, maximum=30)}
>>> check_arguments(params, {"days": 3})
{'tone': 'calm', 'days': 3}
>>> check_arguments(params, {"tone": "sad"})
Traceback (most recent call last):
...
sleuth.errors.InvalidRequest: tone: 'sad' is not allowed; allowed: angry, calm
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from sleuth.contract import ErrorInfo
from sleuth.errors import InvalidRequest
from sleuth.workflows.tool_models import ParameterSpec, matches_type

__all__ = ["check_arguments", "from_command_line"]


def _problem(name: str, message: str, allowed: list[str] | None = None) -> ErrorInfo:
    text = f"{name}: {message}"
    if allowed:
        text += f"; allowed: {', '.join(allowed)}"
    return ErrorInfo(
        code="invalid_request",
        category="non_recoverable",
        message=text,
        field=name,
        allowed=allowed,
    )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _allowed_words(spec: ParameterSpec) -> list[str] | None:
    if spec.enum is not None:
        return [str(value) for value in spec.enum]
    if spec.type == "boolean":
        return ["true", "false"]
    if spec.type in ("integer", "number") and (
        spec.minimum is not None or spec.maximum is not None
    ):
        low = "" if spec.minimum is None else f"{spec.minimum:g}"
        high = "" if spec.maximum is None else f"{spec.maximum:g}"
        return [f"{spec.type} {low}..{high}"]
    if spec.type == "string":
        return [f"1..{spec.max_length} characters"]
    return [spec.type]


def _check_one(name: str, spec: ParameterSpec, value: Any) -> ErrorInfo | None:
    if not matches_type(value, spec.type) or (
        isinstance(value, float) and not math.isfinite(value)
    ):
        return _problem(name, f"expected {spec.type} (got {_shown(value)})", _allowed_words(spec))
    if spec.enum is not None and value not in spec.enum:
        return _problem(name, f"{_shown(value)} is not allowed", _allowed_words(spec))
    if isinstance(value, str) and not 1 <= len(value.strip()) <= spec.max_length:
        return _problem(
            name,
            f"{len(value.strip())} characters, expected 1..{spec.max_length}",
            _allowed_words(spec),
        )
    if not isinstance(value, bool) and isinstance(value, int | float):
        below = spec.minimum is not None and value < spec.minimum
        above = spec.maximum is not None and value > spec.maximum
        if below or above:
            return _problem(name, f"{value!r} is out of range", _allowed_words(spec))
    return None


def check_arguments(
    parameters: Mapping[str, ParameterSpec], arguments: Mapping[str, Any]
) -> dict[str, Any]:
    """Every parameter's value (the caller's, else its default), or `InvalidRequest`
    naming each unknown, missing or wrong argument. `null` means "the default", as
    strict-mode tool callers send it. A parameter neither passed, required nor
    defaulted is left out (its placeholder fills with nothing)."""
    known = list(parameters) or ["(no parameters)"]
    problems = [
        _problem(name, "unknown parameter", known) for name in arguments if name not in parameters
    ]
    values: dict[str, Any] = {}
    for name, spec in parameters.items():
        value = arguments.get(name)
        if value is None:
            if spec.required:
                problems.append(_problem(name, "required", _allowed_words(spec)))
            elif spec.default is not None:
                values[name] = spec.default
            continue
        if spec.type == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)  # 5.0 is an integer to JSON Schema, as /v1/search reads it
        problem = _check_one(name, spec, value)
        if problem is not None:
            problems.append(problem)
        else:
            values[name] = value.strip() if isinstance(value, str) else value
    if problems:
        raise InvalidRequest.from_details(problems)
    return values


_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def from_command_line(parameters: Mapping[str, ParameterSpec], pairs: list[str]) -> dict[str, Any]:
    """`--param k=v` texts as typed arguments (an integer parameter's "5" is 5), for
    `check_arguments`; a text that does not read as its type is passed on as text, so
    the complaint is the same as over HTTP. A pair without `=` is an `InvalidRequest`."""
    arguments: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InvalidRequest(
                f"--param: expected NAME=VALUE (got {pair!r})",
                field="param",
                allowed=list(parameters),
            )
        spec = parameters.get(name)
        arguments[name] = text if spec is None else _typed(text, spec)
    return arguments


def _typed(text: str, spec: ParameterSpec) -> Any:
    try:
        if spec.type == "integer":
            return int(text)
        if spec.type == "number":
            return float(text)
    except ValueError:
        return text
    if spec.type == "boolean":
        low = text.strip().lower()
        return True if low in _TRUE else False if low in _FALSE else text
    return text
