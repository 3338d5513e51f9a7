"""Workflows and composite tools on real documentation: how fast a steward-shaped
workflow files pages, what a resume costs, and what running a composite's parts at
once saves over running them one after another.

Run: PYTHONPATH=src .venv/bin/python bench/workflows.py [--corpus DIR] [--limit N]

`--corpus` is the folder `make_corpus.sh` lays out (../shared/bench-data/kb-dev/);
its `zh/` (Chinese man pages rendered to text, Debian's manpages-zh) is indexed into
a knowledge base of its own. The workflow lists every page (`documents`), and for
each one summarises it, extracts its command name and synopsis by pattern, and
writes the record to a SQLite table and a JSON Lines file: pages per second over the
whole run, one run. Then the same run is started again from its own checkpoints with
its last half of items unfinished (as after a crash halfway), and timed: the items
done are skipped, the rest filed. The composite is three parts over the same
knowledge base (three questions); it is timed against the three searches one after
another, and so is a composite of three web back ends (Brave, Tavily and Exa shapes)
answered by the loopback back end `../shared/tools/fakeback.py` after a fixed
delay (`--delay-ms`). Figures only: nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import KB_CORPUS
from sleuth.config import Settings
from sleuth.gateway import Sleuth
from sleuth.kb import index_folder
from sleuth.store import MemoryStore
from sleuth.workflows.engine import RunInfo, WorkflowEngine
from sleuth.workflows.tool_book import ToolBook, tools_from_data
from sleuth.workflows.toolbox import ToolBox
from sleuth.workflows.workflow_models import WorkflowDefinition

WORKFLOW = {
    "name": "man_steward",
    "steps": [
        {"id": "pages", "documents": {"limit": 100_000}},
        {
            "id": "each",
            "for_each": {
                "over": "pages",
                "key": "{{item.path}}",
                "steps": [
                    {"id": "summary", "summarise": {"text": "{{item.text}}", "max_chars": 300}},
                    {
                        "id": "fields",
                        "extract": {
                            "text": "{{item.text}}",
                            "fields": {
                                "name": {"pattern": r"(?:名称|NAME)\s*(\S+)"},
                                "synopsis": {"pattern": r"(?:总览|SYNOPSIS)\s*([^\n]{1,120})"},
                            },
                        },
                    },
                    {
                        "id": "table",
                        "sink": {
                            "sqlite": "filed.sqlite",
                            "table": "pages",
                            "key": ["path"],
                            "record": {
                                "path": "{{item.path}}",
                                "name": "{{fields.name}}",
                                "summary": "{{summary.text}}",
                            },
                        },
                    },
                    {
                        "id": "lines",
                        "sink": {
                            "jsonl": "filed.jsonl",
                            "key": ["path"],
                            "record": {"path": "{{item.path}}", "synopsis": "{{fields.synopsis}}"},
                        },
                    },
                ],
            },
        },
    ],
}

QUESTIONS = [
    "如何查看磁盘使用情况",
    "怎样改变文件的权限",
    "压缩和解压 tar 文件",
]


async def steward(sleuth: Sleuth, folder: Path, limit: int) -> None:
    data = json.loads(json.dumps(WORKFLOW))
    data["steps"][0]["documents"]["limit"] = limit
    workflow = WorkflowDefinition.model_validate(data)
    engine = WorkflowEngine(sleuth)
    events: list[tuple[str, dict[str, Any]]] = []

    async def record(kind: str, detail: dict[str, Any]) -> None:
        events.append((kind, detail))

    started = time.perf_counter()
    run = await engine.run(workflow, {}, RunInfo("bench"), record, base_dir=folder)
    took = time.perf_counter() - started
    items = run.steps[1].items or 0
    print(
        f"steward run: {items} pages, {run.written} records in {took:.2f} s "
        f"({items / took:.0f} pages/s); failed {len(run.failed)}"
    )
    filled = (
        sqlite3.connect(folder / "filed.sqlite")
        .execute("SELECT count(*), count(name) FROM pages")
        .fetchone()
    )
    print(f"  table rows {filled[0]}, with a name found {filled[1]}")

    # As after a crash halfway: the listing and the first half of the items were done.
    done = [e for e in events if e[0] == "item_done"]
    listing = [e for e in events if e[0] == "step_done" and e[1]["step"] == "pages"]
    kept = listing + done[: len(done) // 2]
    for path in (folder / "filed.sqlite", folder / "filed.jsonl"):
        path.unlink()
    started = time.perf_counter()
    again = await engine.run(workflow, {}, RunInfo("bench"), record, base_dir=folder, earlier=kept)
    took_again = time.perf_counter() - started
    print(
        f"resumed halfway: {again.written} records in {took_again:.2f} s "
        f"({took_again / took:.0%} of the full run)"
    )


async def composite(
    sleuth: Sleuth, repeat: int, providers: list[str] | None = None, label: str = "local"
) -> None:
    if providers is None:
        asked = [(question, ["local"]) for question in QUESTIONS]
    else:
        asked = [("disk usage of a folder", [name]) for name in providers]
    parts = [
        {"name": f"q{n}", "search": {"query": query, "providers": chosen, "no_cache": True}}
        for n, (query, chosen) in enumerate(asked)
    ]
    tools = tools_from_data(
        [{"name": "man_pages", "description": "three questions at once", "parts": parts}], "bench"
    )
    sleuth.tools = ToolBook(tools)
    toolbox = ToolBox(sleuth)
    await toolbox.call("man_pages", {})  # warm: the segmenter, the index's files
    together, apart = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        answer = await toolbox.call("man_pages", {})
        together.append(time.perf_counter() - started)
        started = time.perf_counter()
        for query, chosen in asked:
            await sleuth.search({"query": query, "providers": chosen, "no_cache": True})
        apart.append(time.perf_counter() - started)
    together.sort()
    apart.sort()
    mid = repeat // 2
    print(
        f"composite of 3 parts ({label}): median {together[mid] * 1000:.0f} ms at once, "
        f"{apart[mid] * 1000:.0f} ms one after another ({repeat} runs); "
        f"overall confidence {getattr(answer, 'confidence', None)}"
    )


FAKEBACK = Path(__file__).resolve().parents[2] / "shared" / "tools" / "fakeback.py"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def web_composite(repeat: int, delay_ms: int) -> None:
    port = _free_port()
    server = subprocess.Popen(  # noqa: S603 - our interpreter, a shared tool, a port
        [sys.executable, str(FAKEBACK), str(port), str(delay_ms)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await asyncio.sleep(0.05)
        base = f"http://127.0.0.1:{port}"
        for name in ("BRAVE_API_KEY", "TAVILY_API_KEY", "EXA_API_KEY"):
            os.environ.setdefault(name, "bench-key")
        settings = Settings(
            providers={
                "brave": {"base_url": f"{base}/res/v1/web/search"},
                "tavily": {"base_url": f"{base}/search"},
                "exa": {"base_url": f"{base}/exa/search"},
            },
            egress={"allow_private": ["127.0.0.1"]},
            cache={"enabled": False},
            store={"backend": "memory"},
            observe={"log_to": "off"},
        )
        async with Sleuth(settings, store=MemoryStore()) as sleuth:
            await composite(sleuth, repeat, ["brave", "tavily", "exa"], f"web, {delay_ms} ms each")
    finally:
        server.terminate()
        server.wait(timeout=10)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=KB_CORPUS)
    parser.add_argument("--limit", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--delay-ms", type=int, default=150)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        db = folder / "kb.sqlite"
        started = time.perf_counter()
        report = index_folder(db, args.corpus / "zh", workers=None)
        print(f"indexed {report.files} files in {time.perf_counter() - started:.1f} s")
        settings = Settings(kb={"path": db}, store={"backend": "memory"}, observe={"log_to": "off"})
        async with Sleuth(settings, store=MemoryStore()) as sleuth:
            await steward(sleuth, folder, args.limit)
            await composite(sleuth, args.repeat)
    await web_composite(args.repeat, args.delay_ms)


if __name__ == "__main__":
    asyncio.run(main())
