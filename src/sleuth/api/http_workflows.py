"""`GET /v1/workflows` and `POST /v1/workflows/{name}/runs`: the workflows of
`workflows_dir`, and starting a run of one as a task. The routes only; the app
(`sleuth.api.http`) includes them with its own dependencies.

A run answers 202 with its task at once (follow it at /v1/tasks/{id} and its events);
an Idempotency-Key makes a retried start the same run (200). 404 names the
workflows there are; 422 names a bad input and its allowed values.
"""

# No `from __future__ import annotations`: FastAPI must see the dependencies, which
# are this function's parameters, not module names, when it reads the signature.

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Header, Path, Response
from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import ErrorInfo, Task
from sleuth.errors import WorkflowNotFound
from sleuth.workflows.tool_models import TOOL_NAME_PATTERN

__all__ = ["RunRequest", "routes"]


class RunRequest(BaseModel):
    """A workflow run's inputs, as the workflow's `inputs:` declare them."""

    model_config = ConfigDict(extra="forbid", title="WorkflowRunRequest")

    inputs: dict[str, Any] = Field(default_factory=dict)


_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorInfo, "description": "An API key is needed."},
    404: {"model": ErrorInfo, "description": "No workflow of that name (names them)."},
    422: {"model": ErrorInfo, "description": "An input is invalid (names it)."},
    429: {"model": ErrorInfo, "description": "A rate limit or the task queue is full."},
}


def routes(service: Callable[..., Any], caller: Callable[..., Any]) -> APIRouter:
    router = APIRouter()

    @router.get("/v1/workflows", responses=_ERRORS, tags=["workflows"])
    async def list_workflows(
        svc: Annotated[Any, Depends(service)], _who: Annotated[Any, Depends(caller)]
    ) -> list[dict[str, Any]]:
        """The workflows of workflows_dir: name, description, inputs, schedule."""
        return [
            {
                "name": name,
                "description": workflow.description,
                "schedule": workflow.schedule,
                "inputs": {k: v.model_dump(mode="json") for k, v in workflow.inputs.items()},
                "steps": [step.id for step in workflow.steps],
            }
            for name, workflow in sorted(svc.sleuth.workflows.current().items())
        ]

    @router.post(
        "/v1/workflows/{name}/runs",
        status_code=202,
        response_model=Task,
        responses={**_ERRORS, 200: {"model": Task, "description": "The same key's run."}},
        tags=["workflows"],
    )
    async def start_run(
        name: Annotated[str, Path(pattern=TOOL_NAME_PATTERN, description="A workflow's name.")],
        svc: Annotated[Any, Depends(service)],
        who: Annotated[Any, Depends(caller)],
        response: Response,
        body: Annotated[RunRequest | None, Body()] = None,
        idempotency_key: Annotated[str | None, Header(max_length=200)] = None,
    ) -> Task:
        """Start a run of the workflow as a task; poll it or follow its events."""
        workflows = svc.sleuth.workflows.current()
        workflow = workflows.get(name)
        if workflow is None:
            names = sorted(workflows)
            raise WorkflowNotFound(
                f"workflow: no workflow {name!r}; there are: {', '.join(names) or '(none)'}",
                field="workflow",
                allowed=names,
            )
        folder = svc.settings.workflows_dir
        task: Task
        task, created = await svc.runner.submit_workflow(
            workflow,
            (body or RunRequest()).inputs,
            tenant=who.tenant,
            idempotency_key=idempotency_key,
            base_dir=str(folder) if folder else None,
        )
        response.status_code = 202 if created else 200
        response.headers["Location"] = f"/v1/tasks/{task.task_id}"
        return task

    return router
