"""Which fields to keep: profile raw provider bodies, and measure what projection saves.

Pure functions over bodies already fetched; `sleuth fields profile` and
`sleuth fields compare` (in `sleuth.api.cli_fields`) do the I/O.

- `profile(bodies, mapping)` walks every field path of each body, at the top level
  and inside the result list, with sample values, and splits the paths into
  *stable* (present with a value in every run and every result: the
  intersection) and *occasional* ones.
- `suggest_projection(profile, mapping)` turns that into a `projection:` block:
  unified fields whose source is stable are candidates for the always tier,
  the rest only on demand.
- `measure(...)` compares the characters (and approximate tokens) of raw bodies
  with the projected results an agent receives, and counts how many items still
  carry their answer-bearing fields.

>>> from sleuth.providers.mapping import FieldMapping
>>> m = FieldMapping(results="items", fields={"title": ["t"], "snippet": ["s"]})
>>> p = profile([{"items": [{"t": "A", "s": "x"}, {"t": "B"}]}], m)
>>> p.stable, p.occasional
(['t'], ['s'])
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sleuth.providers.mapping import FieldMapping, records

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


def approx_tokens(text: str) -> int:
    """A model-free token estimate: one per CJK character, one per four other characters."""
    cjk = len(_CJK.findall(text))
    return cjk + (len(text) - cjk + 3) // 4


def walk(value: Any, prefix: str = "", skip: str | None = None) -> Iterable[tuple[str, Any]]:
    """Every leaf path of a JSON value; list items share the path `name[]`.

    The subtree at path `skip` (the result list, profiled per result) is left out.
    """
    if prefix and prefix == skip:
        return
    if isinstance(value, Mapping):
        if not value and prefix:
            yield prefix, value
        for key, child in value.items():
            yield from walk(child, f"{prefix}.{key}" if prefix else str(key), skip)
    elif isinstance(value, list):
        if not value and prefix:
            yield prefix, value
        for child in value:
            yield from walk(child, f"{prefix}[]", skip)
    else:
        yield prefix, value


def _filled(value: Any) -> bool:
    """Present means present with a value: null, "" and empty containers do not count."""
    return value is not None and value != "" and value != [] and value != {}


@dataclass
class FieldStat:
    path: str
    present_in: int = 0
    samples: list[str] = field(default_factory=list)

    def note(self, value: Any) -> None:
        self.present_in += 1
        shown = json.dumps(value, ensure_ascii=False)[:60]
        if len(self.samples) < 2 and shown not in self.samples:
            self.samples.append(shown)


@dataclass
class Profile:
    runs: int
    results: int
    top_level: dict[str, FieldStat]
    result_fields: dict[str, FieldStat]
    stable: list[str]
    occasional: list[str]


def profile(bodies: Sequence[Any], mapping: FieldMapping) -> Profile:
    """Field paths of `bodies` (one per run); stable = in every run and every result."""
    top: dict[str, FieldStat] = {}
    inner: dict[str, FieldStat] = {}
    results_total = 0
    runs_with_results = 0
    for body in bodies:
        first_values: dict[str, Any] = {}
        if mapping.results:  # with results "", the body is the list itself
            for path, value in walk(body, skip=mapping.results):
                if _filled(value):
                    first_values.setdefault(path, value)
        for path, value in first_values.items():
            top.setdefault(path, FieldStat(path)).note(value)
        found = [r for r in records(mapping, body) or [] if isinstance(r, Mapping)]
        results_total += len(found)
        runs_with_results += bool(found)
        for record in found:
            leaves: dict[str, Any] = {}
            for path, value in walk(record):
                if _filled(value):
                    leaves.setdefault(path, value)
            for path, value in leaves.items():
                inner.setdefault(path, FieldStat(path)).note(value)
    stable = sorted(
        p for p, stat in inner.items() if results_total and stat.present_in == results_total
    )
    occasional = sorted(p for p in inner if p not in stable)
    return Profile(len(bodies), results_total, top, inner, stable, occasional)


def _source_path(alias: str) -> str:
    """A mapping alias as a profile path: `extra_snippets[0]` → `extra_snippets[]`."""
    return re.sub(r"\[\d+\]", "[]", alias)


def suggest_projection(found: Profile, mapping: FieldMapping, provider: str) -> str:
    """A commented `projection:` block to paste into sleuth.yaml.

    Title and snippet stay in the always tier (they carry the answer; projection
    falls back when they are missing); another unified field joins them only when
    its source is stable. Everything else is on demand.
    """
    stable = {
        name for name, aliases in mapping.fields.items() if _source_path(aliases[0]) in found.stable
    }
    always = ["title", "snippet", *sorted(stable - {"title", "snippet"})]
    optional = [name for name in ("url", "published_at") if name not in always]
    notes = [
        f"#   {name} comes from {mapping.fields[name][0]!r}, which is not stable: expect fallbacks"
        for name in ("title", "snippet")
        if name in mapping.fields and name not in stable
    ]
    lines = [
        f"# suggested for {provider} from {found.runs} run(s), {found.results} result(s)",
        "projection:",
        f"  always: [{', '.join(always)}]",
        f"  optional: [{', '.join(optional)}]",
        *notes,
        "# stable provider fields (whitelist candidates, e.g. mapping extras):",
        *(f"#   {path}" for path in found.stable),
        "# occasional fields (on demand only, never in the always tier):",
        *(f"#   {path}" for path in found.occasional),
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Comparison:
    """Raw bodies versus projected results for one query."""

    query: str
    providers: tuple[str, ...]
    raw_chars: int
    raw_tokens: int
    raw_items: int
    projected_chars: int
    projected_tokens: int
    projected_items: int
    answering_items: int
    kept_items: int

    @property
    def reduction(self) -> float:
        return 1 - self.projected_chars / self.raw_chars if self.raw_chars else 0.0

    @property
    def coverage(self) -> float:
        """Share of items whose answer fields projection kept (or flagged as never sent)."""
        return self.kept_items / self.projected_items if self.projected_items else 1.0

    @property
    def answering(self) -> float:
        """Share of items that carry every answer field with a value."""
        return self.answering_items / self.projected_items if self.projected_items else 1.0


def answer_fields(citing: bool) -> tuple[str, ...]:
    return ("title", "snippet", "url") if citing else ("title", "snippet")


def answer_bearing(item: Mapping[str, Any], citing: bool) -> bool:
    """Title and snippet present and not empty; and a url when the agent must cite."""
    return all(item.get(name) for name in answer_fields(citing))


def kept_by_projection(item: Mapping[str, Any], citing: bool) -> bool:
    """Projection lost nothing: each answer field is there, or flagged as never sent.

    A field the back end did not send cannot be kept; the item says so in `missing`
    and is counted here, so this measures projection, not the back end's data.
    """
    missing = item.get("missing") or []
    return all(item.get(name) or name in missing for name in answer_fields(citing))


def measure(
    query: str,
    raw: Mapping[str, Any],
    mappings: Mapping[str, FieldMapping],
    projected: Sequence[Mapping[str, Any]],
    citing: bool,
) -> Comparison:
    """`raw` maps provider → body as received; `projected` is what the agent got."""
    raw_text = "".join(json.dumps(body, ensure_ascii=False) for body in raw.values())
    raw_items = sum(len(records(mappings[name], body) or []) for name, body in raw.items())
    projected_text = json.dumps(list(projected), ensure_ascii=False)
    return Comparison(
        query=query,
        providers=tuple(raw),
        raw_chars=len(raw_text),
        raw_tokens=approx_tokens(raw_text),
        raw_items=raw_items,
        projected_chars=len(projected_text),
        projected_tokens=approx_tokens(projected_text),
        projected_items=len(projected),
        answering_items=sum(answer_bearing(item, citing) for item in projected),
        kept_items=sum(kept_by_projection(item, citing) for item in projected),
    )
