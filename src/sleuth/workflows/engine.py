"""Runs one workflow: its steps in order, each for_each item by item, checkpointed in
the run's own events so that a run killed anywhere resumes where it was.

    step_started {step, kind}
    step_done    {step, kind, output}     a top-level step finished; its output is kept
    item_done    {step, index, key, written}   one for_each item finished
    item_failed  {step, index, key, code, reason}
    resumed      {steps_done, items_done}  a later attempt picked the run up

A run given the events of an earlier attempt (`earlier`) takes the outputs of the
steps that attempt finished from them, instead of running those steps again (so a
`documents` listing is the same list on resume), and skips the for_each items it
finished. The item being worked on when the process died is done again; its sink
writes are idempotent by key (`sinks.py`), so no record is written twice.

An item that fails (a search refused, a sink that did not answer) is recorded and
the loop goes on; a top-level step that fails ends the run with its error. Every
search runs inside `call_context(workflow=NAME)` (and `tool=` for a tool step), so its
call record names them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sleuth.contract import FailedItem, StepReport, WorkflowRun
from sleuth.errors import InvalidRequest, SearchError
from sleuth.gateway import Sleuth
from sleuth.kb.listing import list_documents
from sleuth.observe import call_context
from sleuth.workflows.arguments import check_arguments
from sleuth.workflows.composite import CompositeResponse
from sleuth.workflows.scope import Scope
from sleuth.workflows.sinks import Sinks
from sleuth.workflows.steps import extract_fields, keep, summarise
from sleuth.workflows.tool_request import project_fields, request_for
from sleuth.workflows.toolbox import ToolBox
from sleuth.workflows.workflow_models import StepSpec, WorkflowDefinition

__all__ = ["FailedItem", "RunInfo", "StepReport", "WorkflowEngine", "WorkflowRun"]

log = logging.getLogger(__name__)

#: Appends one event to the run's task (awaited: a checkpoint is stored before the
#: run goes on).
Record = Callable[[str, dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class RunInfo:
    """Which run this is: its task, and for a scheduled run its slot and window."""

    run_id: str
    slot: datetime | None = None
    since: datetime | None = None
    until: datetime | None = None

    def scope(self) -> dict[str, Any]:
        def iso(moment: datetime | None) -> str | None:
            return moment.isoformat() if moment is not None else None

        return {
            "id": self.run_id,
            "slot": iso(self.slot),
            "since": iso(self.since),
            "until": iso(self.until),
        }


def _items(output: Any) -> list[Any]:
    if isinstance(output, Mapping):
        found = output.get("items")
        return list(found) if isinstance(found, list) else []
    return list(output) if isinstance(output, list) else []


def _time(text: str, field: str) -> datetime | None:
    if not text.strip():
        return None
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise InvalidRequest(
            f"{field}: {text!r} is not an ISO 8601 time", field=field, allowed=["ISO 8601"]
        ) from None


class _Checkpoints:
    """What an earlier attempt finished, read from its events."""

    def __init__(self, earlier: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        self.outputs: dict[str, Any] = {}
        self.items: dict[str, set[str]] = {}
        for kind, detail in earlier:
            if kind == "step_done":
                self.outputs[str(detail["step"])] = detail.get("output")
            elif kind in ("item_done", "item_failed"):
                self.items.setdefault(str(detail["step"]), set()).add(str(detail["key"]))

    def __bool__(self) -> bool:
        return bool(self.outputs or self.items)


class WorkflowEngine:
    """Runs workflows over one `Sleuth` (its tools, its knowledge base, its settings)."""

    def __init__(self, sleuth: Sleuth) -> None:
        self.sleuth = sleuth
        self.toolbox = ToolBox(sleuth)

    async def run(
        self,
        workflow: WorkflowDefinition,
        inputs: Mapping[str, Any],
        info: RunInfo,
        record: Record,
        *,
        earlier: Sequence[tuple[str, Mapping[str, Any]]] = (),
        base_dir: Path | None = None,
        attempt: int = 1,
    ) -> WorkflowRun:
        """Run (or resume) the workflow; raises the `SearchError` of a top-level step
        that failed, or `InvalidRequest` for inputs its declaration refuses."""
        values = check_arguments(workflow.inputs, inputs)
        done = _Checkpoints(earlier)
        if done:
            await record(
                "resumed",
                {
                    "steps_done": list(done.outputs),
                    "items_done": sum(len(keys) for keys in done.items.values()),
                },
            )
        run = WorkflowRun(
            workflow=workflow.name,
            slot=info.slot,
            since=info.since,
            until=info.until,
            attempt=attempt,
        )
        scope = Scope({"inputs": values, "run": info.scope()})
        sinks = Sinks(self.sleuth.settings, base_dir or Path.cwd())
        try:
            with call_context(workflow=workflow.name):
                for step in workflow.steps:
                    if step.id in done.outputs:
                        output = done.outputs[step.id]
                        run.steps.append(_report(step, output, resumed=True))
                        scope = scope.with_values(**{step.id: output})
                        continue
                    await record("step_started", {"step": step.id, "kind": step.kind})
                    if step.for_each is not None:
                        output = await self._for_each(step, scope, sinks, done, record, run)
                    else:
                        output = await self._step(step, scope, sinks)
                        if step.sink is not None and output.get("written"):
                            run.written += 1
                    await record(
                        "step_done", {"step": step.id, "kind": step.kind, "output": output}
                    )
                    run.steps.append(_report(step, output))
                    scope = scope.with_values(**{step.id: output})
        finally:
            await sinks.aclose()
        return run

    async def _for_each(
        self,
        step: StepSpec,
        scope: Scope,
        sinks: Sinks,
        done: _Checkpoints,
        record: Record,
        run: WorkflowRun,
    ) -> dict[str, Any]:
        spec = step.for_each
        if spec is None:  # the caller checked; said, not assumed
            raise SearchError(f"step {step.id!r} is no for_each")
        items = _items(scope.look_up(spec.over))
        finished = done.items.get(step.id, set())
        written = failed = skipped = 0
        for index, item in enumerate(items):
            inner = scope.with_values(item=item)
            key = inner.text(spec.key) or str(index)
            if key in finished:
                skipped += 1
                continue
            item_written = 0
            try:
                for sub in spec.steps:
                    if sub.for_each is not None:
                        raise InvalidRequest(
                            f"step {sub.id!r}: a for_each inside a for_each is not supported",
                            field="for_each",
                        )
                    output = await self._step(sub, inner, sinks)
                    if sub.sink is not None and output.get("written"):
                        item_written += 1
                    inner = inner.with_values(**{sub.id: output})
            except SearchError as exc:
                failed += 1
                run.failed.append(
                    FailedItem(step=step.id, key=key, code=exc.code, reason=exc.message)
                )
                detail = {"step": step.id, "index": index, "key": key, "code": exc.code}
                await record("item_failed", {**detail, "reason": exc.message})
                continue
            written += item_written
            run.written += item_written
            await record(
                "item_done", {"step": step.id, "index": index, "key": key, "written": item_written}
            )
        return {
            "items": len(items),
            "done": len(items) - failed - skipped,
            "resumed_past": skipped,
            "written": written,
            "failed": failed,
        }

    async def _step(self, step: StepSpec, scope: Scope, sinks: Sinks) -> dict[str, Any]:
        """One step that is not a for_each: its output."""
        if step.tool is not None:
            arguments = scope.render(step.arguments)
            with call_context(tool=step.tool):
                answer = await self.toolbox.call(step.tool, arguments)
            dumped = answer.model_dump(mode="json")
            items = dumped["parts"] if isinstance(answer, CompositeResponse) else dumped["results"]
            return {**dumped, "items": items}
        if step.search is not None:
            request = request_for(step.search, scope.look_up)
            response = await self.sleuth.search(request)
            dumped = project_fields(response, step.search.projection).model_dump(mode="json")
            return {**dumped, "items": dumped["results"]}
        if step.documents is not None:
            query = step.documents
            after = _time(scope.text(query.modified_after or ""), "documents.modified_after")
            before = _time(scope.text(query.modified_before or ""), "documents.modified_before")
            documents = await asyncio.to_thread(
                list_documents,
                self.sleuth.settings.kb.path,
                sources=query.sources,
                tags=query.tags,
                modified_after=after,
                modified_before=before,
                text=query.text,
                limit=query.limit,
            )
            return {"items": documents, "count": len(documents)}
        if step.extract is not None:
            text = scope.render(step.extract.text)
            return extract_fields(str(text or ""), step.extract.fields)
        if step.summarise is not None:
            text = scope.render(step.summarise.text)
            return summarise(str(text or ""), step.summarise.max_chars)
        if step.filter is not None:
            kept = keep(_items(scope.look_up(step.filter.over)), step.filter.where)
            return {"items": kept, "count": len(kept)}
        if step.sink is not None:
            data = scope.render(step.sink.record)
            written = await sinks.write(step.sink, data)
            return {"written": written}
        raise SearchError(f"step {step.id!r} has nothing to run")


def _report(step: StepSpec, output: Any, *, resumed: bool = False) -> StepReport:
    data = output if isinstance(output, Mapping) else {}
    if step.for_each is not None:
        return StepReport(
            id=step.id,
            kind=step.kind,
            items=data.get("items"),
            written=data.get("written"),
            failed=data.get("failed"),
            resumed=resumed,
        )
    if step.sink is not None:
        return StepReport(
            id=step.id, kind=step.kind, written=int(bool(data.get("written"))), resumed=resumed
        )
    items = data.get("items")
    return StepReport(
        id=step.id,
        kind=step.kind,
        items=len(items) if isinstance(items, list) else None,
        resumed=resumed,
    )
