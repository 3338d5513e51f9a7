"""Input safety: how well the guard tells prompt injection in a query from a benign
query, on the labelled corpus tests/data/safety/queries.jsonl.

The corpus (Chinese and English) holds injections (direct, role-play, "print your
system prompt", full-width letters, zero-width characters, hidden in markup or in
Unicode tag characters) and benign queries that mention prompts, instructions, ignore
or system, carry markup, or carry invisible characters. It was written in rounds,
each before the rules were changed for it; rows with "split": "heldout" were never
used for tuning, so their figures are the honest ones, and their note names the round
("[round 3]"). Rows a later round tuned on say "[held out in round N]". Rows may name
the information need ("need") that a neutralised query should keep.

Prints, with the default settings: detection rate and false-positive rate overall,
per language, per split and per held-out round, and the same for the patterns and
the score without the trained model (`guard.injection.model.enabled: false`); how
many API names of the documentation Debian ships (python3.11-doc, nodejs-doc, when
installed) are taken for injections, benign queries nobody wrote for the measure; how
often the neutral query kept the need and no longer reads as an attack; how many
benign queries were sent exactly as typed; the median CPU time of the guard per
query; and every miss.

    python bench/safety.py
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sleuth.injection_model import ModelSettings
from sleuth.stages.safety.guard import GuardSettings, Judgement, judge
from sleuth.stages.safety.query_injection import QueryInjectionSettings

CORPUS = Path(__file__).parents[1] / "tests" / "data" / "safety" / "queries.jsonl"
# Pages that repeat the others' names (Node.js's all.html) or list them.
WHOLE_BOOK_PAGES = frozenset({"all.html", "index.html"})
# The same patterns as bench/kb_real.py's `_API_ENTRY` and `_NODE_API_NAME`, written
# again: this bench runs with `python -P`, which keeps bench/_common.py off the path.
# API names in documentation as Debian installs it (python3.11-doc, nodejs-doc): Sphinx's
# entries (`argparse.ArgumentParser.add_argument`) and Node.js's headings (`fs.readFile`).
NAMED_DOCS = (
    (
        "Python 3.11 library API entries",
        Path("/usr/share/doc/python3.11-doc/html/library"),
        "*.html",
        re.compile(r'<dt class="sig sig-object py" id="([^"]+)"'),
    ),
    (
        "Node.js API names",
        Path("/usr/share/doc/nodejs/api"),
        "*.html",
        re.compile(r"<h[34]>(?:<code>)?([a-zA-Z_]\w*(?:\.\w+)+)\("),
    ),
)
ROUND = re.compile(r"\[(round \d+)\]")


def load() -> list[dict[str, Any]]:
    lines = CORPUS.read_text(encoding="utf-8").split("\n")  # not splitlines: U+2028 may be data
    return [json.loads(line) for line in lines if line.strip()]


def rates(rows: Iterable[tuple[dict[str, Any], Judgement]]) -> str:
    positives = negatives = caught = false_alarms = 0
    for row, verdict in rows:
        if row["label"] == "injection":
            positives += 1
            caught += verdict.injection
        else:
            negatives += 1
            false_alarms += verdict.injection
    detection = f"{caught / positives:6.1%} ({caught:3}/{positives:3})" if positives else "   n/a"
    alarms = (
        f"{false_alarms / negatives:6.1%} ({false_alarms:3}/{negatives:3})" if negatives else "n/a"
    )
    return f"detection {detection}   false positives {alarms}"


def median_ms(query: str, settings: GuardSettings, repeat: int = 20) -> float:
    times = []
    for _ in range(repeat):
        started = time.process_time()
        judge(query, settings)
        times.append((time.process_time() - started) * 1000)
    return statistics.median(times)


def names_of(folder: Path, glob: str, pattern: re.Pattern[str]) -> list[str]:
    return sorted(
        {
            found
            for page in folder.glob(glob)
            if page.name not in WHOLE_BOOK_PAGES
            for found in pattern.findall(page.read_text("utf-8"))
        }
    )


def print_names(settings: GuardSettings) -> None:
    """Benign queries nobody wrote for this measure: the API names of documentation
    Debian ships, as a developer asks a knowledge base for them, when installed."""
    for label, folder, glob, pattern in NAMED_DOCS:
        names = names_of(folder, glob, pattern) if folder.is_dir() else []
        if names:
            flagged = [name for name in names if judge(name, settings).injection]
            shown = ", ".join(flagged[:5])
            print(
                f"{label} asked by name: {len(flagged)} of {len(names)} taken for"
                f" injections ({len(flagged) / len(names):.2%}){': ' + shown if shown else ''}"
            )


def main() -> None:
    settings = GuardSettings()
    rows = load()
    judged = [(row, judge(row["query"], settings)) for row in rows]

    print(f"{len(rows)} queries in {CORPUS.relative_to(CORPUS.parents[3])}")
    print(f"  overall            {rates(judged)}")
    for split in ("tune", "heldout"):
        for lang in ("en", "zh"):
            part = [(r, v) for r, v in judged if r["split"] == split and r["lang"] == lang]
            print(f"  {split:8} {lang}        {rates(part)}")
        part = [(r, v) for r, v in judged if r["split"] == split]
        print(f"  {split:8} both      {rates(part)}")
    held_out = [(r, v) for r, v in judged if r["split"] == "heldout"]
    rounds = sorted(
        {match.group(1) for r, _ in held_out if (match := ROUND.search(r["note"]))},
        key=lambda name: int(name.split()[1]),
    )
    for name in rounds:
        part = [(r, v) for r, v in held_out if f"[{name}]" in r["note"]]
        print(f"  heldout {name:8}  {rates(part)}")
    for lang in ("en", "zh"):
        print(f"  language {lang}        {rates((r, v) for r, v in judged if r['lang'] == lang)}")

    without_model = GuardSettings(
        injection=QueryInjectionSettings(model=ModelSettings(enabled=False))
    )
    print("the patterns and the score alone, without the model:")
    alone = [(row, judge(row["query"], without_model)) for row, _ in held_out]
    print(f"  heldout  both      {rates(alone)}")
    for name in rounds:
        part = [(r, v) for r, v in alone if f"[{name}]" in r["note"]]
        print(f"  heldout {name:8}  {rates(part)}")
    by_model = sum(
        v.injection and bool(v.injection_reason) and "model:" in (v.injection_reason or "")
        for _, v in judged
    )
    print(f"queries flagged by the model alone (reason model:en or model:zh): {by_model}")
    caught = [(r, v) for r, v in judged if r["label"] == "injection" and v.injection]
    sent = [v.guarded.text for _, v in caught if v.guarded is not None]
    again = sum(judge(text, settings).injection for text in sent)
    with_need = [(r, v) for r, v in caught if r.get("need")]
    kept = sum(
        v.guarded is not None and r["need"].casefold() in v.guarded.text.casefold()
        for r, v in with_need
    )
    print(
        f"neutralised queries that still read as an injection: {again}/{len(sent)}; "
        f"information need kept: {kept}/{len(with_need)}"
    )
    benign = [(r, v) for r, v in judged if r["label"] == "benign"]
    as_typed = sum(v.guarded is not None and v.guarded.text == r["query"] for r, v in benign)
    refused = sum(v.guarded is None for _, v in benign)
    print(
        f"benign queries sent exactly as typed: {as_typed}/{len(benign)} (the others lost "
        f"invisible characters, entities or markup); refused: {refused}"
    )

    print_names(settings)

    judge(rows[0]["query"], settings)  # warm: the patterns compile once, at import
    costs = [median_ms(row["query"], settings) for row in rows]
    print(
        f"guard CPU time per query: median {statistics.median(costs):.3f} ms, "
        f"max {max(costs):.3f} ms"
    )

    misses = [(r, v) for r, v in judged if v.injection != (r["label"] == "injection")]
    print(f"misses ({len(misses)}):")
    for row, verdict in misses:
        kind = "missed injection" if row["label"] == "injection" else "false positive"
        why = f" [{verdict.injection_reason}]" if verdict.injection_reason else ""
        print(f"  {row['split']:7} {row['lang']} {kind}: {row['query']!r} ({row['note']}){why}")
    unkept = [
        (r, v)
        for r, v in with_need
        if v.guarded is None or r["need"].casefold() not in v.guarded.text.casefold()
    ]
    for row, verdict in unkept:
        got = verdict.guarded.text if verdict.guarded else None
        print(f"  {row['split']:7} {row['lang']} need lost: {row['need']!r}, sent {got!r}")


if __name__ == "__main__":
    main()
