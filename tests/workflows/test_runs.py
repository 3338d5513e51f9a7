"""The schedule's bookkeeping: each slot submitted once per process, and a slot that
could not be submitted (a full queue) tried again next time, with those after it."""

from datetime import UTC, datetime, timedelta

from sleuth.errors import TooManyRequests
from sleuth.workflows.runs import Schedules, run_info, run_request
from sleuth.workflows.workflow_models import WorkflowDefinition

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
EVERY_MINUTE = WorkflowDefinition.model_validate(
    {
        "name": "w",
        "schedule": "* * * * *",
        "catch_up": 2,
        "steps": [{"id": "s", "summarise": {"text": "x"}}],
    }
)


async def test_slots_are_submitted_once_and_a_refused_one_is_tried_again() -> None:
    submitted: list[datetime] = []
    refuse: set[datetime] = set()

    async def submit(workflow: WorkflowDefinition, slot: datetime, key: str) -> bool:
        if slot in refuse:
            raise TooManyRequests("the task queue is full")
        submitted.append(slot)
        return True

    schedules = Schedules()
    at = T0 + timedelta(minutes=5, seconds=10)
    oldest = at - timedelta(days=7)
    assert await schedules.submit_due([EVERY_MINUTE], at, oldest=oldest, submit=submit) == 2
    assert submitted == [T0 + timedelta(minutes=4), T0 + timedelta(minutes=5)]

    refuse.add(T0 + timedelta(minutes=6))
    later = T0 + timedelta(minutes=7, seconds=5)
    assert await schedules.submit_due([EVERY_MINUTE], later, oldest=oldest, submit=submit) == 0
    refuse.clear()
    assert await schedules.submit_due([EVERY_MINUTE], later, oldest=oldest, submit=submit) == 2
    assert submitted[2:] == [T0 + timedelta(minutes=6), T0 + timedelta(minutes=7)]


def test_a_run_request_carries_the_definition_the_slot_and_its_window() -> None:
    slot = T0 + timedelta(minutes=3)
    request = run_request(EVERY_MINUTE, {"a": 1}, slot=slot, base_dir="/srv/flows")
    assert WorkflowDefinition.model_validate(request["workflow"]) == EVERY_MINUTE
    info, base = run_info("task_1", request)
    assert (info.since, info.until, info.slot) == (slot - timedelta(minutes=1), slot, slot)
    assert str(base) == "/srv/flows"
    manual, _ = run_info("task_2", run_request(EVERY_MINUTE, {}, slot=None, base_dir=None))
    assert manual.since is None and manual.scope()["since"] is None
