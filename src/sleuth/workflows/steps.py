"""The workflow steps that only compute: extract fields by pattern, summarise a text,
filter items. Pure: no I/O, no clock.

>>> text = "# 请假制度\\n\\n生效日期：2026-03-01。适用部门：人力资源部。修订人：王芳。"
>>> fields = {"effective_date": FieldPattern(pattern=r"生效日期[:：]\\s*([0-9-]+)")}
>>> extract_fields(text, fields)
{'effective_date': '2026-03-01'}
>>> summarise(text, 300)["text"]
'生效日期：2026-03-01。适用部门：人力资源部。修订人：王芳。'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sleuth.kb.extract import split_front_matter
from sleuth.text import split_sentences
from sleuth.workflows.workflow_models import Condition, FieldPattern

__all__ = ["extract_fields", "keep", "summarise"]

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s.*$", re.MULTILINE)


def extract_fields(text: str, fields: Mapping[str, FieldPattern]) -> dict[str, str | None]:
    """Each field's first match in `text` (its group, trimmed); None when not found:
    a missing field is said to be missing, never guessed."""
    found: dict[str, str | None] = {}
    for name, spec in fields.items():
        match = spec.compiled().search(text)
        value = match.group(spec.chosen_group()) if match else None
        found[name] = value.strip() if isinstance(value, str) and value.strip() else None
    return found


def summarise(text: str, max_chars: int) -> dict[str, Any]:
    """The text's leading sentences (headings and front matter left out) up to
    `max_chars`; a first sentence longer than that is cut at a character boundary
    and marked with an ellipsis. Policy and procedure pages state their point first,
    which is what a lead summary keeps."""
    # Front matter as the knowledge base reads it (a `...` end too).
    body = _HEADING.sub("", split_front_matter(text)[1])
    sentences = [" ".join(sentence.split()) for sentence in split_sentences(body)]
    sentences = [sentence for sentence in sentences if sentence]
    chosen: list[str] = []
    length = 0
    for sentence in sentences:
        joiner = 0 if not chosen or _cjk_end(chosen[-1]) else 1
        if length + joiner + len(sentence) > max_chars:
            break
        chosen.append(sentence)
        length += joiner + len(sentence)
    if not chosen and sentences:
        return {"text": sentences[0][: max_chars - 1] + "…", "sentences": 1, "cut": True}
    summary = ""
    for sentence in chosen:
        summary += sentence if not summary or _cjk_end(summary) else " " + sentence
    return {"text": summary, "sentences": len(chosen), "cut": False}


def _cjk_end(text: str) -> bool:
    return bool(text) and text[-1] in "。！？；"


def _meets(item: Mapping[str, Any], condition: Condition) -> bool:
    value = item.get(condition.field)
    if condition.equals is not None:
        return bool(value == condition.equals)
    if condition.one_of is not None:
        if isinstance(value, list):
            return any(part in condition.one_of for part in value)
        return value in condition.one_of
    if condition.contains is not None:
        if isinstance(value, list):
            return condition.contains in value
        return isinstance(value, str) and condition.contains in value
    if condition.matches is not None:
        return isinstance(value, str) and re.search(condition.matches, value) is not None
    return False


def keep(items: Sequence[Any], where: Sequence[Condition]) -> list[Any]:
    """The items (mappings) that meet every condition, in order."""
    return [
        item
        for item in items
        if isinstance(item, Mapping) and all(_meets(item, condition) for condition in where)
    ]
