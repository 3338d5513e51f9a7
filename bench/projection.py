"""What projection saves: `sleuth fields compare` over every provider's recorded cassette.

For each provider, the raw bodies it answered for the recorded query are set
against the projected results an agent receives (default tiers: title and
snippet; and with `include url`, as when the agent must cite). Target (issue 3):
at least 60% fewer characters than the raw bodies, with 100% of items keeping
their answer-bearing fields.

    python bench/projection.py
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console

from sleuth.api.cli_fields import compare_queries, print_comparison, totals
from sleuth.config import Settings
from sleuth.transport import read_cassette

DATA = Path(__file__).parents[1] / "tests" / "data"


def cassettes() -> dict[str, Path]:
    found = {path.parent.name: path for path in sorted(DATA.glob("*/cassette.jsonl"))}
    found["searxng+wikipedia"] = DATA / "duplicates.jsonl"
    return found


async def run() -> None:
    settings = Settings(
        providers={"searxng": {"enabled": True}, "google": {"options": {"cx": "recorded"}}},
        replay=DATA / "web.jsonl",
    )
    console = Console(width=200)
    all_plain, all_citing = [], []
    for name, path in cassettes().items():
        entries = read_cassette(path)
        queries = list(dict.fromkeys(str(entry["query"]) for entry in entries))
        providers = list(dict.fromkeys(str(entry["provider"]) for entry in entries))
        plain = await compare_queries(settings, queries, providers, citing=False, cassette=entries)
        citing = await compare_queries(settings, queries, providers, citing=True, cassette=entries)
        all_plain += plain
        all_citing += citing
        p, c = totals(plain), totals(citing)
        console.print(
            f"{name:18} raw {p['raw_chars']:6} chars -> {p['projected_chars']:5} "
            f"({p['reduction']:.0%} fewer, kept {p['coverage']:.0%}); with url "
            f"{c['projected_chars']:5} ({c['reduction']:.0%} fewer, kept {c['coverage']:.0%})",
            highlight=False,
        )
    print_comparison(console, all_plain, all_citing)
    p, c = totals(all_plain), totals(all_citing)
    console.print(
        f"all providers: {p['reduction']:.1%} fewer characters ({p['raw_tokens']} -> "
        f"{p['projected_tokens']} ~tokens), answer fields kept {p['coverage']:.0%} "
        f"(items complete at the source: {p['answering']:.0%}); citing: {c['reduction']:.1%} "
        f"fewer, kept {c['coverage']:.0%}  (target: >= 60%, 100%)",
        highlight=False,
    )


if __name__ == "__main__":
    asyncio.run(run())
