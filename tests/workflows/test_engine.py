"""The knowledge steward end to end on a local knowledge base, as a task: the tagged
pages summarised, their three fields extracted, written to the store; a run resumed
from an earlier attempt's checkpoints skips what that attempt finished; an item that
fails is named while the others go on."""

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sleuth.config import Settings
from sleuth.errors import InvalidRequest
from sleuth.gateway import Sleuth
from sleuth.store import MemoryStore
from sleuth.tasks import TaskRunner
from sleuth.workflows.engine import RunInfo, WorkflowEngine
from sleuth.workflows.workflow_models import WorkflowDefinition
from steward_kb import TAGGED, index, pages_at, steward


def settings(tmp_path: Path) -> Settings:
    db = tmp_path / "kb.sqlite"
    index(db, pages_at(tmp_path / "pages"))
    return Settings(kb={"path": db}, store={"backend": "memory"}, observe={"log_to": "off"})


def stored(tmp_path: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(tmp_path / "knowledge_store.sqlite")
    conn.row_factory = sqlite3.Row
    return [dict(row) for row in conn.execute("SELECT * FROM policy_pages ORDER BY path")]


async def test_the_steward_files_each_tagged_page_with_summary_and_fields(tmp_path: Path) -> None:
    store = MemoryStore()
    async with Sleuth(settings(tmp_path), store=store) as sleuth:
        runner = TaskRunner(sleuth, store, schedules=False)
        task, _ = await runner.submit_workflow(steward(), base_dir=str(tmp_path))
        async with runner:
            done = await runner.wait(task.task_id)

    assert done.status == "success" and done.workflow == "knowledge_steward"
    assert done.run is not None and done.run.written == 3 and done.run.failed == []
    rows = stored(tmp_path)
    assert [Path(row["path"]).name for row in rows] == TAGGED
    by_name = {Path(row["path"]).name: row for row in rows}
    leave = by_name["leave-policy.md"]
    assert (leave["effective_date"], leave["department"], leave["reviser"]) == (
        "2026年3月1日",
        "人力资源部及全体员工",
        "王芳",
    )
    assert leave["summary"].startswith("本制度规定员工年假的天数") and len(leave["summary"]) <= 300
    expense = by_name["expense-procedure.md"]
    assert (expense["effective_date"], expense["department"], expense["reviser"]) == (
        "2026-04-15",
        "Finance",
        "Lukas Meier",
    )
    incident = by_name["incident-procedure.md"]
    assert (incident["department"], incident["reviser"]) == ("运维部、研发部", "李强")
    kinds = [event.kind for event in done.events]
    assert kinds[:3] == ["accepted", "started", "step_started"]
    assert kinds.count("item_done") == 3 and kinds[-1] == "done"


async def test_a_resumed_run_skips_what_the_earlier_attempt_finished(tmp_path: Path) -> None:
    events: list[tuple[str, dict[str, Any]]] = []

    async def record(kind: str, detail: dict[str, Any]) -> None:
        events.append((kind, detail))

    async with Sleuth(settings(tmp_path), store=MemoryStore()) as sleuth:
        engine = WorkflowEngine(sleuth)
        first = await engine.run(steward(), {}, RunInfo("run_1"), record, base_dir=tmp_path)
        # The first attempt "died" after its first item: its events up to there.
        cut = next(i for i, (kind, _) in enumerate(events) if kind == "item_done") + 1
        (tmp_path / "knowledge_store.sqlite").unlink()
        resumed_events: list[tuple[str, dict[str, Any]]] = []

        async def record_again(kind: str, detail: dict[str, Any]) -> None:
            resumed_events.append((kind, detail))

        second = await engine.run(
            steward(), {}, RunInfo("run_1"), record_again, earlier=events[:cut], base_dir=tmp_path
        )

    assert first.written == 3
    assert resumed_events[0] == ("resumed", {"steps_done": ["changed"], "items_done": 1})
    assert second.steps[0].resumed and second.written == 2
    assert len(stored(tmp_path)) == 2  # the first item was not done again


async def test_a_failing_item_is_named_and_the_others_are_filed(tmp_path: Path) -> None:
    data = steward().model_dump(mode="json", exclude_none=True)
    each = data["steps"][1]["for_each"]
    # A search per page whose filled query is over 400 characters for the page with
    # the longest title (the English one): that item fails, the others go on.
    each["steps"].insert(
        0,
        {
            "id": "lookup",
            "search": {"query": "{{item.title}} " + "x" * 370, "providers": ["local"]},
        },
    )
    workflow = WorkflowDefinition.model_validate(data)
    async with Sleuth(settings(tmp_path), store=MemoryStore()) as sleuth:

        async def record(kind: str, detail: dict[str, Any]) -> None:
            return None

        run = await WorkflowEngine(sleuth).run(
            workflow, {}, RunInfo("run_2"), record, base_dir=tmp_path
        )
    failed = {Path(item.key.split("@")[0]).name: item.code for item in run.failed}
    assert failed == {"expense-procedure.md": "invalid_request"}
    assert run.written == 2


async def test_inputs_are_checked_when_the_run_is_submitted(tmp_path: Path) -> None:
    workflow = steward(inputs={"department": {"type": "string", "enum": ["hr", "ops"]}})
    store = MemoryStore()
    async with Sleuth(settings(tmp_path), store=store) as sleuth:
        runner = TaskRunner(sleuth, store, schedules=False)
        with pytest.raises(InvalidRequest) as caught:
            await runner.submit_workflow(workflow, {"department": "finance"})
    assert caught.value.field == "department" and caught.value.allowed == ["hr", "ops"]
