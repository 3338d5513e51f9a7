"""sleuth beside SearXNG on the same loopback back ends, in one run: CPU per search,
requests per second, tail latency and added latency, as ratios.

The recipe of ../shared/tools/side-by-side/README.md, end to end:

- one fake back end (`fakeback.py PORT 50`: three "engines" of 10 results each, 50 ms
  a call, overlapping pages with URL variants), which sleuth reaches as Brave, Tavily
  and Exa and SearXNG as three `json_engine` engines;
- `sleuth serve` with the cache off and quota pools the back end never fills (it
  has no rate limit), and SearXNG under granian as its container runs it, one
  process each; then both with `--processes` processes;
- `wrk` with the side-by-side `load.lua` (a new query on every request) at c=1, 16
  and 64, the two servers taking turns at each level;
- CPU per search: utime + stime of the server's process tree (/proc) over the c=16
  level, divided by the requests answered;
- where the time of sleuth's event loop went at c=16, one process: its thread's
  share of the wall time running, runnable but waiting for a core (the machine is
  shared), and blocked (the loop idle: nothing to run until a socket or timer fires),
  from /proc/PID/task/PID/schedstat. A loop that is neither running nor waiting for
  a core had no work: the searches in flight all waited on their back ends, or on
  the admission gate.

    python bench/vs_searxng.py [--searxng DIR] [--searxng-python PY] [--seconds 15]
                               [--processes 2] [--only sleuth]

SearXNG is not part of sleuth: clone its source outside the project and give it a
virtual environment with its requirements.txt and requirements-server.txt (which
bring granian), then pass `--searxng` and `--searxng-python` (or set SEARXNG_DIR and
SEARXNG_PYTHON). Without it the bench measures sleuth alone and says so. Needs `wrk`
(the Debian package). The machine is shared: read the ratios, and the load printed
beside them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from _common import HOST, ROOT, free_port, process_cpu_seconds, serving, stop

TOOLS = ROOT.parent / "shared" / "tools"
BACKEND_DELAY_MS = 50
EXPECTED_RESULTS = 20  # sleuth asks for 20; SearXNG shows its 23 merged pages
KEY_ENV = {"VS_SEARXNG_DUMMY_KEY": "dummy"}  # the fake back end ignores keys


@dataclass
class Level:
    rps: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    non200: int
    short: int
    requests: int
    cpu_ms: float  # per answered request, the server's process tree
    # Shares of the wall time of the server's main thread (the event loop of one
    # sleuth process): running, waiting for a core, blocked (idle).
    loop_shares: tuple[float, float, float]


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of `pid` and every live descendant (the workers of a supervisor)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        total += process_cpu_seconds(current)
        todo += children.get(current, [])
    return total


def thread_schedstat(pid: int) -> tuple[float, float]:
    """Seconds the main thread of `pid` ran and waited runnable for a core (Linux
    schedstat); NaN where it cannot be read."""
    try:
        ran, waited = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[:2]
    except (OSError, ValueError):
        return math.nan, math.nan
    return int(ran) / 1e9, int(waited) / 1e9


def wrk(base: str, mode: str, clients: int, seconds: float, prefix: str, pid: int) -> Level:
    script = TOOLS / "side-by-side" / "load.lua"
    command = ["wrk", "-t1", f"-c{clients}", f"-d{seconds:g}s", "--timeout", "10s"]
    command += ["-s", str(script), base, "--", mode, prefix, str(EXPECTED_RESULTS)]
    before, (ran, waited), began = tree_cpu_seconds(pid), thread_schedstat(pid), time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=True)  # noqa: S603
    spent = tree_cpu_seconds(pid) - before
    wall = time.monotonic() - began
    ran_after, waited_after = thread_schedstat(pid)
    running, waiting = (ran_after - ran) / wall, (waited_after - waited) / wall
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        raise SystemExit(f"wrk printed no RESULT line:\n{done.stdout}\n{done.stderr}")
    result = json.loads(line.removeprefix("RESULT "))
    answered = max(1, result["requests"])
    return Level(
        rps=result["rps"],
        p50_ms=result["p50_ms"],
        p95_ms=result["p95_ms"],
        p99_ms=result["p99_ms"],
        non200=result["non200"] + result["err_timeout"] + result["err_read"],
        short=result["short"] + result["empty"],
        requests=result["requests"],
        cpu_ms=1000 * spent / answered,
        loop_shares=(running, waiting, 1 - running - waiting),
    )


@contextmanager
def fake_backend(port: int, log: Path) -> Iterator[None]:
    script = TOOLS / "fakeback.py"
    with log.open("ab") as out:
        process = subprocess.Popen(  # noqa: S603
            [sys.executable, str(script), str(port), str(BACKEND_DELAY_MS)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(f"http://{HOST}:{port}/stats", process, log)
        yield
    finally:
        stop([process], timeout_s=5)


def wait_for(url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise SystemExit(f"{url} did not come up:\n{tail}")
        time.sleep(0.2)


def sleuth_config(folder: Path, backend_port: int) -> Path:
    paths = {"brave": "/res/v1/web/search", "tavily": "/search", "exa": "/exa/search"}
    providers = ", ".join(
        f"{name}: {{base_url: 'http://{HOST}:{backend_port}{path}', "
        "api_key_env: VS_SEARXNG_DUMMY_KEY}"
        for name, path in paths.items()
    )
    config = folder / "sleuth.yaml"
    config.write_text(
        f"chain: [{', '.join(paths)}]\n"
        f"providers: {{{providers}}}\n"
        f"store: {{backend: sqlite, path: '{folder / 'state.sqlite'}'}}\n"
        f"kb: {{path: '{folder / 'kb.sqlite'}'}}\n"
        "cache: {enabled: false}\n"
        # The fake back end has no rate limit (SearXNG applies none either): its pools
        # get one it never reaches. The default pools (50 calls/s sustained, 100 at
        # peak) would cap any level at about 100 searches/s, one call a provider each.
        "quota: {default: {rate_per_s: 10000, burst_per_s: 10000}}\n"
        f"egress: {{allow_private: ['{HOST}']}}\n",
        encoding="utf-8",
    )
    return config


@contextmanager
def searxng(
    source: Path, python: Path, backend_port: int, processes: int, folder: Path
) -> Iterator[tuple[str, int]]:
    template = TOOLS / "side-by-side" / "searxng-settings.yml"
    settings = folder / f"searxng-{processes}.yml"
    settings.write_text(
        template.read_text(encoding="utf-8").replace("FAKEBACK_PORT", str(backend_port)),
        encoding="utf-8",
    )
    port = free_port()
    log = folder / f"searxng-{processes}.log"
    env = {
        **os.environ,
        "SEARXNG_SETTINGS_PATH": str(settings),
        "GRANIAN_INTERFACE": "wsgi",
        "GRANIAN_BLOCKING_THREADS": "4",
    }
    command = [str(python), "-m", "granian", "--workers", str(processes)]
    command += ["--host", HOST, "--port", str(port), "searx.webapp:app"]
    with log.open("wb") as out:
        process = subprocess.Popen(  # noqa: S603
            command, cwd=source, stdout=out, stderr=subprocess.STDOUT, env=env
        )
    try:
        wait_for(f"http://{HOST}:{port}/healthz", process, log)
        yield f"http://{HOST}:{port}", process.pid
    finally:
        stop([process])


def ratio(a: float, b: float) -> str:
    return f"{a / b:5.2f}" if b else "  n/a"


def row(name: str, sx: float | None, sl: float, unit: str) -> None:
    theirs = f"{sx:10.1f}" if sx is not None else "         -"
    shown = ratio(sl, sx) if sx is not None else "  n/a"
    print(f"{name:34} {theirs} {sl:10.1f}  {shown}   {unit}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--searxng", type=Path, default=os.environ.get("SEARXNG_DIR"))
    parser.add_argument("--searxng-python", type=Path, default=os.environ.get("SEARXNG_PYTHON"))
    parser.add_argument("--seconds", type=float, default=15.0, help="per level and server")
    parser.add_argument("--processes", type=int, default=2, help="for the multi-process row")
    parser.add_argument("--only", choices=["sleuth"], help="measure sleuth alone")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    if not (TOOLS / "fakeback.py").exists():
        raise SystemExit(f"the side-by-side tools are not at {TOOLS}")
    with_searxng = args.only is None and args.searxng and args.searxng_python
    if not with_searxng:
        print(
            "SearXNG not given (--searxng DIR --searxng-python PY, or SEARXNG_DIR and "
            "SEARXNG_PYTHON): measuring sleuth alone. To compare, clone SearXNG's source "
            "outside the project and make a virtual environment with its requirements.txt "
            "and requirements-server.txt."
        )
    os.environ.update(KEY_ENV)
    seconds = args.seconds
    results: dict[tuple[str, str], Level] = {}
    with tempfile.TemporaryDirectory(prefix="sleuth-vs-searxng-") as tmp, ExitStack() as stack:
        folder = Path(tmp)
        backend_port = free_port()
        stack.enter_context(fake_backend(backend_port, folder / "fakeback.log"))
        config = sleuth_config(folder, backend_port)

        def servers(processes: int) -> dict[str, tuple[str, int]]:
            log = folder / f"sleuth-{processes}.log"
            found = {
                "sleuth": stack.enter_context(serving(config, log, "--processes", str(processes)))
            }
            if with_searxng:
                found["searxng"] = stack.enter_context(
                    searxng(args.searxng, args.searxng_python, backend_port, processes, folder)
                )
            return found

        single = servers(1)
        for name, (base, pid) in single.items():  # warm up: imports, pools, every worker
            wrk(base, name, 16, 5, f"warm-{name}", pid)
        for clients in (1, 16, 64):
            for name, (base, pid) in single.items():
                results[(name, f"c{clients}")] = wrk(
                    base, name, clients, seconds, f"{name}-c{clients}", pid
                )
        stack.close()
        backend_port = free_port()
        stack.enter_context(fake_backend(backend_port, folder / "fakeback2.log"))
        config = sleuth_config(folder, backend_port)
        many = servers(args.processes)
        for name, (base, pid) in many.items():
            wrk(base, name, 16, 5, f"warm-{name}-n", pid)
            results[(name, "multi")] = wrk(base, name, 16, seconds, f"{name}-multi", pid)

    load = os.getloadavg()
    print(
        f"\nsleuth beside SearXNG: 3 engines x 10 results at {BACKEND_DELAY_MS} ms, "
        f"{seconds:g} s a level, load average {load[0]:.2f} {load[1]:.2f} at the end, "
        f"{os.cpu_count()} cores"
    )
    print(f"{'':34} {'SearXNG':>10} {'sleuth':>10}  ratio")

    def pair(level: str, figure: str) -> tuple[float | None, float]:
        theirs = results.get(("searxng", level))
        return (getattr(theirs, figure) if theirs else None), getattr(
            results[("sleuth", level)], figure
        )

    n = args.processes
    row("CPU per search (c=16)", *pair("c16", "cpu_ms"), "ms")
    row("req/s at c=16, 1 process", *pair("c16", "rps"), "req/s")
    row("p99 at c=64, 1 process", *pair("c64", "p99_ms"), "ms")
    row(f"req/s at c=16, {n} processes", *pair("multi", "rps"), "req/s")
    (one_sx, one_sl), (many_sx, many_sl) = pair("c16", "rps"), pair("multi", "rps")
    scaling_sx = many_sx / one_sx if many_sx and one_sx else None
    row(f"  {n} processes / 1", scaling_sx, many_sl / one_sl, "x")
    for q in ("p50", "p95"):
        theirs, ours = pair("c1", f"{q}_ms")
        added_sx = theirs - BACKEND_DELAY_MS if theirs is not None else None
        row(f"added latency at c=1, {q}", added_sx, ours - BACKEND_DELAY_MS, "ms")
    shares = results[("sleuth", "c16")].loop_shares
    print(
        "\nsleuth's event loop at c=16, 1 process, share of the wall time: running "
        f"{shares[0]:.2f}, waiting for a core {shares[1]:.2f}, idle {shares[2]:.2f}"
    )
    print("\nper level: answered, failed (non-200 or timed out), short of 20 results")
    for (name, level), found in sorted(results.items()):
        print(f"  {name:8} {level:6} {found.requests:6} {found.non200:5} {found.short:5}")


if __name__ == "__main__":
    main()
