"""What a workflow is, as a `WORKFLOW.yaml` (or a file in `workflows_dir`) writes it.

    WorkflowDefinition   name, description, typed inputs, an optional cron schedule,
    └── steps            run in order; each has an id and exactly one kind:
        tool             a declared tool, with templated arguments
        search           a search template (its query filled from the values below)
        documents        knowledge-base documents by source, tag and modification time
        extract          fields from a text by declared regular expressions
        summarise        a short extractive summary of a text
        filter           a previous step's items that meet every condition
        for_each         sub-steps once per item of a previous step, each item
                         checkpointed (a resumed run starts at the item it reached)
        sink             one record written to a JSON Lines file, a SQLite table, a
                         knowledge-base folder or a webhook, idempotent by its key

Values pass between steps by template: `{{inputs.name}}`, `{{run.since}}`,
`{{run.until}}`, `{{run.slot}}`, `{{<step id>.<field>}}`, and inside a for_each
`{{item.<field>}}` and the sub-steps' `{{<id>.<field>}}`. A value that is exactly one
placeholder passes the value itself (a list stays a list); text around placeholders
is filled as text. As for tools, a search's fields other than its query are fixed by
the definition. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sleuth.workflows.template import placeholders
from sleuth.workflows.tool_models import TOOL_NAME_PATTERN, ParameterSpec, SearchTemplate

__all__ = [
    "STEP_KINDS",
    "Condition",
    "DocumentQuery",
    "ExtractSpec",
    "FieldPattern",
    "FilterSpec",
    "ForEachSpec",
    "SinkSpec",
    "StepSpec",
    "SummariseSpec",
    "WorkflowDefinition",
]

STEP_KINDS = (
    "tool",
    "search",
    "documents",
    "extract",
    "summarise",
    "filter",
    "for_each",
    "sink",
)
_ID = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
#: Names a step id cannot take: the scopes templates read.
_RESERVED_IDS = frozenset({"inputs", "run", "item"})

_FLAGS = {"ignorecase": re.IGNORECASE, "multiline": re.MULTILINE, "dotall": re.DOTALL}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DocumentQuery(_Strict):
    """Which knowledge-base documents to list (every condition given must hold)."""

    sources: list[str] = Field(
        default_factory=list, description="Named sources (kb.sources); default: all."
    )
    tags: list[str] = Field(default_factory=list, description="Documents with any of these tags.")
    modified_after: str | None = Field(
        None, description="ISO time (template): modified at or after it, e.g. {{run.since}}."
    )
    modified_before: str | None = Field(
        None, description="ISO time (template): modified before it, e.g. {{run.until}}."
    )
    text: bool = Field(True, description="Include each document's text (for summarise).")
    limit: int = Field(1000, ge=1, le=100_000, description="At most this many, oldest first.")


class FieldPattern(_Strict):
    """One field to extract: the first match of `pattern`, its `group`."""

    pattern: str
    group: int | str | None = Field(
        None,
        description="Group number or name; 0: the whole match. Default: the first group, "
        "or the whole match for a pattern without groups.",
    )
    flags: list[Literal["ignorecase", "multiline", "dotall"]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _compiles(self) -> FieldPattern:
        try:
            compiled = self.compiled()
        except re.error as exc:
            raise ValueError(
                f"pattern {self.pattern!r} is not a regular expression: {exc}"
            ) from None
        if isinstance(self.group, int) and self.group > compiled.groups:
            raise ValueError(f"pattern {self.pattern!r} has no group {self.group}")
        if isinstance(self.group, str) and self.group not in compiled.groupindex:
            raise ValueError(f"pattern {self.pattern!r} has no group named {self.group!r}")
        return self

    def chosen_group(self) -> int | str:
        if self.group is not None:
            return self.group
        return 1 if self.compiled().groups else 0

    def compiled(self) -> re.Pattern[str]:
        flags = 0
        for name in self.flags:
            flags |= _FLAGS[name]
        return re.compile(self.pattern, flags)


class ExtractSpec(_Strict):
    text: str = Field(description="The text to read (template), e.g. {{item.text}}.")
    fields: dict[str, FieldPattern] = Field(min_length=1)


class SummariseSpec(_Strict):
    text: str = Field(description="The text to summarise (template).")
    max_chars: int = Field(300, ge=20, le=5000, description="The summary's most characters.")


class Condition(_Strict):
    """One test of an item's field; give exactly one of the comparisons."""

    field: str
    equals: Any = None
    contains: str | None = Field(None, description="The text (or a list's item) holds it.")
    matches: str | None = Field(None, description="A regular expression found in the text.")
    one_of: list[Any] | None = None

    @model_validator(mode="after")
    def _one_test(self) -> Condition:
        given = [
            name
            for name in ("equals", "contains", "matches", "one_of")
            if getattr(self, name) is not None
        ]
        if len(given) != 1:
            raise ValueError(
                f"condition on {self.field!r}: give one of equals, contains, matches, one_of"
            )
        if self.matches is not None:
            try:
                re.compile(self.matches)
            except re.error as exc:
                raise ValueError(f"matches {self.matches!r}: {exc}") from None
        return self


