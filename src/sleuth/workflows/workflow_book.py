"""Workflow files: one workflow per `*.yaml` file, read from a path (`sleuth run`) or
from `workflows_dir` (served at /v1/workflows/{name}/runs and run on schedule),
re-read when a file changes, keeping the last good set when an edit breaks it.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import ValidationError

from sleuth.errors import ConfigError
from sleuth.workflows.workflow_models import WorkflowDefinition
from sleuth.yaml_file import read_yaml

__all__ = ["WorkflowBook", "load_workflow"]

log = logging.getLogger(__name__)


def load_workflow(path: Path) -> WorkflowDefinition:
    """The workflow in the file; `ConfigError` naming the file and each bad place."""
    data = read_yaml(path, "workflow file")
    try:
        return WorkflowDefinition.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'workflow'}: "
            f"{error['msg'].removeprefix('Value error, ')}"
            for error in exc.errors(include_url=False)
        )
        raise ConfigError(f"workflow file {path} is invalid: {problems}") from None


class WorkflowBook:
    """The workflows of a folder (none without one), by name, with the folder each
    came from (their relative sink paths start there)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        if folder is not None and not folder.is_dir():
            raise ConfigError(f"workflows_dir: {folder} is not a folder")
        self._stamp_seen = self._stamp()
        self._workflows = self._load()

    def current(self) -> dict[str, WorkflowDefinition]:
        stamp = self._stamp()
        if stamp == self._stamp_seen:
            return self._workflows
        self._stamp_seen = stamp
        try:
            self._workflows = self._load()
        except ConfigError as exc:
            log.warning("keeping the last good %d workflows: %s", len(self._workflows), exc.message)
        return self._workflows

    def _files(self) -> list[Path]:
        if self.folder is None:
            return []
        found = [*self.folder.glob("*.yaml"), *self.folder.glob("*.yml")]
        return sorted(path for path in found if path.is_file())

    def _load(self) -> dict[str, WorkflowDefinition]:
        by_name: dict[str, WorkflowDefinition] = {}
        for path in self._files():
            workflow = load_workflow(path)
            if workflow.name in by_name:
                raise ConfigError(f"workflow {workflow.name!r} is declared twice ({path})")
            by_name[workflow.name] = workflow
        return by_name

    def _stamp(self) -> tuple[tuple[str, int, int], ...]:
        stamps = []
        for path in self._files():
            try:
                stat = path.stat()
            except OSError:
                continue
            stamps.append((path.name, stat.st_mtime_ns, stat.st_size))
        return tuple(stamps)
