"""A composite tool's one answer: each part's results, facts and confidence, the
overall confidence, and the parts that failed with the reason.

A part is `ok` when it returned results, `empty` when its providers answered with
none, and `failed` when it could not answer: its call raised (an invalid argument,
a refused query), or every provider it asked failed. A failed part never fails the
whole: the others still answer, and it counts in the overall confidence as zero, so

    overall = Σ weight·confidence (parts that answered) / Σ weight (every part)

falls when a part fails or is unsure; an empty part counts as zero too (it found
nothing to be confident about). Pure: no I/O.

>>> ok = part_outcome("news", 1.0, response=SearchResponse(task_id="t", query="q",
...     rewritten_query="q", results=[ProjectedItem(title="a")], confidence=0.8))
>>> bad = part_outcome("court", 1.0, error=SearchError("court registry down").info())
>>> answer = merge_parts("company_intel_search", [ok, bad])
>>> answer.confidence, [(f.part, f.code) for f in answer.failed]
(0.4, [('court', 'internal_error')])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import ErrorInfo, Fact, ProjectedItem, SearchResponse, SummarySentence
from sleuth.errors import SearchError

__all__ = ["CompositeResponse", "FailedPart", "PartResult", "merge_parts", "part_outcome"]

PartStatus = Literal["ok", "empty", "failed"]


class PartResult(BaseModel):
    """One part of a composite tool's answer."""

    model_config = ConfigDict(extra="forbid", title="PartResult")

    name: str
    status: PartStatus
    weight: float = Field(gt=0)
    query: str | None = Field(None, description="The query the part searched for.")
    results: list[ProjectedItem] = Field(default_factory=list)
    summary: list[SummarySentence] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    confidence: float | None = Field(None, ge=0, le=1)
    degraded: bool = False
    errors: list[ErrorInfo] = Field(
        default_factory=list, description="Back-end failures inside the part's answer."
    )
    error: ErrorInfo | None = Field(None, description="Why the part failed, when it did.")


class FailedPart(BaseModel):
    """A part that could not answer, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="FailedPart")

    part: str
    code: str
    reason: str


class CompositeResponse(BaseModel):
    """What a composite tool returns: one structured result over all its parts."""

    model_config = ConfigDict(extra="forbid", title="CompositeResponse")

    tool: str
    parts: list[PartResult]
    confidence: float = Field(ge=0, le=1, description="Weighted over every part; failed ones 0.")
    degraded: bool = Field(description="Some part failed or answered degraded.")
    failed: list[FailedPart] = Field(default_factory=list)


def _failure(response: SearchResponse) -> ErrorInfo | None:
    """Why a part's search counts as failed: no results and every provider it asked
    failed (the first error says why); None when it answered, results or not."""
    if response.results:
        return None
    statuses = [report.status for report in response.providers.values()]
    if statuses and all(status in ("error", "timeout", "skipped") for status in statuses):
        real = [error for error in response.errors if error.code != "no_results"]
        return (real or response.errors or [SearchError("no provider answered").info()])[0]
    return None


def part_outcome(
    name: str,
    weight: float,
    *,
    response: SearchResponse | None = None,
    error: ErrorInfo | None = None,
) -> PartResult:
    """A part's result from its search's response, or from the error its call raised."""
    if response is None:
        failed = error or SearchError("the part ended without an answer").info()
        return PartResult(name=name, status="failed", weight=weight, error=failed, degraded=True)
    why = _failure(response)
    status: PartStatus = "failed" if why else ("ok" if response.results else "empty")
    return PartResult(
        name=name,
        status=status,
        weight=weight,
        query=response.query,
        results=response.results,
        summary=response.summary,
        facts=response.facts,
        confidence=response.confidence if status == "ok" else None,
        degraded=response.degraded or bool(response.errors) or why is not None,
        errors=response.errors,
        error=why,
    )


def merge_parts(tool: str, parts: Sequence[PartResult]) -> CompositeResponse:
    total = sum(part.weight for part in parts)
    earned = sum(part.weight * (part.confidence or 0.0) for part in parts if part.status == "ok")
    failed = [
        FailedPart(part=part.name, code=part.error.code, reason=part.error.message)
        for part in parts
        if part.status == "failed" and part.error is not None
    ]
    return CompositeResponse(
        tool=tool,
        parts=list(parts),
        confidence=round(earned / total, 4) if total else 0.0,
        degraded=any(part.degraded for part in parts),
        failed=failed,
    )
