"""Runs declared tools: checks the arguments, fills the template, searches through
`Sleuth`, and for a composite runs every part at once and merges their answers.

Each search runs inside `observe.call_context(tool=NAME)`, so its call record (and the
usage counted from it) names the declared tool it ran for; a composite's parts carry
the composite's name. A part that fails, for any reason, is reported in the answer;
only the caller's own mistakes (an unknown tool, a bad argument) raise.

>>> import asyncio
>>> from sleuth.gateway import Sleuth
>>> from sleuth.testing import memory_settings
>>> settings = memory_settings().model_copy(update={"tools": [ToolDefinition.model_validate(
...     {"name": "kb_about", "description": "the knowledge base on a topic",
...      "parameters": {"topic": {"required": True}}, "search": {"query": "{{topic}}"}})]})
>>> answer = asyncio.run(ToolBox(Sleuth(settings)).call("kb_about", {"topic": "knowledge"}))
>>> answer.query
'knowledge'
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from sleuth.contract import SearchResponse
from sleuth.errors import SearchError, ToolNotFound
from sleuth.gateway import Sleuth
from sleuth.observe import call_context
from sleuth.workflows.arguments import check_arguments
from sleuth.workflows.composite import CompositeResponse, PartResult, merge_parts, part_outcome
from sleuth.workflows.template import fill, whole_placeholder
from sleuth.workflows.tool_forms import forms
from sleuth.workflows.tool_models import PartSpec, SearchTemplate, ToolDefinition
from sleuth.workflows.tool_request import project_fields, request_for

__all__ = ["ToolAnswer", "ToolBox", "part_arguments"]

log = logging.getLogger(__name__)

ToolAnswer = SearchResponse | CompositeResponse


def part_arguments(part: PartSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    """A part's arguments with the composite's values in: `"{{days}}"` alone passes the
    value itself (typed), text around placeholders is filled as text, anything else
    is passed as written. A value the composite did not get is left out.

    >>> spec = PartSpec(name="p", tool="t", arguments={"n": "{{days}}", "q": "{{c}} 诉讼"})
    >>> part_arguments(spec, {"days": 7, "c": "ACME"})
    {'n': 7, 'q': 'ACME 诉讼'}
    """
    arguments: dict[str, Any] = {}
    for key, value in part.arguments.items():
        if isinstance(value, str):
            whole = whole_placeholder(value)
            if whole is not None:
                if values.get(whole) is not None:
                    arguments[key] = values[whole]
                continue
            arguments[key] = fill(value, lambda name: values.get(name))
        else:
            arguments[key] = value
    return arguments


class ToolBox:
    """The declared tools of one `Sleuth` (its `tools` book), ready to call."""

    def __init__(self, sleuth: Sleuth) -> None:
        self.sleuth = sleuth

    def names(self) -> list[str]:
        return sorted(self.sleuth.tools.current())

    def get(self, name: str) -> ToolDefinition:
        tool = self.sleuth.tools.get(name)
        if tool is None:
            names = self.names()
            raise ToolNotFound(
                f"tool: no declared tool {name!r}; declared: {', '.join(names) or '(none)'}",
                field="tool",
                allowed=names,
            )
        return tool

    def definitions(self) -> list[dict[str, dict[str, Any]]]:
        """Every declared tool in every form (`tool_forms.forms`), by name."""
        return [forms(tool) for _, tool in sorted(self.sleuth.tools.current().items())]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolAnswer:
        """Run the tool with `arguments` (decoded JSON). Raises `ToolNotFound` and
        `InvalidRequest` (naming the parameter and its allowed values), and for a
        simple tool whatever `Sleuth.search` raises; never for a failed part."""
        tool = self.get(name)
        values = check_arguments(tool.parameters, arguments)
        if tool.search is not None:
            return await self._search(tool.name, tool.search, values)
        return await self._composite(tool, values)

    async def _search(
        self, name: str, template: SearchTemplate, values: Mapping[str, Any]
    ) -> SearchResponse:
        request = request_for(template, values)
        with call_context(tool=name):
            response = await self.sleuth.search(request)
        return project_fields(response, template.projection)

    async def _composite(
        self, tool: ToolDefinition, values: Mapping[str, Any]
    ) -> CompositeResponse:
        async def run(part: PartSpec) -> PartResult:
            try:
                template, given = part.search, values
                if part.tool is not None:
                    target = self.get(part.tool)
                    given = check_arguments(target.parameters, part_arguments(part, values))
                    template = target.search
                if template is None:  # the book refuses a composite part; said, not assumed
                    raise SearchError(f"part {part.name!r} has no search to run")
                response = await self._search(tool.name, template, given)
            except SearchError as exc:
                return part_outcome(part.name, part.weight, error=exc.info())
            except Exception as exc:  # a part's bug degrades the answer, never fails it
                log.exception("part %s of tool %s failed", part.name, tool.name)
                error = SearchError(f"internal error: {type(exc).__name__}").info()
                return part_outcome(part.name, part.weight, error=error)
            return part_outcome(part.name, part.weight, response=response)

        parts = await asyncio.gather(*(run(part) for part in tool.parts or []))
        return merge_parts(tool.name, parts)
