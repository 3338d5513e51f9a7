"""The knowledge steward example on a knowledge base of its own: the example's pages
copied to a folder with the modification times a test gives them, then indexed."""

from __future__ import annotations

import os
import shutil
from datetime import datetime
from pathlib import Path

from sleuth.kb import index_folder
from sleuth.workflows.workflow_book import load_workflow
from sleuth.workflows.workflow_models import WorkflowDefinition

EXAMPLE = Path(__file__).parents[1] / "examples" / "knowledge_steward"
PAGES = EXAMPLE / "pages"
#: The example's pages tagged policy or procedure (team-lunch.md is news).
TAGGED = ["expense-procedure.md", "incident-procedure.md", "leave-policy.md"]


def steward(schedule: str | None = None, **changes: object) -> WorkflowDefinition:
    data = load_workflow(EXAMPLE / "knowledge_steward.yaml").model_dump(
        mode="json", exclude_none=True
    )
    data.update(changes)
    if schedule is not None:
        data["schedule"] = schedule
    return WorkflowDefinition.model_validate(data)


def touch(path: Path, at: datetime) -> None:
    os.utime(path, (at.timestamp(), at.timestamp()))


def pages_at(folder: Path, times: dict[str, datetime] | None = None) -> Path:
    """The example's pages in `folder`, each modified at its time in `times`."""
    folder.mkdir(parents=True, exist_ok=True)
    for page in PAGES.glob("*.md"):
        shutil.copy(page, folder / page.name)
        if times and page.name in times:
            touch(folder / page.name, times[page.name])
    return folder


def index(db: Path, folder: Path) -> None:
    index_folder(db, folder)
