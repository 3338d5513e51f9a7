"""How long `sleuth serve --processes N` takes until every worker answers, and the CPU
its processes spent getting there: wall time from the command's start until /readyz
answers and N sockets listen on the port (a worker listens only once its app has
started, `sleuth.api.cli_serve._listen_beside`), and the user plus system CPU time of
the supervisor and its children at that moment; medians over alternating runs.

Each `--src` is a checkout's `src` folder (this one by default), so two trees are
compared in one run, alternating A B B A ...; bytecode is cached as in bench/cli_start.py.
The store is SQLite in a temporary folder (the processes share it), the knowledge base
empty.

    python bench/serve_start.py [--runs 5] [--processes 2] [--src ../main/src --src src]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common

CLI = "from sleuth.api.cli import main; main()"


def listening_sockets(port: int) -> int:
    """Sockets in LISTEN on `port` (Linux /proc/net/tcp and tcp6)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                count += 1
    return count


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of `pid` and its descendants still running."""
    total = _common.process_cpu_seconds(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return total
    return total + sum(tree_cpu_seconds(int(child)) for child in children)


def once(src: Path, processes: int, config: Path, env: dict[str, str]) -> tuple[float, float]:
    """(seconds until ready, CPU seconds spent by then) of one `sleuth serve`."""
    port = _common.free_port()
    base = f"http://{_common.HOST}:{port}"
    command = [sys.executable, "-c", CLI, "serve", "--host", _common.HOST, "--port", str(port)]
    command += ["--config", str(config), "--processes", str(processes)]
    started = time.perf_counter()
    server = subprocess.Popen(  # noqa: S603 - our own interpreter and code
        command,
        env={**env, "PYTHONPATH": str(src)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while listening_sockets(port) < processes or not _common.ready(base):
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"sleuth serve from {src} did not get ready")
            time.sleep(0.02)
        taken = time.perf_counter() - started
        return taken, tree_cpu_seconds(server.pid)
    finally:
        _common.stop([server])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="Runs per tree.")
    parser.add_argument("--processes", type=int, default=2, help="`serve --processes`.")
    parser.add_argument("--src", type=Path, action="append", help="A checkout's src folder.")
    options = parser.parse_args()
    trees = options.src or [_common.ROOT / "src"]
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "sleuth.yaml"
        config.write_text(
            f"store: {{backend: sqlite, path: {Path(folder) / 'state.sqlite'}}}\n"
            f"kb: {{path: {Path(folder) / 'kb.sqlite'}}}\n"
            "serve: {shutdown_grace_s: 0}\n",
            encoding="utf-8",
        )
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pycache")
        print(f"load {os.getloadavg()[0]:.2f}; {options.runs} runs per tree")
        for tree in trees:
            once(tree, options.processes, config, env)  # writes the bytecode; not counted
        walls: dict[Path, list[float]] = {tree: [] for tree in trees}
        cpus: dict[Path, list[float]] = {tree: [] for tree in trees}
        for run in range(options.runs):
            for tree in trees if run % 2 == 0 else trees[::-1]:  # A B, B A, ...
                wall, cpu = once(tree, options.processes, config, env)
                walls[tree].append(wall)
                cpus[tree].append(cpu)
        for tree in trees:
            print(
                f"{tree}: ready in {statistics.median(walls[tree]) * 1000:.0f} ms, "
                f"CPU {statistics.median(cpus[tree]):.2f} s "
                f"(--processes {options.processes}, medians)"
            )
        print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
