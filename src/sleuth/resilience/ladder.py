"""The degradation ladder: what a search answers when its back ends let it down.

    1 retry          the same provider, recoverable errors only (`resilience.retry`)
    2 backups        the next provider of the chain (`resilience.call`, `backups:`)
    3 local cache    a fresh cached answer is returned before any provider is asked;
                     when no provider answered, a stale one is returned instead
    4 fallback       a structured answer saying nothing could be retrieved, in the
                     request's language, with `degraded: true` and confidence 0

Steps 1 and 2 happen inside the fan-out; this module owns steps 3 and 4: when the
ladder is needed (`nothing_answered`), which answer a search gives from the cache
(`from_cache`) or in its place (`rescue`), and whether an answer is complete enough
to be cached for long (`complete`). Each step down is one `Degradation` with its
reason. Pure: no I/O, no clock (the caller passes `now`, wall-clock seconds).

>>> LadderSettings().fallback_text["en"]
'No information could be retrieved right now; try other wording or try again later.'
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sleuth.contract import (
    CacheState,
    Degradation,
    ErrorInfo,
    ProviderReport,
    SearchResponse,
    SummarySentence,
)
from sleuth.store.base import CacheEntry

__all__ = [
    "LadderSettings",
    "complete",
    "fallback_answer",
    "from_cache",
    "nothing_answered",
    "rescue",
]

log = logging.getLogger(__name__)

#: Degradations that mean some provider's answer is missing from a response.
_MISSING_ANSWER = frozenset({"breaker_open", "quota_exhausted", "budget_exhausted"})


def _default_texts() -> dict[str, str]:
    return {
        "zh": "暂时无法检索到相关信息，请换个说法或稍后再试。",
        "en": "No information could be retrieved right now; try other wording or try again later.",
    }


class LadderSettings(BaseModel):
    """The `ladder:` section of sleuth.yaml: the last two steps down."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stale_cache: bool = Field(
        True,
        description="When no provider answered, return the query's cached answer even if it "
        "is past its freshness (marked cache: stale).",
    )
    fallback_answer: bool = Field(
        True,
        description="When no provider answered and nothing is cached, return the structured "
        "fallback answer (otherwise: the empty response with its errors).",
    )
    fallback_text: dict[str, str] = Field(
        default_factory=_default_texts,
        description="The fallback answer's one sentence, by query language (zh, en); "
        "a language not listed gets the English one.",
    )


def nothing_answered(reports: Mapping[str, ProviderReport]) -> bool:
    """Whether the ladder is needed: no provider answered, well or with nothing found.

    >>> nothing_answered({"a": ProviderReport(status="error", latency_ms=1, results=0)})
    True
    >>> nothing_answered({"a": ProviderReport(status="empty", latency_ms=1, results=0)})
    False
    """
    return not any(report.status in ("ok", "empty") for report in reports.values())


def complete(errors: Sequence[ErrorInfo], degradations: Sequence[Degradation]) -> bool:
    """Whether an answer is whole: no provider failed in a way that could pass (a
    recoverable or unexpected error, an open breaker, no quota). Only a complete answer
    is cached for the full TTL; a partial one briefly, and never over a complete one.
    A non-recoverable error (a missing key, nothing found) will not change by asking
    again, so it does not make the answer partial."""
    if any(error.provider and error.category != "non_recoverable" for error in errors):
        return False
    return not any(degradation.kind in _MISSING_ANSWER for degradation in degradations)


def _restore(entry: CacheEntry) -> SearchResponse | None:
    try:
        return SearchResponse.model_validate(entry.response)
    except ValidationError as exc:  # written by another version of the contract
        log.warning("ignoring the cached answer for %r: %s", entry.query, exc)
        return None


def from_cache(
    entry: CacheEntry, *, task_id: str, query: str, timings: Mapping[str, float]
) -> SearchResponse | None:
    """A fresh cached answer as this search's response (`cache: hit`): the answer as it
    was stored, under a new task id with this search's timings. None if unreadable."""
    cached = _restore(entry)
    if cached is None:
        return None
    return cached.model_copy(
        update={"task_id": task_id, "query": query, "cache": "hit", "timings": dict(timings)}
    )


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


def _why(reports: Mapping[str, ProviderReport]) -> str:
    said = ", ".join(f"{name} {report.status}" for name, report in reports.items())
    return f"no provider answered ({said})" if said else "no provider was asked"


def rescue(
    current: SearchResponse,
    *,
    stale: CacheEntry | None,
    language: str,
    now: float,
    settings: LadderSettings,
    cache_skipped: bool = False,
) -> SearchResponse:
    """The answer of a search no provider answered (`nothing_answered`): the stale
    cached answer when there is one, else the structured fallback answer.

    `current` is the search's own (empty) response: its errors, provider reports,
    degradations and timings are kept, so the caller sees why the ladder was needed.
    """
    why = _why(current.providers)
    if stale is not None and settings.stale_cache:
        cached = _restore(stale)
        if cached is not None:
            stored = datetime.fromtimestamp(stale.updated_at, UTC).isoformat(timespec="seconds")
            step = Degradation(
                kind="cache_stale",
                reason=f"{why}; answered from the cache, {_age(now - stale.updated_at)} old "
                f"(stored {stored})",
            )
            state: CacheState = "stale"
            return cached.model_copy(
                update={
                    "task_id": current.task_id,
                    "query": current.query,
                    "cache": state,
                    "degraded": True,
                    "degradations": [*current.degradations, step],
                    "errors": current.errors,
                    "providers": current.providers,
                    "timings": current.timings,
                }
            )
    if not settings.fallback_answer:
        return current
    cache_note = "the request skipped the cache" if cache_skipped else "nothing cached"
    return fallback_answer(current, language, settings, reason=f"{why}; {cache_note}")


def fallback_answer(
    current: SearchResponse, language: str, settings: LadderSettings, *, reason: str
) -> SearchResponse:
    """The last step: no results, one uncited sentence in the query's language,
    confidence 0, `degraded: true` with a `fallback_answer` degradation.

    >>> empty = SearchResponse(task_id="t", query="q", rewritten_query="q", results=[])
    >>> answer = fallback_answer(empty, "zh", LadderSettings(), reason="no provider answered")
    >>> (answer.summary[0].text, answer.summary[0].citations, answer.confidence)
    ('暂时无法检索到相关信息，请换个说法或稍后再试。', [], 0.0)
    """
    texts = settings.fallback_text
    text = texts.get(language) or texts.get("en") or next(iter(texts.values()), "")
    step = Degradation(kind="fallback_answer", reason=reason)
    return current.model_copy(
        update={
            "results": [],
            "summary": [SummarySentence(text=text, citations=[])] if text else [],
            "facts": [],
            "confidence": 0.0,
            "degraded": True,
            "degradations": [*current.degradations, step],
        }
    )
