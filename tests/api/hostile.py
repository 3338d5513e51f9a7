"""A recorded cassette with markup planted where back ends put text: brave's first
snippet carries a script and an event handler, raw and entity-escaped, and google
answers 503 with an HTML page that carries them too. Shared by the output-safety and
dashboard tests (imported as `from hostile import ...`)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

WEB = Path(__file__).parents[1] / "data" / "web.jsonl"
QUERY = "what's new in python 3.13"

#: Raw tags (a renderer would run them) and escaped ones (one unescape away from tags).
SNIPPET = (
    "Python 3.13 ships an experimental JIT. <script>alert(1)</script>"
    "<img src=x onerror=alert(1)> &lt;script&gt;alert(2)&lt;/script&gt; "
    "&lt;img src=x onerror=alert(3)&gt; See the changelog."
)
ERROR_PAGE = (
    "<html><body><h1>503 Service Unavailable</h1><script>alert(4)</script>"
    "<img src=x onerror=alert(5)></body></html>"
)
#: What no output may contain (checked case-insensitively).
MARKUP = ("<script", "</script", "<img", "onerror=", "javascript:")


def recorded() -> dict[str, dict[str, Any]]:
    """Each provider's recorded answer to QUERY, from the web cassette."""
    lines = [json.loads(line) for line in WEB.read_text(encoding="utf-8").splitlines()]
    return {line["provider"]: line for line in lines if line["query"] == QUERY}


def hostile_brave() -> dict[str, Any]:
    line = copy.deepcopy(recorded()["brave"])
    line["body"]["web"]["results"][0]["description"] = SNIPPET
    return line


def failing(provider: str) -> dict[str, Any]:
    return {
        "provider": provider,
        "query": QUERY,
        "status": 503,
        "headers": {"content-type": "text/html"},
        "body": ERROR_PAGE,
    }


def write_cassette(path: Path, lines: list[dict[str, Any]]) -> Path:
    text = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def markup_in(text: str) -> list[str]:
    """The markup fragments found in `text` (none, for safe output)."""
    lowered = text.lower()
    return [fragment for fragment in MARKUP if fragment in lowered]
