"""A search's answer as text, as an agent or a person reads it: what the MCP tools
send as their text content and what `sleuth tool` prints. Pure: no I/O, and none of
the MCP machinery, so the CLI need not import it."""

from __future__ import annotations

from sleuth.contract import SearchResponse
from sleuth.workflows.composite import CompositeResponse

__all__ = ["render_composite_text", "render_text"]


def render_text(response: SearchResponse) -> str:
    """The response as an agent or a person reads it: summary sentences with [n]
    marks, then the numbered sources (n is the 1-based index into `results`).

    >>> from sleuth.contract import Citation, ProjectedItem, SummarySentence
    >>> cited = SummarySentence(text="A is 1.", citations=[Citation(result=0, start=0, end=7)])
    >>> print(render_text(SearchResponse(
    ...     task_id="t", query="q", rewritten_query="q", summary=[cited],
    ...     results=[ProjectedItem(title="A", snippet="A is 1.", url="https://a.example/")],
    ... )))
    A is 1. [1]
    <BLANKLINE>
    Sources:
    [1] A — https://a.example/
        A is 1.
    """
    lines: list[str] = []
    for sentence in response.summary:
        marks = "".join(f"[{c.result + 1}]" for c in sentence.citations)
        lines.append(f"{sentence.text} {marks}".rstrip())
    for fact in response.facts:
        unit = f" {fact.unit}" if fact.unit else ""
        lines.append(f"Fact ({fact.status}): {fact.attribute} = {fact.value:g}{unit}")
    if lines:
        lines.append("")
    if response.results:
        lines.append("Sources:")
    else:
        lines.append("No results.")
    for number, item in enumerate(response.results, start=1):
        head = f"[{number}] {item.title}"
        if item.url:
            head += f" — {item.url}"
        if item.published_at:
            head += f" ({item.published_at:%Y-%m-%d})"
        lines.append(head)
        if item.snippet and item.snippet != item.title:
            lines.append(f"    {item.snippet}")
    notes = [f"{e.provider}: {e.code}" if e.provider else e.code for e in response.errors]
    if response.confidence is not None:
        notes.insert(0, f"confidence {response.confidence:.2f}")
    if response.degraded:
        notes.append("degraded: " + "; ".join(d.reason for d in response.degradations))
    if notes:
        lines.extend(["", "(" + ", ".join(notes) + ")"])
    return "\n".join(lines)


def render_composite_text(answer: CompositeResponse) -> str:
    """A composite tool's answer as text: the overall confidence and failures, then
    each part's own answer under its name."""
    head = f"{answer.tool}: confidence {answer.confidence:.2f}"
    if answer.failed:
        head += "; failed: " + "; ".join(f"{f.part} ({f.code}: {f.reason})" for f in answer.failed)
    blocks = [head]
    for part in answer.parts:
        if part.status == "failed":
            continue
        shown = SearchResponse(
            task_id="-",
            query=part.query or "",
            rewritten_query=part.query or "",
            results=part.results,
            summary=part.summary,
            facts=part.facts,
            confidence=part.confidence,
            errors=part.errors,
        )
        blocks.append(f"## {part.name} ({part.status})\n{render_text(shown)}")
    return "\n\n".join(blocks)
