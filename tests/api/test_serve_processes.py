"""`sleuth serve --processes N`: N worker processes on one port over the shared store,
none of them outliving the server. Real processes and a real back end on loopback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import yaml
from live import free_port, wait_ready

from fault_server import FaultServer

SERVE = [sys.executable, "-m", "sleuth.api.cli", "serve"]


def write_config(tmp_path: Path, provider_url: str, store: str = "sqlite") -> Path:
    config = {
        "chain": ["searxng"],
        "providers": {"searxng": {"enabled": True, "base_url": provider_url}},
        "egress": {"allow_private": ["127.0.0.1"]},
        "store": {"backend": store, "path": str(tmp_path / "state.sqlite")},
        "kb": {"path": str(tmp_path / "kb.sqlite")},
        "cache": {"enabled": False},
        "tasks": {"poll_s": 0.1},
        "serve": {"shutdown_grace_s": 0},
    }
    path = tmp_path / "sleuth.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@contextmanager
def serve(config: Path, port: int, log: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as out:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            [*SERVE, "--config", str(config), "--port", str(port), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_ready(f"http://127.0.0.1:{port}", process, why=lambda: log.read_text("utf-8"))
        count = int(args[args.index("--processes") + 1]) if "--processes" in args else 1
        if count > 1:  # one worker answered /readyz: wait for the others too
            deadline = time.monotonic() + 240  # as generous as wait_ready
            while len(listening(children(process.pid), port)) < count:
                assert process.poll() is None, log.read_text("utf-8")
                assert time.monotonic() < deadline, f"not every worker listens on {port}"
                time.sleep(0.1)
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


def test_two_processes_share_the_port_and_the_tasks(tmp_path: Path) -> None:
    with FaultServer() as provider:
        config = write_config(tmp_path, provider.url_for("ok"))
        port = free_port()
        with serve(config, port, tmp_path / "serve.log", "--processes", "2") as server:
            workers = children(server.pid)
            # uvicorn's supervisor may keep a helper process beside its workers.
            assert len(workers) >= 2, workers
            ids = []
            for n in range(20):  # a new connection each: the kernel spreads them
                answer = httpx.post(
                    f"http://127.0.0.1:{port}/v1/tasks", json={"query": f"release {n}"}
                )
                assert answer.status_code == 202, answer.text
                ids.append(answer.json()["task_id"])
            deadline = time.monotonic() + 60
            pending = set(ids)
            while pending and time.monotonic() < deadline:
                for task_id in list(pending):
                    task = httpx.get(f"http://127.0.0.1:{port}/v1/tasks/{task_id}").json()
                    if task["status"] == "success":
                        assert task["result"]["results"]
                        pending.discard(task_id)
                time.sleep(0.1)
            assert not pending, f"{len(pending)} tasks did not finish"
            banner = (tmp_path / "serve.log").read_text("utf-8")
            assert "processes 2, sharing the sqlite store" in banner
            # the workers' own hand-over variable is no setting to warn about
            assert "is not a sleuth setting" not in banner, banner


def sockets_on(port: int, state: str) -> set[str]:
    """The inodes of the sockets on local `port` in `state` (/proc/net/tcp's hex code)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            if local_port == port and fields[3] == state:
                inodes.add(fields[9])
    return inodes


def listening(pids: list[int], port: int) -> list[int]:
    """The processes of `pids` that listen on `port`: a worker listens once it serves."""
    return [pid for pid, held in held_by(pids, sockets_on(port, "0A")).items() if held]


def accepted_by(pids: list[int], port: int) -> dict[int, int]:
    """How many connections to `port` each process has accepted (from /proc)."""
    return held_by(pids, sockets_on(port, "01"))  # ESTABLISHED


def held_by(pids: list[int], inodes: set[str]) -> dict[int, int]:
    """How many of the sockets `inodes` each process holds open."""
    held = {}
    for pid in pids:
        links = []
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:  # a helper process that has just exited
            fds = []
        for fd in fds:
            try:
                links.append(os.readlink(fd))
            except OSError:
                continue
        held[pid] = sum(link[8:-1] in inodes for link in links if link.startswith("socket:["))
    return held


def test_connections_opened_at_once_are_spread_over_the_workers(tmp_path: Path) -> None:
    """A client's keep-alive connections, opened together, are served by every worker
    (they all went to the first one awake when the workers shared one socket)."""
    with FaultServer() as provider:
        config = write_config(tmp_path, provider.url_for("ok"))
        port = free_port()
        with serve(config, port, tmp_path / "serve.log", "--processes", "2") as server:
            workers = children(server.pid)
            clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]
            try:
                deadline = time.monotonic() + 30
                held = accepted_by(workers, port)
                while sum(held.values()) < len(clients) and time.monotonic() < deadline:
                    time.sleep(0.1)
                    held = accepted_by(workers, port)
            finally:
                for client in clients:
                    client.close()
    assert sum(held.values()) == len(clients), held
    assert len([n for n in held.values() if n]) == 2, held


