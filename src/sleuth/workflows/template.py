"""`{{name}}` templates: which names a template uses, and filling them with text.

One pass over the template, never over what was put in: a value that itself holds
`{{other}}` stays those characters, so a parameter cannot reach another placeholder,
and a value is only ever text at the place of its placeholder. Control characters
and line breaks in a value become single spaces (a query is one line).

Pure: no I/O.

>>> fill("最近一周关于 {{product_name}} 的客户投诉", {"product_name": "X1 {{secret}}"})
'最近一周关于 X1 {{secret}} 的客户投诉'
>>> placeholders("{{ a }} and {{b.c}}")
['a', 'b.c']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["PLACEHOLDER", "fill", "placeholders", "text_of", "whole_placeholder"]

#: `{{ name }}` or `{{ step.field }}`: a dotted path of identifiers, spaces allowed inside.
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


def placeholders(template: str) -> list[str]:
    """The names `template` uses, in order of first use."""
    return list(dict.fromkeys(match.group(1) for match in PLACEHOLDER.finditer(template)))


def whole_placeholder(template: str) -> str | None:
    """The name when `template` is exactly one placeholder (`"{{days}}"`), else None:
    such a value passes the value itself, with its type, not its text."""
    match = PLACEHOLDER.fullmatch(template.strip())
    return match.group(1) if match else None


def text_of(value: Any) -> str:
    """A value as one line of text: booleans as true/false, lists joined by spaces."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = ""
    elif isinstance(value, list | tuple):
        text = " ".join(text_of(item) for item in value)
    else:
        text = str(value)
    return " ".join(_CONTROL.sub(" ", text).split())


def fill(template: str, values: Mapping[str, Any] | Callable[[str], Any]) -> str:
    """`template` with each placeholder replaced by its value's text (`text_of`).

    `values` maps names to values, or is a function that looks a (dotted) name up. A
    name with no value raises `KeyError` naming it; callers check names at load time.
    """
    look_up = values if callable(values) else values.__getitem__

    def replace(match: re.Match[str]) -> str:
        return text_of(look_up(match.group(1)))

    return PLACEHOLDER.sub(replace, template)
