"""The knowledge steward on an every-minute schedule, with a virtual clock: each slot
is one run (however many workers look), and each run files only the pages changed
since the slot before, so every change is filed once."""

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from sleuth.config import Settings
from sleuth.gateway import Sleuth
from sleuth.store import MemoryStore
from sleuth.tasks import TaskRunner
from steward_kb import index, pages_at, steward, touch

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


class Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at.timestamp()


def filed(store_db: Path) -> list[tuple[str, str, str | None]]:
    if not store_db.exists():
        return []
    rows = sqlite3.connect(store_db).execute(
        "SELECT path, modified_at, reviser FROM policy_pages ORDER BY modified_at"
    )
    return [(Path(path).name, modified, reviser) for path, modified, reviser in rows]


async def test_each_minute_files_only_what_changed_since_the_slot_before(tmp_path: Path) -> None:
    pages = pages_at(
        tmp_path / "pages",
        {
            "leave-policy.md": T0 - timedelta(seconds=30),
            "expense-procedure.md": T0 + timedelta(seconds=20),
            "incident-procedure.md": T0 + timedelta(seconds=40),
            "team-lunch.md": T0 + timedelta(seconds=50),  # tagged news: never filed
        },
    )
    db = tmp_path / "kb.sqlite"
    index(db, pages)
    folder = tmp_path / "workflows"
    folder.mkdir()
    workflow = steward(schedule="* * * * *", catch_up=1)
    (folder / "steward.yaml").write_text(
        yaml.safe_dump(workflow.model_dump(mode="json", exclude_none=True), allow_unicode=True),
        encoding="utf-8",
    )
    store_db = folder / "knowledge_store.sqlite"  # the sink path is the workflow folder's
    settings = Settings(
        kb={"path": db},
        store={"backend": "memory"},
        workflows_dir=folder,
        observe={"log_to": "off"},
    )
    clock = Clock(T0 + timedelta(seconds=10))
    store = MemoryStore()
    async with Sleuth(settings, store=store) as sleuth:
        worker = TaskRunner(sleuth, store, clock=clock)
        other = TaskRunner(sleuth, store, clock=clock, worker_id="another-worker")

        # 10:00:10, first look: catch up on the latest slot, 10:00 ([09:59, 10:00)).
        (first,) = await worker.schedule_once()
        assert await worker.run_once()
        assert filed(store_db) == [
            ("leave-policy.md", (T0 - timedelta(seconds=30)).isoformat(), "王芳")
        ]

        # 10:01:05: the 10:01 slot, [10:00, 10:01); another worker sees the same slot.
        clock.at = T0 + timedelta(minutes=1, seconds=5)
        (second,) = await worker.schedule_once()
        assert await other.schedule_once() == []
        assert await worker.schedule_once() == []
        assert await other.run_once() and not await worker.run_once()
        names = [name for name, _, _ in filed(store_db)]
        assert names == ["leave-policy.md", "expense-procedure.md", "incident-procedure.md"]

        # A page edited and a new one added in the next minute; re-indexed.
        leave = pages / "leave-policy.md"
        leave.write_text(leave.read_text(encoding="utf-8").replace("王芳", "赵敏"), "utf-8")
        touch(leave, T0 + timedelta(minutes=1, seconds=30))
        new = pages / "security-policy.md"
        new.write_text(
            "---\ntags: [policy]\n---\n# 信息安全制度\n\n员工不得在个人设备上保存客户数据。"
            "\n\n生效日期：2026-06-01\n适用部门：全体员工\n修订人：陈晨\n",
            encoding="utf-8",
        )
        touch(new, T0 + timedelta(minutes=1, seconds=40))
        index(db, pages)

        # 10:02:05, the 10:02 slot: only the edited page and the new one.
        clock.at = T0 + timedelta(minutes=2, seconds=5)
        (third,) = await worker.schedule_once()
        assert await worker.run_once()
        done = await worker.get(third.task_id)

    assert done.status == "success" and done.run is not None
    assert (done.run.since, done.run.until) == (
        T0 + timedelta(minutes=1),
        T0 + timedelta(minutes=2),
    )
    assert done.run.written == 2
    assert [(name, reviser) for name, _, reviser in filed(store_db)] == [
        ("leave-policy.md", "王芳"),
        ("expense-procedure.md", "Lukas Meier"),
        ("incident-procedure.md", "李强"),
        ("leave-policy.md", "赵敏"),
        ("security-policy.md", "陈晨"),
    ]
    assert len({first.task_id, second.task_id, third.task_id}) == 3