def test_a_clients_keep_alive_connections_even_out_over_the_workers(tmp_path: Path) -> None:
    """16 keep-alive connections, however the kernel hashed them, end up 8 and 8 within
    a few requests each: a worker over its share closes one after a response, and the
    client's new connection is hashed again. Every request is answered. Three times
    over, so that an even split by chance (one in five) does not pass for it."""
    with FaultServer() as provider:
        config = write_config(tmp_path, provider.url_for("ok"))
        port = free_port()
        with serve(config, port, tmp_path / "serve.log", "--processes", "2") as server:
            workers = children(server.pid)
            for _attempt in range(3):
                clients = [httpx.Client(base_url=f"http://127.0.0.1:{port}") for _ in range(16)]
                try:
                    held: dict[int, int] = {}
                    for _round in range(60):
                        for client in clients:
                            answer = client.get("/healthz")
                            assert answer.status_code == 200, answer.text
                        held = accepted_by(workers, port)
                        if sorted(n for n in held.values() if n) == [8, 8]:
                            break
                finally:
                    for client in clients:
                        client.close()
                assert sorted(n for n in held.values() if n) == [8, 8], held
                deadline = time.monotonic() + 30  # the workers see the clients gone
                while sum(accepted_by(workers, port).values()) and time.monotonic() < deadline:
                    time.sleep(0.05)


def searches_counted(metrics: str) -> float:
    """The sum of `sleuth_searches_total` over its labels, as Prometheus would add it."""
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("sleuth_searches_total{")
    )


def test_metrics_count_every_worker_whichever_answers_the_scrape(tmp_path: Path) -> None:
    with FaultServer() as provider:
        config = write_config(tmp_path, provider.url_for("ok"))
        port = free_port()
        with serve(config, port, tmp_path / "serve.log", "--processes", "2"):
            for n in range(30):  # a new connection each: the kernel spreads them
                answer = httpx.post(
                    f"http://127.0.0.1:{port}/v1/search", json={"query": f"metrics {n}"}
                )
                assert answer.status_code == 200, answer.text
            for _ in range(6):  # each scrape on a new connection, to either worker
                scraped = httpx.get(f"http://127.0.0.1:{port}/metrics")
                assert scraped.status_code == 200
                assert searches_counted(scraped.text) == 30


def test_the_workers_stop_when_the_server_is_killed(tmp_path: Path) -> None:
    with FaultServer() as provider:
        config = write_config(tmp_path, provider.url_for("ok"))
        port = free_port()
        with serve(config, port, tmp_path / "serve.log", "--processes", "2") as server:
            workers = children(server.pid)
            os.kill(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
            deadline = time.monotonic() + 20
            while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not [pid for pid in workers if alive(pid)], "a worker outlived the server"
        # ...and the port is free for the next start.
        with serve(config, port, tmp_path / "serve.log", "--processes", "1"):
            assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200


def test_a_memory_store_cannot_be_shared_by_processes(tmp_path: Path) -> None:
    config = write_config(tmp_path, "http://127.0.0.1:9/", store="memory")
    done = subprocess.run(  # noqa: S603
        [*SERVE, "--config", str(config), "--port", str(free_port()), "--processes", "2"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "store.backend" in done.stderr and "--processes 1" in done.stderr
