"""Dedupe on templated near-identical pages: false merges and missed merges, before
and after the detail check (`dedupe.keep_apart_on_details`).

Reads tests/data/dedupe/templated.jsonl (written by scripts/make_dedupe_set.py): each
group is one search's results, pages of one template that differ in one number, model,
name or date, plus copies of some pages as back ends send them (another URL and site
name, a later snippet window, a cut, a date in front, full-width punctuation, an edited
word). Each group goes through `sleuth.stages.results.dedupe.dedupe` as the gateway runs it;
"before" is SimHash and title+opening alone (the code before the check, which
`keep_apart_on_details: false` with `content_match_distance: 0` restores), "after"
the default (details keep pages apart; copies further apart by SimHash are matched
word by word).

- false merge: two different pages answered as one item (a page lost to the agent);
- missed merge: a copy of a page answered as an item of its own.

    python bench/dedupe.py
"""

from __future__ import annotations

import json
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from urllib.parse import urlsplit

from sleuth.contract import ResultItem
from sleuth.stages.results.dedupe import DedupeSettings, dedupe

SET = Path(__file__).resolve().parents[1] / "tests" / "data" / "dedupe" / "templated.jsonl"


def groups() -> dict[str, list[dict[str, str]]]:
    by_group: dict[str, list[dict[str, str]]] = defaultdict(list)
    for line in SET.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        by_group[row["group"]].append(row)
    return dict(by_group)


def judge(rows: list[dict[str, str]], settings: DedupeSettings) -> tuple[int, int]:
    """(false merges, missed merges) in pairs of rows, for one group's results."""
    items = [
        ResultItem(
            id=str(n),
            url=row["url"],
            title=row["title"],
            snippet=row["snippet"],
            domain=urlsplit(row["url"]).hostname,
            # One provider name per row: a merged item lists every row it holds.
            providers=[f"row{n}"],
        )
        for n, row in enumerate(rows)
    ]
    answer = dedupe(items, settings)
    where = {name: position for position, item in enumerate(answer) for name in item.providers}
    placed = [where[f"row{n}"] for n in range(len(rows))]
    false = missed = 0
    for a, b in combinations(range(len(rows)), 2):
        same_page = rows[a]["page"] == rows[b]["page"]
        together = placed[a] == placed[b]
        false += together and not same_page
        missed += same_page and not together
    return false, missed


def main() -> None:
    before = DedupeSettings(keep_apart_on_details=False, content_match_distance=0)
    after = DedupeSettings()
    data = groups()
    rows = [row for group in data.values() for row in group]
    pages = len({row["page"] for row in rows})
    copies = sum(row["kind"] != "page" for row in rows)
    print(f"{SET.name}: {len(data)} groups, {pages} pages, {copies} copies of them")
    print(
        f"{'group':<12} {'items':>5}  {'false before':>12} {'after':>5}  "
        f"{'missed before':>13} {'after':>5}"
    )
    totals = [0, 0, 0, 0]
    for name, group in data.items():
        fb, mb = judge(group, before)
        fa, ma = judge(group, after)
        for i, value in enumerate((fb, fa, mb, ma)):
            totals[i] += value
        print(f"{name:<12} {len(group):>5}  {fb:>12} {fa:>5}  {mb:>13} {ma:>5}")
    duplicate_pairs = sum(
        len(list(combinations([r for r in rows if r["page"] == page], 2)))
        for page in {row["page"] for row in rows}
    )
    print(
        f"{'total':<12} {len(rows):>5}  {totals[0]:>12} {totals[1]:>5}  "
        f"{totals[2]:>13} {totals[3]:>5}"
    )
    print(
        f"false merges: pairs of different pages answered as one item; "
        f"missed merges: of {duplicate_pairs} pairs of copies of one page, those "
        f"answered apart"
    )


if __name__ == "__main__":
    main()
