"""The response's confidence: one number for the whole answer.

Confidence, documented (weights in `confidence:` of sleuth.yaml):

    confidence = w_trust · T + w_coverage · C + w_agreement · A      (weights sum to 1)

    T  the mean trust score of the results the summary cites (all results when
       there is no summary);
    C  how much of the query the results cover: the mean of the share of the query's
       terms found in the returned titles and snippets, and the share found in the
       first result's alone (a right first result answers most of the question in
       its own words; query words scattered over ten results do not make an answer);
    A  the mean over facts of agreed 1.0, single_source 0.5, disputed 0.0;
       `no_facts` (default 0.5) when no numeric claim could be checked.

It is 0 when there are no results (the fallback answer).

An answer whose first result comes from the knowledge base (the `local` back end)
is scored otherwise: there, trust is the user's own documentation's and facts are
rarely checked, so the formula above moved with C alone and told a right first page
from a wrong one worse than chance on PostgreSQL's book-index terms. Instead:

    confidence = 1 / (1 + exp(-(KB_BIAS + KB_LEAD · L + KB_COVERAGE · C)))

    L  the first result's lead over the knowledge base's next best, by the engine's
       own scores: 1 − second / first, 0 when the pipeline put a result the engine
       scored higher below it (the two rankings disagree), `LEAD_ALONE` when the
       engine handed back no other document (the knowledge base sends the next
       document's score, `next_score`, so one result asked for still has a lead);
    C  as above.

The weights are a logistic fit of "the first result is a right page" on the 400
book-index terms of `bench/kb_real.py` alone, so it reads roughly as that chance;
the questions and the Python API lookups are held out.

>>> ConfidenceSettings().trust_weight
0.4
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sleuth.contract import Fact, ResultItem, SummarySentence
from sleuth.providers.local import INFO as KNOWLEDGE_BASE
from sleuth.text import tokens

_AGREEMENT = {"agreed": 1.0, "single_source": 0.5, "disputed": 0.0}
# A logistic fit on the book-index terms (see above): held out, AUROC 0.75 on the
# English questions, 0.82 on the Chinese and 0.98 on the API lookups (bench/kb_real.py).
KB_BIAS = -5.73
KB_LEAD = 10.0
KB_COVERAGE = 5.28
# No other document to lead (nothing else matched, or not among the sections the
# engine handed back): counted as the fit set's median lead, neither clear nor none.
LEAD_ALONE = 0.3


class ConfidenceSettings(BaseModel):
    """The `confidence:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trust_weight: float = Field(default=0.4, ge=0, le=1, description="Weight of source trust.")
    coverage_weight: float = Field(
        default=0.3, ge=0, le=1, description="Weight of the query terms the results cover."
    )
    agreement_weight: float = Field(
        default=0.3, ge=0, le=1, description="Weight of cross-source fact agreement."
    )
    no_facts: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Agreement when no numeric claim could be checked: neither for nor against.",
    )

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> ConfidenceSettings:
        total = self.trust_weight + self.coverage_weight + self.agreement_weight
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"confidence weights must sum to 1, not {total:g}")
        return self


def coverage(results: Sequence[ResultItem], query_terms: Sequence[str]) -> float:
    """The share of the query's tokens that appear somewhere in the results' text."""
    wanted = {token for term in query_terms for token in tokens(term)}
    if not wanted:
        return 0.0
    seen: set[str] = set()
    for item in results:
        seen.update(tokens(item.title))
        seen.update(tokens(item.snippet))
    return len(wanted & seen) / len(wanted)


def _engine_score(item: ResultItem, field: str = "score") -> float | None:
    """The knowledge base's own score of `item` (`next_score`: of the document it
    ranked next), when it came from there."""
    score = item.fields.get(field)
    if KNOWLEDGE_BASE.name not in item.providers or not isinstance(score, int | float):
        return None
    return float(score)


def knowledge_base_lead(results: Sequence[ResultItem]) -> float | None:
    """How far the first result leads the knowledge base's next best, by the
    engine's scores (0..1); None when the first result is not the knowledge base's."""
    first = _engine_score(results[0])
    if first is None or first <= 0:
        return None
    # The engine's next document counts even when the answer holds one result only.
    others = [score for item in results[1:] if (score := _engine_score(item)) is not None]
    if (following := _engine_score(results[0], "next_score")) is not None:
        others.append(following)
    if not others:
        return LEAD_ALONE
    return max(0.0, 1 - max(others) / first)


def confidence(
    results: Sequence[ResultItem],
    facts: Sequence[Fact],
    summary: Sequence[SummarySentence],
    query_terms: Sequence[str],
    settings: ConfidenceSettings,
) -> float:
    """The documented formula above; 0.0 with no results."""
    if not results:
        return 0.0
    covered = (coverage(results, query_terms) + coverage(results[:1], query_terms)) / 2
    lead = knowledge_base_lead(results)
    if lead is not None:
        value = 1 / (1 + math.exp(-(KB_BIAS + KB_LEAD * lead + KB_COVERAGE * covered)))
        return round(value, 4)
    cited = {citation.result for sentence in summary for citation in sentence.citations}
    supporting = [results[i] for i in sorted(cited) if i < len(results)] or list(results)
    scores = [item.source_trust_score for item in supporting]
    trust = sum(s for s in scores if s is not None) / len(scores)
    agreement = (
        sum(_AGREEMENT[fact.status] for fact in facts) / len(facts) if facts else settings.no_facts
    )
    value = (
        settings.trust_weight * trust
        + settings.coverage_weight * covered
        + settings.agreement_weight * agreement
    )
    return round(min(1.0, max(0.0, value)), 4)
