"""From a search template and checked arguments to a `SearchRequest`, and from the
response to the fields the template's projection keeps.

The query is the template with each placeholder filled by its parameter's text; the
other fields are the template's own, never a parameter's. A projection field that is
not in the always tier is asked for with `include`, so the search returns it. Pure.

>>> template = SearchTemplate(query="最近一周关于 {{product}} 的客户投诉",
...                           time_range="past_week", projection=["title", "url"])
>>> request = request_for(template, {"product": "X1\\ntime_range: any"})
>>> request.query, request.time_range, request.include
('最近一周关于 X1 time_range: any 的客户投诉', 'past_week', ['url'])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, get_args

from pydantic import ValidationError

from sleuth.contract import (
    IncludeField,
    ProjectedItem,
    SearchRequest,
    SearchResponse,
    describe_validation_error,
)
from sleuth.errors import InvalidRequest
from sleuth.workflows.template import fill, placeholders
from sleuth.workflows.tool_models import SearchTemplate

__all__ = ["project_fields", "request_for"]

_INCLUDABLE = frozenset(get_args(IncludeField))


def request_for(
    template: SearchTemplate, values: Mapping[str, Any] | Callable[[str], Any]
) -> SearchRequest:
    """The search the template describes with `values` filled in (a mapping, or a
    function that looks a dotted name up, as a workflow's scope does). A filled query
    that is empty or too long is an `InvalidRequest` naming the parameters in it."""
    look_up = values if callable(values) else values.get
    query = " ".join(fill(template.query, look_up).split())
    data: dict[str, Any] = {**template.fixed(), "query": query}
    if template.projection is not None:
        wanted = [name for name in template.projection if name in _INCLUDABLE]
        data["include"] = list(dict.fromkeys([*data.get("include", []), *wanted]))
    try:
        return SearchRequest.model_validate(data)
    except ValidationError as exc:
        details = describe_validation_error(exc)
        used = placeholders(template.query)
        if used and any(detail.field == "query" for detail in details):
            names = ", ".join(used)
            raise InvalidRequest(
                f"{names}: the filled query is not a valid query ({details[0].message})",
                field=used[0],
                allowed=details[0].allowed,
            ) from None
        raise InvalidRequest.from_details(details) from None


def project_fields(response: SearchResponse, fields: Sequence[str] | None) -> SearchResponse:
    """`response` with each result cut to `fields` (None: as it is). A field the result
    does not carry stays absent, as projection leaves it."""
    if fields is None:
        return response
    kept = []
    for item in response.results:
        present = item.model_fields_set & set(fields)
        data = {name: getattr(item, name) for name in present}
        projected = ProjectedItem.model_validate(data)
        kept.append(projected)
    return response.model_copy(update={"results": kept})
