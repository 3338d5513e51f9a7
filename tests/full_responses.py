"""The full answers sleuth gives for every recorded cassette, at a fixed "now": what
`tests/test_full_responses.py` compares and `scripts/record_full_responses.py`
writes. A helper module, not a test."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sleuth.config import Settings
from sleuth.gateway import Sleuth
from sleuth.transport import ReplayTransport, read_cassette

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden"
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)  # the answers' "now": freshness reads it
EVERYTHING = ["url", "published_at", "freshness", "dated_from", "fields", "providers"]
KEYS = {f"{name}_API_KEY": "test-key" for name in ("BRAVE", "GOOGLE", "SERPAPI", "TAVILY", "EXA")}
# What differs from run to run: ids, how long things took.
_VOLATILE = frozenset({"task_id", "timings", "latency_ms"})


def cassettes() -> list[Path]:
    return [DATA / "web.jsonl", *sorted(DATA.glob("*/cassette.jsonl"))]


def golden_path(cassette: Path) -> Path:
    name = "web" if cassette.parent == DATA else cassette.parent.name
    return GOLDEN / f"{name}.json"


async def answers(cassette: Path) -> dict[str, Any]:
    """Each query of the cassette, searched over the providers recorded for it."""
    entries = list(read_cassette(cassette))
    chains: dict[str, list[str]] = defaultdict(list)
    for entry in entries:
        providers = chains[str(entry["query"])]
        if entry["provider"] not in providers:
            providers.append(str(entry["provider"]))
    found: dict[str, Any] = {}
    for query, chain in chains.items():
        settings = Settings(
            chain=chain,
            providers={
                name: {
                    "enabled": True,
                    "base_url": "http://127.0.0.1:9",
                    "options": {"cx": "test-cx"} if name == "google" else {},
                }
                for name in chain
            },
            store={"backend": "memory"},
            cache={"enabled": False},
            projection={"optional": EVERYTHING},
        )
        transport = ReplayTransport(entries, source=str(cassette))
        async with Sleuth(settings, transport, clock=lambda: NOW) as sleuth:
            response = await sleuth.search(
                {"query": query, "max_results": 10, "include": EVERYTHING}
            )
        found[query] = _stable(json.loads(response.model_dump_json()))
    return found


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value
