"""A workflow run as a task carries it, and the schedule's bookkeeping of which slots
were submitted: what `sleuth.tasks.TaskRunner` needs to store, run and schedule
workflows, kept out of the runner. Pure but for the clock its caller passes.

The task's request holds the workflow's definition (so a run under way is not changed
by an edit of its file), the checked inputs, the slot and its window, and the folder
relative sink paths start from.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sleuth.errors import SearchError
from sleuth.workflows.engine import RunInfo
from sleuth.workflows.schedule import due_slots, latest_slots, slot_key, window
from sleuth.workflows.workflow_models import WorkflowDefinition

__all__ = ["Schedules", "run_info", "run_request"]

log = logging.getLogger(__name__)


def run_request(
    workflow: WorkflowDefinition,
    values: Mapping[str, Any],
    *,
    slot: datetime | None,
    base_dir: str | None,
) -> dict[str, Any]:
    """The task request of a run (JSON)."""
    since, until = (None, None)
    if slot is not None and workflow.schedule is not None:
        since, until = window(workflow.schedule, slot)
    return {
        "workflow": workflow.model_dump(mode="json", exclude_none=True),
        "inputs": dict(values),
        "slot": slot.isoformat() if slot else None,
        "since": since.isoformat() if since else None,
        "until": until.isoformat() if until else None,
        "base_dir": base_dir,
    }


def run_info(task_id: str, request: Mapping[str, Any]) -> tuple[RunInfo, Path | None]:
    """Which run a task's request is, and the folder its sinks' paths start from."""

    def moment(key: str) -> datetime | None:
        text = request.get(key)
        return datetime.fromisoformat(text) if isinstance(text, str) else None

    base_dir = request.get("base_dir")
    info = RunInfo(task_id, moment("slot"), moment("since"), moment("until"))
    return info, Path(base_dir) if isinstance(base_dir, str) else None


#: Submits the run of one slot: (workflow, slot, idempotency key) → whether it was new.
Submit = Callable[[WorkflowDefinition, datetime, str], Awaitable[bool]]


class Schedules:
    """Per scheduled workflow, the time up to which its slots were submitted (by this
    process; the idempotency key makes the store keep one run per slot across them)."""

    def __init__(self) -> None:
        self._through: dict[str, datetime] = {}

    async def submit_due(
        self,
        workflows: Iterable[WorkflowDefinition],
        now: datetime,
        *,
        oldest: datetime,
        submit: Submit,
    ) -> int:
        """Submit the slots that came since the last look (on the first look, the
        workflow's `catch_up` latest ones, none before `oldest`); how many were new. A
        slot that could not be submitted (a full queue) is looked at again next time,
        with the ones after it."""
        made = 0
        for workflow in workflows:
            if workflow.schedule is None:
                continue
            through = self._through.get(workflow.name)
            if through is None:
                slots = latest_slots(
                    workflow.schedule, now=now, count=workflow.catch_up, not_before=oldest
                )
            else:
                slots = due_slots(workflow.schedule, after=through, now=now)
            self._through[workflow.name] = now
            for slot in slots:
                try:
                    made += await submit(workflow, slot, slot_key(workflow.name, slot))
                except SearchError as exc:
                    # Looked at again next time from this slot on: none is skipped.
                    log.warning(
                        "workflow %s slot %s not submitted: %s", workflow.name, slot, exc.message
                    )
                    self._through[workflow.name] = slot - timedelta(microseconds=1)
                    break
        return made
