"""Other clients under hostile ones: how long a well-behaved search takes while slow
connections and 200 MB bodies press on a real `sleuth serve` (issue 16).

One `sleuth serve` process on 127.0.0.1 with its default `serve.limits` (256 KiB
bodies, 10 s for headers, 15 s for bodies, 4,096 connections) and the web cassette
replayed, the response cache on (an agent repeating a question). A probe client sends
one search at a time, each on a new connection (so each must get past the connection
cap), for `--seconds` per scenario:

    quiet        the probe alone
    slowloris    `--slow` connections (10,000 by default) each send a request line and
                 then one header byte every 2 s, reconnecting when the server closes them
    200 MB body  `--uploaders` clients each POST a declared 200 MB body to /v1/search,
                 as fast as they can, again and again; as many more stream 200 MB
                 chunked (no length)

It prints the probe's p50, p95 and worst latency and its failures per scenario, what
the hostile clients got back (status counts), and the server's CPU time: per second,
and per slow connection it refused (µs; the probe's searches taken out at what each
cost in the quiet scenario). A
new connection waits in the kernel's accept queue behind the slow clients'
reconnections, so what each of those costs the server is what it waits. The hostile
clients run in a process of their own, on the same cores as the server, so their
CPU cost is in the latencies too.

    python bench/wire_limits.py [--slow 10000] [--uploaders 4] [--seconds 15]
                                [--max-connections N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

from _common import CASSETTE, CHAIN, HOST, REQUEST, percentile, process_cpu_seconds, serving

MB200 = 200 * 1024 * 1024
#: What the wire protocol answers a slow connection with (slow headers, the cap).
_WIRE_REFUSALS = ("408", "503")
BLOCK = b"x" * 65536


def write_config(folder: Path, max_connections: int | None) -> Path:
    config = folder / "sleuth.yaml"
    serve = ""
    if max_connections is not None:
        serve = f"serve: {{limits: {{max_connections: {max_connections}}}}}\n"
    config.write_text(
        f"chain: [{', '.join(CHAIN)}]\n"
        "providers: {google: {options: {cx: replayed}}}\n"
        f"store: {{backend: sqlite, path: '{folder / 'state.sqlite'}'}}\n"
        "observe: {log_to: 'off'}\n" + serve,
        encoding="utf-8",
    )
    return config


async def probe(base: str, seconds: float) -> tuple[dict[str, list[float]], Counter[str]]:
    """Searches one at a time, alternately on a fresh connection and on one kept alive:
    latencies (ms) of each, and failures."""
    latencies: dict[str, list[float]] = {"new": [], "kept": []}
    failures: Counter[str] = Counter()
    fresh = httpx.Limits(max_keepalive_connections=0)
    async with (
        httpx.AsyncClient(base_url=base, timeout=10, limits=fresh) as new,
        httpx.AsyncClient(base_url=base, timeout=10) as kept,
    ):
        await kept.get("/healthz")  # connected before the probe starts
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for name, client in (("new", new), ("kept", kept)):
                started = time.perf_counter()
                try:
                    answer = await client.post("/v1/search", json=REQUEST)
                except httpx.HTTPError as exc:
                    failures[f"{name}: {type(exc).__name__}"] += 1
                    continue
                if answer.status_code != 200:
                    failures[f"{name}: HTTP {answer.status_code}"] += 1
                    continue
                latencies[name].append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(0.02)
    return latencies, failures


async def status_of(reader: asyncio.StreamReader) -> str:
    line = await reader.readline()
    parts = line.split()
    return parts[1].decode() if len(parts) > 1 else "closed"


async def slow_client(port: int, stop: asyncio.Event, seen: Counter[str]) -> None:
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(HOST, port)
        except OSError as exc:
            seen[type(exc).__name__] += 1
            await asyncio.sleep(1)
            continue
        answered = asyncio.ensure_future(status_of(reader))
        try:
            writer.write(b"POST /v1/search HTTP/1.1\r\nHost: sleuth\r\nX-Slow: ")
            while not stop.is_set() and not answered.done():
                await asyncio.wait({answered}, timeout=2)
                if not answered.done():
                    writer.write(b"a")
                    await writer.drain()
            if answered.done():
                seen[answered.result()] += 1
        except OSError as exc:
            seen[type(exc).__name__] += 1
        finally:
            answered.cancel()
            writer.close()


async def uploader(port: int, stop: asyncio.Event, seen: Counter[str], chunked: bool) -> None:
    head = b"POST /v1/search HTTP/1.1\r\nHost: sleuth\r\nContent-Type: application/json\r\n"
    length = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: %d" % MB200
    head += length + b"\r\n\r\n"
    block = b"%x\r\n%s\r\n" % (len(BLOCK), BLOCK) if chunked else BLOCK
    while not stop.is_set():
        reader, writer = await asyncio.open_connection(HOST, port)
        answered = asyncio.ensure_future(status_of(reader))
        sent = 0
        try:
            writer.write(head)
            while sent < MB200 and not answered.done() and not stop.is_set():
                writer.write(block)
                await writer.drain()
                sent += len(BLOCK)
            seen[await asyncio.wait_for(answered, 10)] += 1
        except (OSError, TimeoutError) as exc:
            # The server answered and closed while the body was still going out.
            seen["reset" if isinstance(exc, ConnectionResetError) else type(exc).__name__] += 1
        finally:
            seen["MB sent"] += sent // (1024 * 1024)
            answered.cancel()
            writer.close()
        await asyncio.sleep(0.1)  # a body at a time, not a connection flood


def attack(kind: str, port: int, count: int, seconds: float) -> subprocess.Popen[str]:
    """The hostile clients, in a process of their own: their event loop's lag must not
    count in the probe's latencies. They stop after `seconds` and print what they got."""
    command = [sys.executable, __file__, "--attack", kind, "--port", str(port)]
    command += ["--count", str(count), "--seconds", str(seconds)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)  # noqa: S603


