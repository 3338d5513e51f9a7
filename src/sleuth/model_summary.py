"""The optional language-model summary, grounded before anyone sees it.

The request and its parsing are pure (`sleuth.stages.summary.llm_summary`); the call goes
through the transport like a provider's (egress proxy, timeouts, record and replay).
The model's text is then checked sentence by sentence with `verify_summary`: only a
sentence that one result supports is kept, cited to the sentence of that result's
snippet that shares the most words with it; a `mixed` or `unsupported` sentence is
dropped and reported, never shown as fact.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from sleuth.contract import Citation, Degradation, ResultItem, SummarySentence
from sleuth.stages.facts.grounding import GroundingSettings, SentenceCheck, verify_summary
from sleuth.stages.summary.llm_summary import (
    NAME,
    LLMSummarySettings,
    build_chat_request,
    parse_chat_response,
)
from sleuth.text import sentence_spans, tokens
from sleuth.transport import Transport


@dataclass(frozen=True)
class ModelSummary:
    sentences: list[SummarySentence]
    checks: list[SentenceCheck]
    degradations: list[Degradation]


async def summarize_with_model(
    transport: Transport,
    query: str,
    results: Sequence[ResultItem],
    settings: LLMSummarySettings,
    grounding: GroundingSettings,
    timeout_s: float,
) -> ModelSummary:
    """Ask the model, check its answer against `results`, keep what one source supports.

    Raises the `SearchError` of a failed call; the caller falls back to the
    extractive summary.
    """
    api_key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
    request = build_chat_request(query, results, settings, api_key or None)
    response = await transport.send(NAME, query, request, min(timeout_s, settings.timeout_s))
    text = parse_chat_response(response.status, response.headers, response.body)
    checks = verify_summary(text, results, grounding)
    kept: list[SummarySentence] = []
    dropped: list[Degradation] = []
    for check in checks:
        if check.status == "supported" and check.supported_by:
            source = check.supported_by[0]
            start, end = _closest_sentence(check.sentence, results[source].snippet)
            citation = Citation(result=source, start=start, end=end)
            kept.append(SummarySentence(text=check.sentence, citations=[citation]))
        else:
            reasons = "; ".join(check.reasons) or check.status
            dropped.append(
                Degradation(
                    kind="summary_sentence_dropped",
                    provider=NAME,
                    reason=f"{check.status}: {check.sentence!r}: {reasons}"[:300],
                )
            )
    return ModelSummary(kept, checks, dropped)


def _closest_sentence(sentence: str, snippet: str) -> tuple[int, int]:
    """The span of the snippet sentence sharing the most words with `sentence`."""
    wanted = set(tokens(sentence))
    spans = sentence_spans(snippet) or [(0, len(snippet))]
    return max(spans, key=lambda span: len(wanted & set(tokens(snippet[span[0] : span[1]]))))
