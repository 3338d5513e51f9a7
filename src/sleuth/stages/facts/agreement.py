"""Fact agreement: numeric claims cross-checked across independent registrable domains.

Owns `check_facts` and what it returns (`FactCheck`): the claims of a result list
grouped by what they are about, values within tolerance taken as one, and each group
judged by the independent domains behind its values (`agreed`, `disputed`,
`single_source`), giving the response's `facts` and each item's `fact_check`; the
rules are in `check_facts`. Also owns `FactSettings`, the whole `facts:` section of
sleuth.yaml: the extraction keys of `ClaimSettings` plus the tolerances and
`max_facts` used here.

What it must not hold: reading claims out of text, which is `sleuth.stages.facts.claims`
(`Claim`, `extract_claims` and `score_claims` are re-exported here for callers of
this module), and finding a URL's registrable domain, which is
`sleuth.stages.verify.trust.registrable_domain`, so trust and facts count a site the same
way. It reads titles, snippets and URLs only; it does no I/O and reads no clock.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field

from sleuth.contract import Fact, FactValue, ResultItem
from sleuth.contract import FactCheck as FactLabel
from sleuth.stages.facts.claims import (
    Claim,
    ClaimSettings,
    extract_claims,
    extract_item_claims,
    score_claims,
    subject_key,
)
from sleuth.stages.verify.trust import registrable_domain

__all__ = [
    "Claim",
    "FactCheck",
    "FactSettings",
    "check_facts",
    "extract_claims",
    "score_claims",
]


class FactSettings(ClaimSettings):
    """The `facts:` section of sleuth.yaml: the keys of `ClaimSettings` and these.

    >>> FactSettings().relative_tolerance
    0.01
    """

    relative_tolerance: float = Field(
        default=0.01,
        ge=0,
        description="Two values agree when they differ by at most this share of the larger.",
    )
    percent_tolerance: float = Field(
        default=0.1,
        ge=0,
        description=(
            "For units in `percent_units`, two values agree when they differ by at most "
            "this many percentage points (absolute, not relative: 3.5% and 3.6% agree)."
        ),
    )
    percent_units: list[str] = Field(
        default_factory=lambda: ["%", "pp"],
        description="Canonical units compared with `percent_tolerance`.",
    )
    max_facts: int = Field(
        default=10,
        ge=0,
        description=(
            "Facts in the response: disputed first, then agreed, then single-source, each "
            "by the number of independent sources; items are labelled from all of them."
        ),
    )


@dataclass(frozen=True, slots=True)
class FactCheck:
    """What `check_facts` returns: the response's `facts`, the items with `fact_check`
    set, and the claims read from each item (both in the order of the input)."""

    facts: list[Fact]
    items: list[ResultItem]
    claims: list[list[Claim]]


def _item_domains(item: ResultItem) -> list[str]:
    """Registrable domains of the item's URL and of every URL it was found at, else of
    its `domain`; none for an item without a web host (a local file, no URL)."""
    domains: list[str] = []
    for url in (item.url, *item.sources):
        domain = registrable_domain(url)
        if domain is not None and domain not in domains:
            domains.append(domain)
    if not domains and (domain := registrable_domain(item.domain)) is not None:
        domains.append(domain)
    return domains


class _Cluster:
    """Claims of one group whose values agree: the items and sources behind them, and
    the value most of them state (a tie goes to the best-ranked item's)."""

    __slots__ = ("entries", "items", "sources", "value")

    def __init__(self, entries: list[tuple[int, Claim]], sources: set[str]) -> None:
        self.entries = entries
        self.sources = sources
        self.items = sorted({index for index, _ in entries})
        counts: dict[float, int] = {}
        first: dict[float, int] = {}
        for index, claim in entries:
            counts[claim.value] = counts.get(claim.value, 0) + 1
            first[claim.value] = min(index, first.get(claim.value, index))
        self.value = min(counts, key=lambda value: (-counts[value], first[value]))


#: Order of facts in the response, and precedence among one item's claim labels.
_STATUS_ORDER: tuple[FactLabel, ...] = ("disputed", "agreed", "single_source")


def check_facts(
    items: Sequence[ResultItem], query_terms: Sequence[str], settings: FactSettings
) -> FactCheck:
    """Cross-check the numeric claims of `items`: the response's facts, labelled items.

    Claims are grouped by unit and attribute (`subject_key`). When the attribute holds
    query terms with a digit ("16" of "iPhone 16"), a variant or a change word, those
    alone (with the unit) decide the group, so "iPhone 16 售价" and "price of the
    iPhone 16" meet; otherwise the whole attribute must match. A claim without subject
    words is not compared. Within a group, values within tolerance are one value;
    sources are registrable domains (`registrable_domain` of an item's URL and its
    `sources`, else of its `domain`; all items without a web host, such as local
    files, count together as one source). A fact is:

    - `disputed` when two sources each state a value the other does not;
    - `agreed` when it is not disputed and two or more sources state its value;
    - `single_source` otherwise (one domain, even one giving several values).

    `Fact.value` is the value stated by the most sources; a tie goes to the value of
    the best-ranked (lowest-index) item. Each claim is labelled too: in a disputed
    fact, claims on a value that two or more sources state and that has strictly more
    sources than any other value are `agreed` (the majority's sources agree), the
    rest `disputed`. An item is `disputed` if any of its claims is, else `agreed` if
    any is, else `single_source`; None when it has no compared claim.

    >>> def item(i, url, snippet):
    ...     return ResultItem(id=str(i), url=url, snippet=snippet, providers=["p"])
    >>> checked = check_facts([
    ...     item(0, "https://www.apple.com.cn/iphone-16/", "iPhone 16 售价 5999 元起。"),
    ...     item(1, "https://news.sina.com.cn/a", "iPhone 16 国行价格 5999 元。"),
    ...     item(2, "https://www.zol.com.cn/b", "iPhone 16 售价 6999 元。"),
    ... ], ["iPhone", "16", "价格"], FactSettings())
    >>> fact = checked.facts[0]
    >>> fact.status, fact.value, [(v.value, v.domains) for v in fact.values]
    ('disputed', 5999.0, [(5999.0, ['apple.com.cn', 'sina.com.cn']), (6999.0, ['zol.com.cn'])])
    >>> [item.fact_check for item in checked.items]
    ['agreed', 'agreed', 'disputed']
    """
    claims = extract_item_claims(items, query_terms, settings)
    # only an item with claims is ever looked up (the sources of its claims)
    domains = [
        _item_domains(item) if found else [] for item, found in zip(items, claims, strict=True)
    ]
    groups: dict[tuple[str, str], list[tuple[int, Claim]]] = defaultdict(list)
    keys: dict[tuple[str, bool], str] = {}
    for index, item_claims in enumerate(claims):
        for claim in item_claims:
            if claim.attribute:
                written = (claim.attribute, claim.from_query)
                if written not in keys:
                    keys[written] = subject_key(claim, settings)
                groups[(claim.unit, keys[written])].append((index, claim))
    labels: list[set[FactLabel]] = [set() for _ in items]
    ranked = []
    for (unit, _), entries in groups.items():
        clusters = _clusters(entries, unit, domains, settings)
        status = _status(clusters)
        # each cluster's strongest rival: the most sources of any other cluster
        most, runner_up = sorted([len(cluster.sources) for cluster in clusters] + [-1])[:-3:-1]
        for cluster in clusters:
            rival = runner_up if len(cluster.sources) == most else most
            label = _claim_label(cluster, rival, status)
            for index, _ in cluster.entries:
                labels[index].add(label)
        sources = set().union(*(cluster.sources for cluster in clusters))
        rank = (_STATUS_ORDER.index(status), -len(sources), entries[0][0])
        ranked.append((rank, unit, status, entries, clusters))
    ranked.sort(key=lambda group: group[0])
    facts = [
        _fact(unit, status, entries, clusters, domains)
        for _, unit, status, entries, clusters in ranked[: settings.max_facts]
    ]
    labelled = []
    for item, found in zip(items, labels, strict=True):
        verdict = next((label for label in _STATUS_ORDER if label in found), None)
        unchanged = verdict == item.fact_check
        labelled.append(item if unchanged else item.model_copy(update={"fact_check": verdict}))
    return FactCheck(facts=facts, items=labelled, claims=claims)


def _fact(
    unit: str,
    status: FactLabel,
    entries: list[tuple[int, Claim]],
    clusters: list[_Cluster],
    domains: list[list[str]],
) -> Fact:
    """The response's view of one group: values by support, the best first."""
    ordered = sorted(clusters, key=lambda cluster: (-len(cluster.sources), cluster.items[0]))
    return Fact(
        attribute=_display_attribute(entries),
        unit=unit,
        status=status,
        value=ordered[0].value,
        values=[
            FactValue(
                value=cluster.value,
                sources=cluster.items,
                domains=_listed_domains(cluster.items, domains),
            )
            for cluster in ordered
        ],
    )


def _same(a: float, b: float, unit: str, settings: FactSettings) -> bool:
    if unit in settings.percent_units:
        return abs(a - b) <= settings.percent_tolerance + 1e-9
    return math.isclose(a, b, rel_tol=settings.relative_tolerance, abs_tol=1e-9)


def _clusters(
    entries: list[tuple[int, Claim]], unit: str, domains: list[list[str]], settings: FactSettings
) -> list[_Cluster]:
    """Values within tolerance of a cluster's smallest value join that cluster."""
    runs: list[list[tuple[int, Claim]]] = []
    anchor = 0.0
    for entry in sorted(entries, key=lambda entry: (entry[1].value, entry[0])):
        if not runs or not _same(anchor, entry[1].value, unit, settings):
            runs.append([])
            anchor = entry[1].value
        runs[-1].append(entry)
    return [
        # "" stands for every host-less item (local files): one source together
        _Cluster(run, {domain for index, _ in run for domain in domains[index] or [""]})
        for run in runs
    ]


def _status(clusters: list[_Cluster]) -> FactLabel:
    # two sources each stating a value the other does not: neither set holds the other
    if any(
        not a.sources <= b.sources and not b.sources <= a.sources
        for n, a in enumerate(clusters)
        for b in clusters[n + 1 :]
    ):
        return "disputed"
    return "agreed" if max(len(cluster.sources) for cluster in clusters) >= 2 else "single_source"


def _claim_label(cluster: _Cluster, rival: int, status: FactLabel) -> FactLabel:
    """In a disputed fact, a strict majority of two or more sources agrees (more than
    `rival`, the most sources of any other cluster); in an agreed fact, a value only one
    source states stands alone."""
    backing = len(cluster.sources)
    if status == "disputed":
        return "agreed" if backing > rival and backing >= 2 else "disputed"
    if status == "agreed" and backing < 2:
        return "single_source"
    return status


def _display_attribute(entries: list[tuple[int, Claim]]) -> str:
    """The attribute most claims of the group use; ties go to the longer, then the first."""
    counts = Counter(claim.attribute for _, claim in entries)
    first = {claim.attribute: n for n, (_, claim) in reversed(list(enumerate(entries)))}
    return min(
        counts, key=lambda attribute: (-counts[attribute], -len(attribute), first[attribute])
    )


def _listed_domains(indexes: list[int], domains: list[list[str]]) -> list[str]:
    return list(dict.fromkeys(domain for index in indexes for domain in domains[index]))
