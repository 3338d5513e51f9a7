"""Precision and recall of verification on the labelled sets in tests/data/verification/.

- dates.jsonl: date expressions in titles, snippets and URLs (Chinese and English,
  absolute and relative, with look-alikes that are not dates);
- claims.jsonl: numeric claims with units and currencies (and numbers that are not
  claims: years, versions, model numbers, phone numbers);
- injections.jsonl: instructions addressed to the agent, and benign text that only
  discusses prompt injection.

Each set was written by hand from realistic text; the notes say which cases were
held out while the rules were written. Also prints the median cost of each check
over the recorded cassettes' results (grounding: a three-sentence summary against ten).

    python bench/verification.py
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sleuth import providers
from sleuth.contract import ResultItem
from sleuth.mapping_files import MappingFiles
from sleuth.stages.facts.agreement import FactSettings, check_facts, score_claims
from sleuth.stages.facts.grounding import verify_summary
from sleuth.stages.facts.grounding_facts import facts_of
from sleuth.stages.results.normalize import normalize
from sleuth.stages.safety.injection import InjectionSettings, score_injections, screen
from sleuth.stages.verify.dates import DateSettings, find_date, score_dates
from sleuth.text import tokens
from sleuth.transport import read_cassette

DATA = Path(__file__).parents[1] / "tests" / "data"


def load(name: str) -> list[dict[str, Any]]:
    lines = (DATA / "verification" / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def cassette_items() -> list[ResultItem]:
    """Every result of every recorded web cassette, parsed by its own provider."""
    mappings = MappingFiles()
    items: list[ResultItem] = []
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    for path in sorted(DATA.glob("*/cassette.jsonl")):
        for entry in read_cassette(path):
            provider = providers.get(str(entry["provider"]))
            mapping = mappings.for_provider(provider)
            hits = provider.parse_response(200, entry.get("headers") or {}, entry["body"], mapping)
            items.extend(normalize(provider.name, hits, now))
    return items


def median_ms(run: Callable[[], object], repeat: int = 200) -> float:
    times = []
    for _ in range(repeat):
        started = time.process_time()
        run()
        times.append((time.process_time() - started) * 1000)
    return statistics.median(times)


def ground_fresh(items: list[ResultItem]) -> None:
    """Check a three-sentence summary made of three results' snippets against ten results,
    with the sentences' facts and tokens uncached (the rank stage has tokenised the
    results already, as in a search)."""
    tokens.cache_clear()
    facts_of.cache_clear()
    for item in items:
        tokens(item.title)
        tokens(item.snippet)
    summary = " ".join(item.snippet.split(". ")[0].rstrip(".") + "." for item in items[:3])
    verify_summary(summary, items)


def main() -> None:
    dates, claims, injections = load("dates.jsonl"), load("claims.jsonl"), load("injections.jsonl")
    d, c, i = score_dates(dates), score_claims(claims), score_injections(injections)
    undated = sum(case.get("expected") is None for case in dates)
    labelled_claims = sum(len(case["expected"]) for case in claims)
    attacks = sum(bool(case["expected"]) for case in injections)
    print(
        f"dates       {len(dates):4} cases ({undated} with no date)  "
        f"precision {d['precision']:.3f}  recall {d['recall']:.3f}  exact day {d['accuracy']:.3f}"
    )
    print(
        f"claims      {len(claims):4} cases ({labelled_claims} claims)  "
        f"precision {c['precision']:.3f}  recall {c['recall']:.3f}"
    )
    print(
        f"injections  {len(injections):4} cases ({attacks} attacks, "
        f"{len(injections) - attacks} benign)  precision {i['precision']:.3f}  "
        f"recall {i['recall']:.3f}  false positives on benign {i['false_positive_rate']:.3f}"
    )

    items = cassette_items()[:30]
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    terms = ["python", "3.13"]
    date_settings, fact_settings = DateSettings(), FactSettings()
    injection_settings = InjectionSettings()
    check_facts(items, terms, fact_settings)  # compile once, as a running service does
    cost = {
        "dates": median_ms(
            lambda: [find_date(x.title, x.snippet, x.url, now, date_settings) for x in items]
        ),
        "facts": median_ms(lambda: check_facts(items, terms, fact_settings)),
        "injections": median_ms(lambda: screen(items, injection_settings)),
        "grounding": median_ms(lambda: ground_fresh(items[:10])),
    }
    shown = ", ".join(f"{name} {ms:.3f}" for name, ms in cost.items())
    print(f"cost over {len(items)} recorded results, median CPU ms: {shown}")


if __name__ == "__main__":
    main()