async def attackers(kind: str, port: int, count: int, seconds: float) -> Counter[str]:
    stop = asyncio.Event()
    seen: Counter[str] = Counter()
    if kind == "slowloris":
        clients = [slow_client(port, stop, seen) for _ in range(count)]
    else:
        clients = [
            uploader(port, stop, seen, chunked) for chunked in (False, True) for _ in range(count)
        ]
    running = [asyncio.ensure_future(client) for client in clients]
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.wait(running, timeout=30)
    for task in running:
        task.cancel()
    return seen


def scenario(
    base: str, pid: int, seconds: float, kind: str | None, count: int
) -> tuple[dict[str, list[float]], Counter[str], Counter[str], float]:
    """The probe's latencies and failures, what the hostile clients got, and the
    server's CPU seconds over the whole scenario."""
    started = process_cpu_seconds(pid)
    if kind is None:
        latencies, failures = asyncio.run(probe(base, seconds))
        return latencies, failures, Counter(), process_cpu_seconds(pid) - started
    port = int(base.rsplit(":", 1)[1])
    hostile = attack(kind, port, count, seconds + 3)
    time.sleep(3)  # the pressure builds before the probe starts
    latencies, failures = asyncio.run(probe(base, seconds))
    out, _ = hostile.communicate(timeout=120)
    cpu = process_cpu_seconds(pid) - started
    return latencies, failures, Counter(json.loads(out or "{}")), cpu


def report(
    name: str,
    seconds: float,
    latencies: dict[str, list[float]],
    failures: Counter[str],
    seen: Counter[str],
    cpu: float,
    per_search: float,
) -> None:
    """One line of figures; `per_search` is the server's CPU seconds per probe search."""
    refused = sum(seen.get(status, 0) for status in _WIRE_REFUSALS)
    searches = sum(len(values) for values in latencies.values())
    hostile_cpu = cpu - per_search * searches
    per_connection = f"{hostile_cpu / refused * 1e6:.0f}" if refused else "-"
    figures = [f"{cpu / seconds:>5.2f} {per_connection:>6}"]
    for values in latencies.values():
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        worst = max(values, default=float("nan"))
        figures.append(f"{len(values):>5} {p50:>6.1f} {p95:>6.1f} {worst:>7.1f}")
    print(f"{name:<18} {'   '.join(figures)}   {dict(failures) or '-'}   {dict(seen) or '-'}")


def raise_open_files(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < min(hard, wanted):
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, wanted), hard))


def main(slow: int, uploaders: int, seconds: float, max_connections: int | None) -> None:
    raise_open_files(slow + 1000)  # inherited by the server and the attackers
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_config(folder, max_connections)
        print(f"serve.limits.max_connections: {max_connections or 'default (4096)'}")
        with serving(config, folder / "serve.log", "--replay", str(CASSETTE)) as (base, pid):
            httpx.post(f"{base}/v1/search", json=REQUEST, timeout=30)  # fills the cache
            print(f"probe: POST /v1/search one at a time, {seconds:g}s per scenario")
            print(
                f"{'':<18} {'server CPU':^12}   {'new connection each time':^26}   "
                f"{'kept-alive connection':^26}"
            )
            columns = f"{'n':>5} {'p50':>6} {'p95':>6} {'max':>7}"
            print(
                f"{'scenario (ms)':<18} {'s/s':>5} {'µs/conn':>6}   {columns}   {columns}   "
                "probe failures   hostile got"
            )
            per_search = 0.0
            for name, kind, count in (
                ("quiet", None, 0),
                (f"slowloris {slow}", "slowloris", slow),
                (f"200 MB body x{2 * uploaders}", "upload", uploaders),
            ):
                latencies, failures, seen, cpu = scenario(base, pid, seconds, kind, count)
                if kind is None:
                    per_search = cpu / max(1, sum(len(values) for values in latencies.values()))
                # The scenario runs 3 s of pressure before the probe's `seconds`.
                length = seconds + (3 if kind else 0)
                report(name, length, latencies, failures, seen, cpu, per_search)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow", type=int, default=10_000)
    parser.add_argument("--uploaders", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--max-connections", type=int, help="serve.limits.max_connections")
    parser.add_argument("--attack", choices=["slowloris", "upload"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attack:
        print(json.dumps(asyncio.run(attackers(args.attack, args.port, args.count, args.seconds))))
    else:
        main(args.slow, args.uploaders, args.seconds, args.max_connections)
