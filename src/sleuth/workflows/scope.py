"""The values a workflow's templates read, and rendering a step's templated values.

A scope is nested mappings: `inputs`, `run`, each finished step's output by its id,
and in a for_each `item`. `{{a.b.c}}` walks them; an index walks a list
(`{{changed.items.0.title}}`). A name not there renders as nothing (null when the
value is exactly that placeholder): a document without a reviser gives an empty
field, never an error or a guess. Pure.

>>> scope = Scope({"item": {"title": "Leave policy", "tags": ["policy"]}})
>>> scope.render({"title": "{{item.title}}", "tags": "{{item.tags}}", "x": "{{item.no}}"})
{'title': 'Leave policy', 'tags': ['policy'], 'x': None}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sleuth.workflows.template import fill, whole_placeholder

__all__ = ["Scope"]


class Scope:
    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = dict(values)

    def with_values(self, **more: Any) -> Scope:
        return Scope({**self.values, **more})

    def look_up(self, dotted: str) -> Any:
        node: Any = self.values
        for part in dotted.split("."):
            if isinstance(node, Mapping):
                node = node.get(part)
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
            if node is None:
                return None
        return node

    def text(self, template: str) -> str:
        """`template` filled as text."""
        return fill(template, self.look_up)

    def render(self, value: Any) -> Any:
        """Strings filled (one whole placeholder: the value itself), mappings and lists
        rendered item by item, anything else as it is."""
        if isinstance(value, str):
            whole = whole_placeholder(value)
            return self.look_up(whole) if whole is not None else self.text(value)
        if isinstance(value, Mapping):
            return {key: self.render(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.render(item) for item in value]
        return value
