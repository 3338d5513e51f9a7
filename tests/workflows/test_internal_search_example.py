"""The seed's internal_search example runs from its YAML against two named sources of
the local knowledge base: the template filled with the product, the week's time
range applied (an old ticket is left out), only support_tickets and
customer_feedback searched (the marketing page about the same product is not), and
the complaints digest workflow files what it found."""

import json
import shutil
from pathlib import Path
from typing import Any

from sleuth.config import Settings
from sleuth.gateway import Sleuth
from sleuth.kb import SourceConfig, index_source
from sleuth.store import MemoryStore
from sleuth.tasks import TaskRunner
from sleuth.workflows.composite import CompositeResponse
from sleuth.workflows.engine import RunInfo, WorkflowEngine
from sleuth.workflows.toolbox import ToolBox
from sleuth.workflows.workflow_book import load_workflow
from sleuth.workflows.workflow_models import WorkflowDefinition

EXAMPLE = Path(__file__).parents[2] / "examples" / "internal_search"
PRODUCT = "X1 扫地机器人"


def settings(tmp_path: Path) -> Settings:
    data = tmp_path / "data"
    # Copied now: every page is new but ticket 0987, whose front matter dates its
    # last change a month back (outside past_week).
    shutil.copytree(EXAMPLE / "data", data)
    db = tmp_path / "kb.sqlite"
    sources = {
        name: SourceConfig(paths=[data / name])
        for name in ("support_tickets", "customer_feedback", "marketing")
    }
    for name, source in sources.items():
        index_source(db, name, source)
    return Settings(
        kb={"path": db, "sources": sources},
        store={"backend": "memory"},
        tools_dir=EXAMPLE / "tools",
        observe={"log_to": "off"},
    )


async def test_internal_search_fills_its_template_and_applies_the_week(tmp_path: Path) -> None:
    async with Sleuth(settings(tmp_path), store=MemoryStore()) as sleuth:
        answer = await ToolBox(sleuth).call("internal_search", {"product_name": PRODUCT})

    assert not isinstance(answer, CompositeResponse)
    assert answer.query == f"最近一周关于 {PRODUCT} 的客户投诉"
    titles = [item.title for item in answer.results]
    assert any("工单 1041" in title for title in titles)
    assert any("用户反馈" in title for title in titles)
    assert not any("工单 0987" in title for title in titles)  # older than a week
    assert not any("促销" in title for title in titles)  # marketing: not a named source
    folders = {Path(str(item.url).split("#")[0]).parent.name for item in answer.results}
    assert folders == {"support_tickets", "customer_feedback"}
    assert all(item.published_at is not None for item in answer.results)


async def test_the_complaints_digest_workflow_files_the_weeks_complaints(tmp_path: Path) -> None:
    workflow = load_workflow(EXAMPLE / "complaints_digest.yaml")
    store = MemoryStore()
    async with Sleuth(settings(tmp_path), store=store) as sleuth:
        runner = TaskRunner(sleuth, store, schedules=False)
        task, _ = await runner.submit_workflow(
            workflow, {"product_name": PRODUCT}, base_dir=str(tmp_path)
        )
        async with runner:
            done = await runner.wait(task.task_id)

    assert done.status == "success" and done.run is not None
    lines = (tmp_path / "complaints_digest.jsonl").read_text(encoding="utf-8").splitlines()
    filed = [json.loads(line) for line in lines]
    assert filed and len(filed) == done.run.written
    assert {entry["product"] for entry in filed} == {PRODUCT}
    assert not any("0987" in entry["url"] for entry in filed)


async def test_the_seeds_one_line_step_runs_as_a_search_step(tmp_path: Path) -> None:
    workflow = WorkflowDefinition.model_validate(
        {
            "name": "seed_step",
            "inputs": {"product_name": {"required": True}},
            "steps": [
                {
                    "id": "complaints",
                    "search": {
                        "query": "最近一周关于 {{inputs.product_name}} 的客户投诉",
                        "time_range": "past_week",
                        "domain_filter": ["support_tickets", "customer_feedback"],
                    },
                }
            ],
        }
    )
    events: list[tuple[str, dict[str, Any]]] = []

    async def record(kind: str, detail: dict[str, Any]) -> None:
        events.append((kind, detail))

    async with Sleuth(settings(tmp_path), store=MemoryStore()) as sleuth:
        await WorkflowEngine(sleuth).run(
            workflow, {"product_name": PRODUCT}, RunInfo("r"), record, base_dir=tmp_path
        )
    (output,) = [detail["output"] for kind, detail in events if kind == "step_done"]
    assert output["query"] == f"最近一周关于 {PRODUCT} 的客户投诉"
    titles = [item["title"] for item in output["items"]]
    assert titles and not any("促销" in t or "0987" in t for t in titles)


async def test_the_product_health_composite_answers_per_source_and_overall(
    tmp_path: Path,
) -> None:
    async with Sleuth(settings(tmp_path), store=MemoryStore()) as sleuth:
        answer = await ToolBox(sleuth).call("product_health", {"product_name": PRODUCT})

    assert isinstance(answer, CompositeResponse)
    parts = {part.name: part for part in answer.parts}
    assert {name: part.status for name, part in parts.items()} == {
        "complaints": "ok",
        "feedback": "ok",
        "campaigns": "ok",
    }
    assert all("用户反馈" in item.title for item in parts["feedback"].results)
    assert [item.title for item in parts["campaigns"].results] == ["X1 扫地机器人双十二促销方案"]
    assert answer.failed == [] and 0 < answer.confidence <= 1
