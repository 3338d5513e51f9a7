"""Real sleuth processes on one Redis, for the scale-out tests: `sleuth serve` replicas
and `sleuth worker` processes sharing a config, a private `redis-server`, and a
SearXNG-shaped back end on this machine (`tests/fault_server.py`).

A helper for tests, not a test module.

    with Fleet(tmp_path) as fleet:
        replicas = fleet.serve(config, 3, workers=False)
        workers = fleet.workers(config, 2)
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import pytest
import yaml

from redis_server import RedisServer, RedisUnavailable, free_port, stop_process

__all__ = ["Fleet", "Proc", "free_port", "private_redis", "write_config"]

#: How long a process may take to come up: generous, as a `sleuth serve` starts on ~4 s
#: of CPU and five may start at once on a small machine (three replicas were ready in
#: 34 s at load 5; at load 9 one each gets a quarter of a core).
START_TIMEOUT_S = 240.0


def private_redis() -> Iterator[str]:
    """For a module-scoped fixture: the URL of a `redis-server` of the module's own (its
    INFO counts are the module's alone), or a skip with the reason there is none
    (redis-server not installed: one that fails to start fails the tests).

        @pytest.fixture(scope="module")
        def redis_url() -> Iterator[str]:
            yield from private_redis()

    (A conftest.py here would collide with tests/store/conftest.py: both would be
    imported as `conftest`.)
    """
    try:
        server = RedisServer().__enter__()
    except RedisUnavailable as missing:
        pytest.skip(f"no redis-server: {missing}")
    try:
        yield server.url
    finally:
        server.__exit__(None, None, None)


def write_config(
    folder: Path, redis_url: str, namespace: str, provider_url: str, **sections: Any
) -> Path:
    """A sleuth.yaml for every process of one fleet: the searxng back end at
    `provider_url` (on 127.0.0.1), the store on Redis, no cache; `sections` override."""
    config: dict[str, Any] = {
        "chain": ["searxng"],
        "providers": {"searxng": {"enabled": True, "base_url": provider_url}},
        "egress": {"allow_private": ["127.0.0.1"]},  # the back end is on this machine
        "store": {"backend": "redis", "url": redis_url, "namespace": namespace},
        "kb": {"path": str(folder / "kb.sqlite")},
        "cache": {"enabled": False},
        "serve": {"shutdown_grace_s": 0, "processes": 1},
        **sections,
    }
    path = folder / f"sleuth-{namespace}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@dataclass
class Proc:
    """One sleuth process: a replica has a `base` URL, a worker has none."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    base: str = ""

    @property
    def pid(self) -> int:
        return self.process.pid

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


class Fleet:
    """Starts sleuth processes and stops every one still running on exit."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.procs: list[Proc] = []

    def _start(self, name: str, args: list[str]) -> Proc:
        log = self.folder / f"{name}.log"
        command = [sys.executable, "-m", "sleuth.api.cli", *args]
        with log.open("ab") as out:
            process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
                command, stdout=out, stderr=subprocess.STDOUT
            )
        proc = Proc(name, process, log)
        self.procs.append(proc)
        return proc

    def serve(self, config: Path, count: int, *, workers: bool = False) -> list[Proc]:
        """`count` replicas of `sleuth serve` on free ports, once each answers /readyz."""
        started = []
        for _ in range(count):
            port = free_port()
            args = ["serve", "--config", str(config), "--port", str(port)]
            if not workers:
                args.append("--no-workers")
            proc = self._start(f"serve-{len(self.procs)}", args)
            proc.base = f"http://127.0.0.1:{port}"
            started.append(proc)
        deadline = time.monotonic() + START_TIMEOUT_S
        for proc in started:
            while not _ready(proc.base):
                assert proc.process.poll() is None, proc.output()
                assert time.monotonic() < deadline, f"{proc.name} not ready:\n{proc.output()}"
                time.sleep(0.05)
        return started

    def workers(self, config: Path, count: int, *extra: str) -> list[Proc]:
        """`count` `sleuth worker` processes, once each says it started."""
        started = [
            self._start(f"worker-{len(self.procs)}", ["worker", "--config", str(config), *extra])
            for _ in range(count)
        ]
        deadline = time.monotonic() + START_TIMEOUT_S
        for proc in started:
            while " started: " not in proc.output():
                assert proc.process.poll() is None, proc.output()
                assert time.monotonic() < deadline, f"{proc.name} did not start:\n{proc.output()}"
                time.sleep(0.05)
        return started

    def stop(self, proc: Proc, sig: signal.Signals = signal.SIGTERM) -> int:
        if proc.process.poll() is None:
            proc.process.send_signal(sig)
        return proc.process.wait(timeout=30)

    def __enter__(self) -> Fleet:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for proc in self.procs:
            if proc.process.poll() is None:
                proc.process.terminate()
        for proc in self.procs:
            stop_process(proc.process)


def _ready(base: str) -> bool:
    try:
        return httpx.get(f"{base}/readyz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False
