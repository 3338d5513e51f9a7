"""CPU per request of the HTTP layer alone: what chose the ASGI server and measured
the lean search route (docs/deploy.md, The HTTP server in each process).

The service's app (`create_app`), its core answering every search with one response
computed at start (a real search of the replayed web cassette), so
that what the server process spends is the server, the middleware, the route, reading
the body and writing the JSON, and nothing of the pipeline. wrk (the Debian package)
with the side-by-side `load.lua` sends a new query on each request over
`--connections` kept-alive connections; CPU per request is the server's utime +
stime (/proc) over the run, divided by the requests answered. The servers take turns,
`--rounds` times, because the machine is shared: read the spread, and the load.

- `uvicorn`: as `sleuth serve` runs it (httptools with sleuth's wire limits, uvloop);
- `uvicorn-framework`: the same with every search through FastAPI's route, as before
  the lean one (`sleuth.api.http_search`);
- `granian`: granian's ASGI interface with uvloop on its single-threaded runtime (its
  default multi-threaded one cost more), when granian is installed (not a sleuth
  dependency: `pip install granian` to compare).

    python bench/http_layer.py [--seconds 8] [--connections 16] [--rounds 3]
                               [--servers uvicorn-framework,uvicorn,granian]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from _common import CASSETTE, CHAIN, HOST, ROOT, free_port, process_cpu_seconds, ready, stop

LOAD = ROOT.parent / "shared" / "tools" / "side-by-side" / "load.lua"
CANNED_ENV = "SLEUTH_BENCH_CANNED"
ROUTE_ENV = "SLEUTH_BENCH_ROUTE"


def settings_for(folder: Path) -> Any:
    from sleuth.config import Settings

    return Settings(
        chain=CHAIN,
        providers={"google": {"options": {"cx": "replayed"}}},
        replay=CASSETTE,
        store={"backend": "sqlite", "path": folder / "state.sqlite"},
        cache={"enabled": False},
    )


async def canned_response(folder: Path) -> str:
    from sleuth.gateway import Sleuth

    async with Sleuth(settings_for(folder)) as core:
        answer = await core.search(
            {"query": "what's new in python 3.13", "max_results": 20, "include": ["url"]}
        )
    return answer.model_dump_json()


def app() -> Any:
    """The service's app over a core that answers every search with the canned one
    (in the server process: $SLEUTH_BENCH_CANNED names its file)."""
    from sleuth.api.http import create_app
    from sleuth.api.http_search import LeanSearch
    from sleuth.contract import SearchResponse
    from sleuth.gateway import Sleuth

    canned_file = Path(os.environ[CANNED_ENV])
    canned = SearchResponse.model_validate_json(canned_file.read_text())
    core = Sleuth(settings_for(canned_file.parent))

    async def search(request: Any, **_: Any) -> SearchResponse:
        return canned

    core.search = search  # type: ignore[method-assign]
    served = create_app(core.settings, sleuth=core, bound_host=HOST)
    if os.environ.get(ROUTE_ENV) == "framework":
        # FastAPI's own route for every search, as before the lean one existed.
        served.user_middleware = [m for m in served.user_middleware if m.cls is not LeanSearch]
    return served


def serve_uvicorn(port: int) -> None:
    """As `sleuth serve` runs uvicorn: httptools with the wire limits, uvloop."""
    import uvicorn

    from sleuth.api.wire_protocol import limited_protocol

    served = app()
    limits = settings_for(Path(os.environ[CANNED_ENV]).parent).serve.limits
    uvicorn.run(
        served,
        host=HOST,
        port=port,
        log_level="warning",
        access_log=False,
        http=limited_protocol(limits),
        loop="uvloop",
        timeout_keep_alive=limits.keep_alive_s,
    )


def server_command(server: str, port: int) -> list[str]:
    if server.startswith("uvicorn"):
        return [sys.executable, __file__, "--serve-uvicorn", str(port)]
    return [
        sys.executable,
        "-m",
        "granian",
        "--interface",
        "asgi",
        "--loop",
        "uvloop",
        "--runtime-mode",
        "st",
        "--no-ws",
        "--log-level",
        "warning",
        "--host",
        HOST,
        "--port",
        str(port),
        "--working-dir",
        str(Path(__file__).parent),
        "--factory",
        "http_layer:app",
    ]


@contextmanager
def running(server: str, canned: Path) -> Iterator[tuple[str, int]]:
    port = free_port()
    base = f"http://{HOST}:{port}"
    log = canned.parent / f"{server}.log"
    route = "framework" if server.endswith("-framework") else "lean"
    env = {**os.environ, CANNED_ENV: str(canned), ROUTE_ENV: route}
    with log.open("wb") as out:
        process = subprocess.Popen(  # noqa: S603
            server_command(server, port), stdout=out, stderr=subprocess.STDOUT, env=env
        )
    try:
        deadline = time.monotonic() + 60
        while not ready(base):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{server} did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield base, process.pid
    finally:
        stop([process])


def tree_cpu_seconds(pid: int) -> float:
    """The process and its children (granian's workers)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    kids = children.read_text().split() if children.exists() else []
    return process_cpu_seconds(pid) + sum(process_cpu_seconds(int(kid)) for kid in kids)


def load(base: str, pid: int, connections: int, seconds: float) -> tuple[float, float, int]:
    """(CPU ms per request, requests/s, non-200 answers) of one wrk run."""
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "-s", str(LOAD), base]
    warm = [*command[:3], "-d2s", *command[4:], "--", "sleuth", "warm", "1"]
    subprocess.run(warm, capture_output=True, check=True)  # noqa: S603
    before = tree_cpu_seconds(pid)
    done = subprocess.run(  # noqa: S603
        [*command, "--", "sleuth", "run", "1"], capture_output=True, text=True, check=True
    )
    spent = tree_cpu_seconds(pid) - before
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    result = json.loads(line.removeprefix("RESULT "))
    answered = max(1, result["requests"])
    return 1000 * spent / answered, result["rps"], result["non200"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--servers", default="uvicorn-framework,uvicorn,granian")
    parser.add_argument("--serve-uvicorn", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_uvicorn:
        serve_uvicorn(args.serve_uvicorn)
        return
    if shutil.which("wrk") is None or not LOAD.exists():
        raise SystemExit(f"needs wrk (apt-get install wrk) and {LOAD}")
    servers = [name for name in args.servers.split(",") if name]
    if "granian" in servers and find_spec("granian") is None:
        print("granian is not installed: measuring uvicorn alone (pip install granian)")
        servers.remove("granian")
    figures: dict[str, list[tuple[float, float, int]]] = {name: [] for name in servers}
    with tempfile.TemporaryDirectory(prefix="sleuth-http-layer-") as tmp:
        canned = Path(tmp) / "canned.json"
        canned.write_text(asyncio.run(canned_response(Path(tmp))))
        for _ in range(args.rounds):
            for server in servers:
                with running(server, canned) as (base, pid):
                    figures[server].append(load(base, pid, args.connections, args.seconds))
    load_avg = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"HTTP layer alone, {args.connections} connections, {args.seconds:g} s a run, "
        f"{args.rounds} rounds; load average {load_avg} at the end, {os.cpu_count()} cores"
    )
    print(f"{'server':18} {'CPU ms/request (each round)':34} {'median':>7} {'req/s':>8} non-200")
    for server, rows in figures.items():
        cpu = [row[0] for row in rows]
        each = " ".join(f"{x:.3f}" for x in cpu)
        rps = statistics.median(row[1] for row in rows)
        print(
            f"{server:18} {each:34} {statistics.median(cpu):7.3f} {rps:8.0f} "
            f"{sum(r[2] for r in rows)}"
        )


if __name__ == "__main__":
    main()