class FilterSpec(_Strict):
    over: str = Field(description="The step whose items are filtered.")
    where: list[Condition] = Field(min_length=1)


class SinkSpec(_Strict):
    """Where one record goes; exactly one destination. `key` names the record fields
    that identify it: a record whose key was written before is not written again (a
    resumed run never writes a document twice)."""

    record: dict[str, Any] = Field(min_length=1, description="Field → template.")
    key: list[str] = Field(min_length=1, description="Record fields that identify it.")
    jsonl: str | None = Field(None, description="A JSON Lines file to append to (path).")
    sqlite: str | None = Field(None, description="A SQLite database file (path)...")
    table: str | None = Field(None, pattern=_ID, description="...and its table.")
    kb_folder: str | None = Field(
        None, description="A folder of the knowledge base: one Markdown file per record."
    )
    webhook: str | None = Field(None, description="A URL to POST the record to (egress rules).")

    @model_validator(mode="after")
    def _one_destination(self) -> SinkSpec:
        given = [
            name
            for name in ("jsonl", "sqlite", "kb_folder", "webhook")
            if getattr(self, name) is not None
        ]
        if len(given) != 1:
            raise ValueError("give one of jsonl, sqlite (with table), kb_folder, webhook")
        if (self.sqlite is None) != (self.table is None):
            raise ValueError("sqlite and table go together")
        missing = [name for name in self.key if name not in self.record]
        if missing:
            raise ValueError(f"key names fields the record lacks: {', '.join(missing)}")
        if self.sqlite is not None:
            bad = [name for name in self.record if not re.fullmatch(_ID, name)]
            if bad:
                raise ValueError(
                    f"record fields of a SQLite sink are its columns, so identifiers: "
                    f"{', '.join(bad)}"
                )
        return self


class ForEachSpec(_Strict):
    over: str = Field(description="The step whose items are iterated.")
    key: str = Field(
        "{{item.url}}", description="What identifies an item (template), for checkpoints."
    )
    steps: list[StepSpec] = Field(min_length=1)


class StepSpec(_Strict):
    id: str = Field(pattern=_ID)
    tool: str | None = Field(None, pattern=TOOL_NAME_PATTERN)
    arguments: dict[str, Any] = Field(default_factory=dict)
    search: SearchTemplate | None = None
    documents: DocumentQuery | None = None
    extract: ExtractSpec | None = None
    summarise: SummariseSpec | None = None
    filter: FilterSpec | None = None
    for_each: ForEachSpec | None = None
    sink: SinkSpec | None = None

    @property
    def kind(self) -> str:
        return next(name for name in STEP_KINDS if getattr(self, name) is not None)

    @model_validator(mode="after")
    def _one_kind(self) -> StepSpec:
        given = [name for name in STEP_KINDS if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                f"step {self.id!r}: give exactly one of {', '.join(STEP_KINDS)} "
                f"(got {', '.join(given) or 'none'})"
            )
        if self.arguments and self.tool is None:
            raise ValueError(f"step {self.id!r}: arguments go with a tool")
        if self.id in _RESERVED_IDS:
            raise ValueError(f"step id {self.id!r} is reserved (inputs, run, item)")
        return self


