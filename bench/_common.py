"""What the benches that start servers or report latencies share: the replayed web
search they send (`REQUEST` to the six web back ends of `CHAIN`, answered from
`CASSETTE`), a free port on the loopback address, the nearest-rank percentile, CPU
time read from /proc, and waiting for a started `sleuth serve` to answer /readyz,
then stopping it.

A helper module, not a bench. Benches import it as `_common` (Python puts bench/
first on the module path when it runs `python bench/X.py`).
"""

from __future__ import annotations

import math
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

__all__ = [
    "CASSETTE",
    "CHAIN",
    "HOST",
    "REQUEST",
    "ROOT",
    "free_port",
    "machine_busy_seconds",
    "percentile",
    "process_cpu_seconds",
    "ready",
    "search",
    "serving",
    "stop",
    "wait_ready",
]

HOST = "127.0.0.1"  # the only address the benches ever connect to
ROOT = Path(__file__).resolve().parents[1]
# Where ../shared/bench-data/kb-dev/make_corpus.sh is asked to lay out the development
# corpus: beside the checkout, as ../shared is.
KB_CORPUS = ROOT.parent / "kb_corpus"
# One web search, replayed: every web back end answers it from the recorded cassette.
CASSETTE = ROOT / "tests" / "data" / "web.jsonl"
CHAIN = ["brave", "google", "serpapi", "tavily", "exa", "duckduckgo"]
REQUEST = {"query": "what's new in python 3.13", "include": ["url"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def percentile(values: list[float], q: float) -> float:
    """Nearest rank, as `sleuth.resilience.hedge.LatencyTracker` computes it; NaN when
    there are no values."""
    ordered = sorted(values) or [math.nan]
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def process_cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process (Linux /proc); NaN where it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return math.nan
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def machine_busy_seconds() -> float:
    """CPU time every core spent busy (Linux /proc/stat), whoever used it; NaN without
    /proc."""
    try:
        line = Path("/proc/stat").read_text().split("\n", 1)[0]
    except OSError:
        return math.nan
    fields = [int(n) for n in line.split()[1:9]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK")


def ready(base: str) -> bool:
    try:
        return httpx.get(f"{base}/readyz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def wait_ready(base: str, process: subprocess.Popen[bytes], deadline: float, log: Path) -> None:
    """Return once `base` answers /readyz; exit the bench with the end of the server's
    `log` (its folder is usually temporary) when the server exits first or `deadline`
    (time.monotonic) passes."""
    while not ready(base):
        if process.poll() is not None:
            why = f"exited with {process.returncode}"
        elif time.monotonic() > deadline:
            why = "was not ready in time"
        else:
            time.sleep(0.1)
            continue
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        raise SystemExit(f"the server at {base} {why}:\n{text[-2000:]}")


@contextmanager
def serving(
    config: Path, log: Path, *args: str, env: Mapping[str, str] | None = None
) -> Iterator[tuple[str, int]]:
    """`sleuth serve --config CONFIG ARGS...` (one process unless ARGS say
    `--processes`), its output in `log`, until /readyz answers: (its base URL, its
    pid); stopped with SIGTERM after."""
    port = free_port()
    base = f"http://{HOST}:{port}"
    command = [str(Path(sys.executable).with_name("sleuth")), "serve", "--host", HOST]
    command += ["--port", str(port), "--config", str(config), *args]
    if "--processes" not in args:
        command += ["--processes", "1"]  # the benches measure one process unless told
    with log.open("wb") as out:
        server = subprocess.Popen(  # noqa: S603
            command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )
    try:
        wait_ready(base, server, time.monotonic() + 60, log)
        yield base, server.pid
    finally:
        stop([server])


def stop(processes: list[subprocess.Popen[bytes]], timeout_s: float = 30) -> None:
    """SIGTERM to each (a graceful stop), then wait; kill one that outlives `timeout_s`."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def search(
    client: httpx.AsyncClient, request: dict[str, Any], failures: Counter[str]
) -> tuple[float, dict[str, Any]] | None:
    """POST /v1/search: (milliseconds to the answer, its body), or None once the failure
    is counted in `failures` by kind (the exception's class, or the status and text)."""
    started = time.perf_counter()
    try:
        answer = await client.post("/v1/search", json=request)
    except httpx.HTTPError as exc:
        failures[type(exc).__name__] += 1
        return None
    elapsed_ms = (time.perf_counter() - started) * 1000
    if answer.status_code != 200:
        failures[f"HTTP {answer.status_code} {answer.text[:80]}"] += 1
        return None
    body: dict[str, Any] = answer.json()
    return elapsed_ms, body
