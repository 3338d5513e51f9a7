"""Projection: each result down to the fields the agent needs, and nothing invented.

The always tier is sent for every item; optional-tier fields join when the request
names them in `include` (or the gateway adds them for the query's intent);
everything else is dropped. A missing or empty field falls back in a fixed order
and the item says so with `degraded` and `missing`: `snippet` → the provider's
other snippet-like fields (the mapping's later aliases) → `title` → `""`;
`published_at` → the provider's other date fields → `null`; `url` → `null`. No
value is ever invented. Projection only projects; it judges nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sleuth.contract import IncludeField, ProjectedItem, ResultItem
from sleuth.errors import InvalidRequest


class ProjectionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    always: list[str] = Field(
        default_factory=lambda: ["title", "snippet"],
        description="Fields every result carries.",
    )
    optional: list[IncludeField] = Field(
        default_factory=lambda: list[IncludeField](["url", "published_at", "content"]),
        description="Fields a request may add with `include`.",
    )
    max_items: int = Field(
        20, ge=1, le=20, description="Upper bound on results, whatever is asked."
    )
    by_intent: bool = Field(
        True,
        description="Add published_at to time-sensitive queries (最新, latest) and url to "
        "queries that ask for sources (来源, cite), when the optional tier has them.",
    )

    @model_validator(mode="after")
    def _always_is_text(self) -> ProjectionSettings:
        unknown = set(self.always) - set(ResultItem.model_fields)
        if unknown:
            raise ValueError(f"projection.always names unknown fields: {sorted(unknown)}")
        return self


def check_include(include: Sequence[str], settings: ProjectionSettings) -> None:
    """Reject an `include` field this deployment does not serve, naming the ones it does."""
    served: list[str] = list(settings.optional)
    refused = [name for name in include if name not in served and name not in settings.always]
    if refused:
        raise InvalidRequest(
            f"include: {', '.join(refused)} not available here; allowed: {', '.join(served)}",
            field="include",
            allowed=served,
        )


def served_include(error: InvalidRequest, served: Sequence[str]) -> InvalidRequest:
    """`error` with an `include` complaint listing the fields this deployment serves
    (`projection.optional`), not every field the contract knows."""
    if not any(detail.field == "include" for detail in error.details):
        return error
    allowed = list(served)
    details = [
        detail.model_copy(
            update={
                "allowed": allowed,
                "message": detail.message.split("; allowed: ")[0]
                + f"; allowed: {', '.join(allowed) or 'none here'}",
            }
        )
        if detail.field == "include"
        else detail
        for detail in error.details
    ]
    return InvalidRequest.from_details(details)


def _project_one(item: ResultItem, fields: Sequence[str]) -> ProjectedItem:
    values: dict[str, Any] = {}
    # Fields whose primary source was already missing upstream (a later alias answered).
    missing: list[str] = [name for name in item.missing if name in fields]
    for name in fields:
        if name in missing:
            values[name] = getattr(item, name)
            continue
        value = getattr(item, name)
        if name == "snippet" and not value:
            value = item.title  # a title says more than nothing; the item is marked degraded
            missing.append(name)
        elif (name == "title" and not value) or (
            name in ("url", "published_at", "content") and value is None
        ):
            missing.append(name)
        values[name] = value
    if missing:
        values["degraded"] = True
        values["missing"] = missing
    return ProjectedItem(**values)


def project(
    items: Sequence[ResultItem],
    include: Sequence[str],
    limit: int,
    settings: ProjectionSettings,
) -> list[ProjectedItem]:
    fields = list(dict.fromkeys([*settings.always, *include]))
    count = min(limit, settings.max_items)
    return [_project_one(item, fields) for item in items[:count]]