ForEachSpec.model_rebuild()


class WorkflowDefinition(_Strict):
    name: str = Field(pattern=TOOL_NAME_PATTERN)
    description: str = ""
    inputs: dict[str, ParameterSpec] = Field(default_factory=dict)
    schedule: str | None = Field(None, description="Cron (5 fields, UTC), e.g. '0 2 * * *'.")
    catch_up: int = Field(
        24,
        ge=0,
        le=1000,
        description="Missed schedule slots run when the scheduler starts (each once).",
    )
    steps: list[StepSpec] = Field(min_length=1)

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        from croniter import croniter  # here: only a schedule needs it

        if value is not None and not croniter.is_valid(value):
            raise ValueError(
                f"schedule {value!r} is not a cron expression (minute hour day month weekday)"
            )
        return value

    @model_validator(mode="after")
    def _ids_unique(self) -> WorkflowDefinition:
        seen: set[str] = set()

        def walk(steps: list[StepSpec]) -> None:
            for step in steps:
                if step.id in seen:
                    raise ValueError(f"step id {step.id!r} is used twice")
                seen.add(step.id)
                if step.for_each is not None:
                    walk(step.for_each.steps)

        walk(self.steps)
        return self

    @model_validator(mode="after")
    def _references_resolve(self) -> WorkflowDefinition:
        """Every `{{name...}}` and every `over:` names what exists before it: an input
        declared, `run`, an earlier step, and inside a for_each `item` and its earlier
        sub-steps. A typo is said when the file is read, not found as an empty field."""
        _check_steps(self.steps, set(self.inputs), set(), inside=False)
        return self


_RUN_FIELDS = frozenset({"id", "slot", "since", "until"})


def _templates(step: StepSpec) -> list[tuple[str, str]]:
    """(where, template) of every templated string of one step (not its sub-steps)."""
    found: list[tuple[str, str]] = []

    def collect(where: str, value: Any) -> None:
        if isinstance(value, str):
            found.append((where, value))
        elif isinstance(value, dict):
            for key, item in value.items():
                collect(f"{where}.{key}", item)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                collect(f"{where}.{index}", item)

    collect("arguments", step.arguments)
    if step.search is not None:
        collect("search.query", step.search.query)
    if step.documents is not None:
        collect("documents.modified_after", step.documents.modified_after)
        collect("documents.modified_before", step.documents.modified_before)
    if step.extract is not None:
        collect("extract.text", step.extract.text)
    if step.summarise is not None:
        collect("summarise.text", step.summarise.text)
    if step.sink is not None:
        collect("sink.record", step.sink.record)
    if step.for_each is not None:
        collect("for_each.key", step.for_each.key)
    return found


def _check_steps(
    steps: list[StepSpec], inputs: set[str], earlier: set[str], *, inside: bool
) -> None:
    known = set(earlier)
    for step in steps:
        over = step.for_each.over if step.for_each else step.filter.over if step.filter else None
        if over is not None and over not in known:
            raise ValueError(
                f"step {step.id!r}: over {over!r} is no earlier step; "
                f"earlier: {', '.join(sorted(known)) or '(none)'}"
            )
        scopes = {"inputs", "run", *known} | ({"item"} if inside or step.for_each else set())
        for where, template in _templates(step):
            for name in placeholders(template):
                head, _, rest = name.partition(".")
                field = rest.partition(".")[0]
                if head not in scopes:
                    raise ValueError(
                        f"step {step.id!r} {where}: {{{{{name}}}}} names nothing; allowed: "
                        f"{', '.join(sorted(scopes))}"
                    )
                if head == "inputs" and field not in inputs:
                    raise ValueError(
                        f"step {step.id!r} {where}: no input {field!r}; inputs: "
                        f"{', '.join(sorted(inputs)) or '(none)'}"
                    )
                if head == "run" and field not in _RUN_FIELDS:
                    raise ValueError(
                        f"step {step.id!r} {where}: run has no {field!r}; allowed: "
                        f"{', '.join(sorted(_RUN_FIELDS))}"
                    )
        if step.for_each is not None:
            _check_steps(step.for_each.steps, inputs, known, inside=True)
        known.add(step.id)
