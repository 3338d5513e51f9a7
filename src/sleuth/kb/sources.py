"""Named sources of the knowledge base: which folders and files make up each, the tags
its folder rules give a document, and which sources are due for a re-index.

A source is configured under `kb.sources` (sleuth.yaml):

    kb:
      sources:
        support_tickets:
          paths: [/srv/tickets]
          tags: {"urgent": [urgent], "*.md": [ticket]}
          schedule: "*/30 * * * *"

A document indexed through a source carries its name, so a search can ask for
`domain_filter: [support_tickets]`, and its tags: those of its front matter (`tags:`)
and those of every folder rule whose glob matches it (a glob without `/` against each
file and folder name on its path, one with `/` against the path from the source's
folder, as `kb.exclude` globs are). Names and tags are compared lower-cased.

The schedule is cron syntax (five fields, UTC); sleuth only says which sources are
due (`due_sources`), the task workers run them. Pure: no I/O.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: A source name: letters (any script), digits, `_` and `-`; no dot, so that
#: `domain_filter` tells it from a domain name.
SOURCE_NAME = re.compile(r"^[^\W_][\w-]{0,63}$")
#: A tag: up to 64 characters, no whitespace or comma (they separate tags).
TAG = re.compile(r"^[^\s,]{1,64}$")


class SourceConfig(BaseModel):
    """One named collection of the knowledge base."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    paths: list[Path] = Field(
        min_length=1, description="Folders and files that make up the source."
    )
    tags: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Folder rules: glob -> tags given to every document it matches "
        "(a glob without '/' is matched against each name on the path, one with '/' "
        "against the path from the source's folder).",
    )
    exclude: list[str] = Field(
        default_factory=list, description="Globs left out of this source, besides kb.exclude."
    )
    schedule: str | None = Field(
        None, description="Re-index schedule, cron syntax in UTC (e.g. '0 3 * * *')."
    )

    @field_validator("paths")
    @classmethod
    def _expand_home(cls, value: list[Path]) -> list[Path]:
        return [path.expanduser() for path in value]

    @field_validator("tags")
    @classmethod
    def _clean_tags(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        return {glob: [check_tag(tag) for tag in tags] for glob, tags in value.items()}

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        from croniter import croniter  # here: only a schedule needs it (not the settings)

        if value is not None and not croniter.is_valid(value):
            raise ValueError(
                f"{value!r} is not a cron schedule; expected five fields: minute hour "
                "day-of-month month day-of-week, e.g. '0 3 * * *'"
            )
        return value


def check_source_name(name: str) -> str:
    """`name` lower-cased, or ValueError saying what a source name may hold."""
    if not SOURCE_NAME.match(name):
        raise ValueError(
            f"{name!r} is not a source name; expected up to 64 letters, digits, '_' or '-' "
            "(no dot, no space), such as 'support_tickets'"
        )
    return name.lower()


def check_tag(tag: str) -> str:
    """`tag` lower-cased, or ValueError saying what a tag may hold."""
    if not TAG.match(tag):
        raise ValueError(f"{tag!r} is not a tag; expected 1..64 characters, no space or comma")
    return tag.lower()


def front_matter_tags(value: object) -> tuple[str, ...]:
    """The tags of a front matter `tags:` value: a list, or one string of tags separated
    by commas or spaces. A tag of several words is joined with '-'; others are ignored."""
    if isinstance(value, str):
        items: Iterable[object] = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        items = value
    else:
        return ()
    tags = ("-".join(str(item).split()).lower() for item in items if isinstance(item, str | int))
    return tuple(dict.fromkeys(tag for tag in tags if TAG.match(tag)))


def rule_tags(rel_path: str, rules: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """The tags that a source's folder rules give the document at `rel_path` (the path
    from the source's folder, '/'-separated)."""
    names = rel_path.split("/")
    found: list[str] = []
    for glob, tags in rules.items():
        pattern = glob.strip("/")
        if "/" in pattern:
            matched = fnmatch.fnmatchcase(rel_path, pattern) or any(
                fnmatch.fnmatchcase("/".join(names[:i]), pattern) for i in range(1, len(names))
            )
        else:
            matched = any(fnmatch.fnmatchcase(name, pattern) for name in names)
        if matched:
            found.extend(tags)
    return tuple(dict.fromkeys(found))


def merged_tags(*groups: Iterable[str]) -> tuple[str, ...]:
    """Tags of several origins, each once, in order."""
    return tuple(dict.fromkeys(tag for group in groups for tag in group))


def due_sources(
    sources: Mapping[str, SourceConfig], last_indexed: Mapping[str, datetime], now: datetime
) -> list[str]:
    """The scheduled sources due for a re-index at `now`: never indexed, or a time of
    their schedule has come since their last run. Sources without a schedule are never
    due (they are indexed when asked)."""
    from croniter import croniter  # here: only a schedule needs it (not the settings)

    due = []
    for name, source in sources.items():
        if source.schedule is None:
            continue
        last = last_indexed.get(name)
        if last is None:
            due.append(name)
            continue
        start = last if last.tzinfo else last.replace(tzinfo=UTC)
        following: datetime = croniter(source.schedule, start.astimezone(UTC)).get_next(datetime)
        if following <= now.astimezone(UTC):
            due.append(name)
    return due
