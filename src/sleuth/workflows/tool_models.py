"""What a declared tool is, as sleuth.yaml's `tools:` and `tools/*.yaml` write it.

    ToolDefinition   name, description, typed parameters, and either
    ├── search       one search template: a query template with {{param}} and the
    │                request's other fields fixed (time_range, domain_filter,
    │                providers, include, max_results, ...), plus a projection
    └── parts        a composite: several parts run at once, each a declared tool
                     (with templated arguments) or a search template of its own

Only the query (and a part's arguments, which end in its tool's query) holds
placeholders: every other field of a search is fixed by the definition, so a
parameter's value can never become a time range, a provider or a domain. Every
check a definition can fail names the place (`tools[internal_search].search.
time_range`) and the values allowed there. Pure: no I/O.

>>> tool = ToolDefinition.model_validate({"name": "kb_about", "description": "d",
...     "parameters": {"topic": {"type": "string", "required": True}},
...     "search": {"query": "about {{topic}}", "providers": ["local"]}})
>>> tool.search.fixed()
{'providers': ['local']}
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sleuth.contract import ProjectedItem, SearchRequest, describe_validation_error
from sleuth.workflows.template import placeholders, whole_placeholder

__all__ = [
    "PARAMETER_TYPES",
    "TOOL_NAME_PATTERN",
    "ParameterSpec",
    "ParameterType",
    "PartSpec",
    "SearchTemplate",
    "ToolDefinition",
]

ParameterType = Literal["string", "integer", "number", "boolean"]
PARAMETER_TYPES: tuple[ParameterType, ...] = ("string", "integer", "number", "boolean")

#: What OpenAI, Anthropic and MCP all accept as a tool's name.
TOOL_NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"
_PARAMETER_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
#: The longest text one string parameter may put into a query (a query holds 400).
STRING_MAX_CHARS = 200

_PYTHON_TYPES: dict[ParameterType, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def matches_type(value: Any, kind: ParameterType) -> bool:
    """Whether a decoded JSON value is of the parameter type (a boolean is no number)."""
    if isinstance(value, bool):
        return kind == "boolean"
    return isinstance(value, _PYTHON_TYPES[kind])


class ParameterSpec(BaseModel):
    """One typed parameter of a tool."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: ParameterType = Field("string", description="string, integer, number or boolean.")
    description: str = Field("", description="What the model should pass.")
    required: bool = Field(False, description="The caller must pass it (no default).")
    default: str | int | float | bool | None = Field(
        None, description="The value when the caller passes none."
    )
    enum: list[str | int | float | bool] | None = Field(
        None, min_length=1, description="The only values accepted."
    )
    minimum: float | None = Field(None, description="For integer and number parameters.")
    maximum: float | None = None
    max_length: int = Field(
        STRING_MAX_CHARS, ge=1, le=400, description="For string parameters: most characters."
    )

    @model_validator(mode="after")
    def _consistent(self) -> ParameterSpec:
        if self.required and self.default is not None:
            raise ValueError("a required parameter has no default")
        for value in self.enum or []:
            if not matches_type(value, self.type):
                raise ValueError(f"enum value {value!r} is not of type {self.type}")
        if self.default is not None:
            if not matches_type(self.default, self.type):
                raise ValueError(f"default {self.default!r} is not of type {self.type}")
            if self.enum is not None and self.default not in self.enum:
                raise ValueError(f"default {self.default!r} is not one of the enum values")
        if (self.minimum is not None or self.maximum is not None) and self.type not in (
            "integer",
            "number",
        ):
            raise ValueError("minimum and maximum apply to integer and number parameters only")
        return self


class SearchTemplate(BaseModel):
    """A search with a templated query: `query` may hold `{{param}}`; every other key
    is a `SearchRequest` field with a fixed value; `projection` lists the result
    fields the tool returns (default: those the search returns)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    query: str = Field(min_length=1, description="The query, with {{param}} placeholders.")
    projection: list[str] | None = Field(
        None, min_length=1, description="Result fields to return, e.g. [title, snippet, url]."
    )

    def fixed(self) -> dict[str, Any]:
        """The request's fields other than the query, as the definition fixes them."""
        return dict(self.model_extra or {})

    @model_validator(mode="after")
    def _valid_request(self) -> SearchTemplate:
        fixed = self.fixed()
        if "context" in fixed:
            raise ValueError("context: earlier turns are a conversation's, not a template's")
        try:
            # A stand-in query: the real one is checked once filled.
            SearchRequest.model_validate({**fixed, "query": "probe"})
        except ValidationError as exc:
            raise ValueError(
                "; ".join(info.message for info in describe_validation_error(exc))
            ) from None
        if self.projection is not None:
            unknown = [name for name in self.projection if name not in ProjectedItem.model_fields]
            if unknown:
                raise ValueError(
                    f"projection: unknown result fields {', '.join(unknown)}; "
                    f"allowed: {', '.join(ProjectedItem.model_fields)}"
                )
        return self


class PartSpec(BaseModel):
    """One part of a composite tool: a declared tool with its arguments (each a value,
    or text with `{{param}}`), or a search template of its own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_PARAMETER_NAME_PATTERN, description="How the result names it.")
    tool: str | None = Field(None, description="A declared (non-composite) tool's name.")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="The tool's arguments; text may hold {{param}}."
    )
    search: SearchTemplate | None = Field(None, description="A provider query instead of a tool.")
    weight: float = Field(1.0, gt=0, description="Its share of the overall confidence.")

    @model_validator(mode="after")
    def _one_kind(self) -> PartSpec:
        if (self.tool is None) == (self.search is None):
            raise ValueError(f"part {self.name!r}: give either tool or search, not both or none")
        if self.search is not None and self.arguments:
            raise ValueError(f"part {self.name!r}: arguments go with a tool, not a search")
        return self

    def names_used(self) -> list[str]:
        used: list[str] = []
        if self.search is not None:
            used += placeholders(self.search.query)
        for value in self.arguments.values():
            if isinstance(value, str):
                whole = whole_placeholder(value)
                used += [whole] if whole else placeholders(value)
        return used


class ToolDefinition(BaseModel):
    """One declared tool (an entry of `tools:`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=TOOL_NAME_PATTERN, description="The tool's name for the model.")
    title: str | None = Field(None, description="A short human title (MCP).")
    description: str = Field(min_length=1, description="What the tool does, for the model.")
    parameters: dict[str, ParameterSpec] = Field(
        default_factory=dict, description="Typed parameters, by name."
    )
    search: SearchTemplate | None = Field(None, description="A single templated search.")
    parts: list[PartSpec] | None = Field(
        None, min_length=1, description="A composite: parts run concurrently."
    )

    @property
    def composite(self) -> bool:
        return self.parts is not None

    @model_validator(mode="after")
    def _well_formed(self) -> ToolDefinition:
        for name in self.parameters:
            if not re.fullmatch(_PARAMETER_NAME_PATTERN, name):
                raise ValueError(f"parameter name {name!r} must be an identifier")
        if (self.search is None) == (self.parts is None):
            raise ValueError("give either search (one templated search) or parts (a composite)")
        used = placeholders(self.search.query) if self.search is not None else []
        for part in self.parts or []:
            used += part.names_used()
        unknown = sorted(set(used) - set(self.parameters))
        if unknown:
            raise ValueError(
                f"the template uses {', '.join(unknown)}, which are not parameters; "
                f"parameters: {', '.join(self.parameters) or '(none)'}"
            )
        names = [part.name for part in self.parts or []]
        if len(set(names)) != len(names):
            raise ValueError(f"part names repeat: {', '.join(names)}")
        return self
