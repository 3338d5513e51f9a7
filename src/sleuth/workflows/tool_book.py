"""The declared tools in force: sleuth.yaml's `tools:` and the files in `tools_dir`.

A file in `tools_dir` (`*.yaml` or `*.yml`) holds one tool (a mapping with `name`),
or several (`tools:` and a list, or a bare list). The folder is looked at again on
each `current()` (one `stat` per file): a file added, changed or removed reloads the
set; an edit that breaks it keeps the last good set and logs the reason once, as the
error rules do (`resilience/rules.py`); a set broken from the start is a
`ConfigError`. A set is good when every tool is well formed, no two share a name, no
tool takes a built-in tool's name, and each composite part names a declared,
non-composite tool.

>>> book = ToolBook([ToolDefinition.model_validate({"name": "kb", "description": "d",
...     "search": {"query": "sleuth"}})])
>>> sorted(book.current())
['kb']
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sleuth.contract import SearchRequest
from sleuth.errors import ConfigError, SearchError
from sleuth.workflows.tool_models import SearchTemplate, ToolDefinition
from sleuth.workflows.tool_request import request_for
from sleuth.yaml_file import read_yaml

__all__ = ["RESERVED_NAMES", "ToolBook", "load_tool_file", "tools_from_data"]

log = logging.getLogger(__name__)

#: The built-in tools' names (`sleuth.tools.TOOLS`), which a declared tool cannot take.
RESERVED_NAMES = frozenset(
    {"web_search", "search_task_submit", "search_task_status", "extract_page"}
)

_Stamp = tuple[tuple[str, int, int], ...]


def _where(loc: Sequence[int | str], entries: list[Any]) -> str:
    """A pydantic location as the file says it: `tools[internal_search].search.query`."""
    if not loc:
        return "tools"
    index = loc[0]
    head = f"tools[{index}]"
    if isinstance(index, int) and index < len(entries) and isinstance(entries[index], dict):
        name = entries[index].get("name")
        if isinstance(name, str):
            head = f"tools[{name}]"
    return ".".join([head, *(str(part) for part in loc[1:])])


def tools_from_data(data: Any, where: str) -> list[ToolDefinition]:
    """The tools a document holds; `ConfigError` naming `where` and each bad place."""
    if isinstance(data, dict) and "name" in data:
        entries: Any = [data]
    elif isinstance(data, dict) and set(data) == {"tools"}:
        entries = data["tools"]
    else:
        entries = data
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ConfigError(
            f"{where}: expected one tool (a mapping with name), or a list of them under tools"
        )
    tools = []
    problems = []
    for index, entry in enumerate(entries):
        try:
            tools.append(ToolDefinition.model_validate(entry))
        except ValidationError as exc:
            for error in exc.errors(include_url=False):
                place = _where((index, *error["loc"]), entries)
                problems.append(f"{place}: {error['msg'].removeprefix('Value error, ')}")
    if problems:
        raise ConfigError(f"{where} is invalid: {'; '.join(problems)}")
    return tools


def load_tool_file(path: Path) -> list[ToolDefinition]:
    return tools_from_data(read_yaml(path, "tools file"), f"tools file {path}")


def _checked(tools: Iterable[ToolDefinition]) -> dict[str, ToolDefinition]:
    """The tools by name, once the set as a whole holds together."""
    by_name: dict[str, ToolDefinition] = {}
    for tool in tools:
        if tool.name in RESERVED_NAMES:
            raise ConfigError(
                f"tools[{tool.name}]: the name is a built-in tool's; "
                f"taken: {', '.join(sorted(RESERVED_NAMES))}"
            )
        if tool.name in by_name:
            raise ConfigError(f"tools[{tool.name}]: declared twice")
        by_name[tool.name] = tool
    for tool in by_name.values():
        for part in tool.parts or []:
            target = by_name.get(part.tool) if part.tool else None
            if part.tool is not None and target is None:
                simple = sorted(name for name, found in by_name.items() if not found.composite)
                raise ConfigError(
                    f"tools[{tool.name}].parts[{part.name}].tool: no tool {part.tool!r}; "
                    f"allowed: {', '.join(simple) or '(none declared)'}"
                )
            if target is not None and target.composite:
                raise ConfigError(
                    f"tools[{tool.name}].parts[{part.name}].tool: {part.tool!r} is itself "
                    "composite; a part is a simple tool or a search"
                )
    return by_name


def _served(tools: dict[str, ToolDefinition], validate: Callable[[SearchRequest], object]) -> None:
    """Each search of the set through `validate`, its parameters filled with a stand-in."""
    for tool in tools.values():
        templates: list[tuple[str, SearchTemplate | None]] = [("search", tool.search)]
        templates += [(f"parts[{part.name}].search", part.search) for part in tool.parts or []]
        for where, template in templates:
            if template is None:
                continue
            try:
                validate(request_for(template, lambda name: "probe"))
            except SearchError as exc:
                raise ConfigError(f"tools[{tool.name}].{where}: {exc.message}") from None


class ToolBook:
    """The declared tools, re-read when a file in `folder` changes."""

    def __init__(
        self,
        defined: Sequence[ToolDefinition] = (),
        folder: Path | None = None,
        *,
        validate: Callable[[SearchRequest], object] | None = None,
    ) -> None:
        self.defined = list(defined)
        self.folder = folder
        self.validate = validate
        if folder is not None and not folder.is_dir():
            raise ConfigError(f"tools_dir: {folder} is not a folder")
        self._stamp_seen = self._stamp()
        self._tools = self._load()

    def current(self) -> dict[str, ToolDefinition]:
        """The tools in force, by name (re-read first when the folder changed)."""
        stamp = self._stamp()
        if stamp == self._stamp_seen:
            return self._tools
        self._stamp_seen = stamp  # a broken edit is reported once, not on every call
        try:
            tools = self._load()
        except ConfigError as exc:
            log.warning("keeping the last good %d tools: %s", len(self._tools), exc.message)
            return self._tools
        log.info("reloaded %d declared tools from %s", len(tools), self.folder)
        self._tools = tools
        return tools

    def get(self, name: str) -> ToolDefinition | None:
        return self.current().get(name)

    def _files(self) -> list[Path]:
        if self.folder is None:
            return []
        try:
            found = [*self.folder.glob("*.yaml"), *self.folder.glob("*.yml")]
        except OSError:
            return []
        return sorted(path for path in found if path.is_file())

    def _load(self) -> dict[str, ToolDefinition]:
        tools = list(self.defined)
        for path in self._files():
            tools += load_tool_file(path)
        checked = _checked(tools)
        if self.validate is not None:
            _served(checked, self.validate)
        return checked

    def _stamp(self) -> _Stamp:
        stamps = []
        for path in self._files():
            try:
                stat = path.stat()
            except OSError:  # removed between the listing and the stat
                continue
            stamps.append((path.name, stat.st_mtime_ns, stat.st_size))
        return tuple(stamps)
