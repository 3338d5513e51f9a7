"""A private `redis-server` for tests: its own process on a free local port, no disk.

A helper for tests, not a test module. `RedisServer` starts `redis-server` bound to
127.0.0.1 in a temporary folder with persistence off (`--save "" --appendonly no`)
and stops it on exit; `cluster=True` starts a one-node Redis Cluster holding every
slot, which refuses any command or script that spans two slots, as a real cluster
does. When `redis-server` is missing and the tests run as root, `find_redis_server`
installs the Debian package once (apt-get update, apt-get install -y redis-server);
otherwise it says why (`RedisUnavailable`), for the caller to skip with that reason.
An installed server that does not come up raises `RedisStartFailed`, which no helper
turns into a skip: where redis-server is installed (CI), the Redis tests run or fail.

    with RedisServer() as server:
        store = RedisStore(server.url)
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
import redis

__all__ = [
    "RedisServer",
    "RedisStartFailed",
    "RedisUnavailable",
    "find_redis_server",
    "free_port",
    "namespace",
    "redis_url_or_skip",
    "shared_redis_url",
    "stop_process",
    "stop_shared_servers",
]

_install_failed: str | None = None
_shared: dict[bool, RedisServer | RuntimeError] = {}


class RedisUnavailable(RuntimeError):
    """No `redis-server` could be found or installed; the message says why."""


class RedisStartFailed(RuntimeError):
    """`redis-server` is there but did not come up: a failure, never a reason to skip."""


def find_redis_server() -> str:
    """The path of `redis-server`, installed from the Debian package when allowed."""
    global _install_failed
    found = shutil.which("redis-server")
    if found:
        return found
    if _install_failed is not None:
        raise RedisUnavailable(_install_failed)
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        _install_failed = "redis-server is not installed (install it, or run as root on Debian)"
        raise RedisUnavailable(_install_failed)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update"], ["apt-get", "install", "-y", "redis-server"]):
        done = subprocess.run(  # noqa: S603 - fixed commands, no shell
            command, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        if done.returncode != 0:
            _install_failed = f"{' '.join(command)} failed: {done.stderr.strip()[-300:]}"
            raise RedisUnavailable(_install_failed)
    found = shutil.which("redis-server")
    if not found:
        _install_failed = "redis-server is still missing after installing the package"
        raise RedisUnavailable(_install_failed)
    return found


def free_port() -> int:
    """A port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def stop_process(process: subprocess.Popen[bytes], timeout_s: float = 30) -> int:
    """Terminate `process` (SIGTERM) unless it has exited, wait for it, and kill it if
    it outlives `timeout_s`; its exit code."""
    if process.poll() is None:
        process.terminate()
    try:
        return process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


class RedisServer:
    """One `redis-server` process for the life of the `with` block."""

    def __init__(self, *, cluster: bool = False, start_timeout_s: float = 10.0) -> None:
        self.cluster = cluster
        self._start_timeout_s = start_timeout_s
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def __enter__(self) -> RedisServer:
        binary = find_redis_server()
        self._dir = tempfile.TemporaryDirectory(prefix="sleuth-redis-")
        self.port = free_port()
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--dir", self._dir.name]
        if self.cluster:
            # An explicit bus port: the default, port + 10000, may be taken or out of range.
            command += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
            command += ["--cluster-port", str(free_port())]
        log = Path(self._dir.name) / "redis.log"
        self._process = subprocess.Popen(  # noqa: S603 - our own server binary and arguments
            [*command, "--logfile", str(log)], stdout=subprocess.DEVNULL
        )
        try:
            self._wait_ready(log)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_ready(self, log: Path) -> None:
        client = redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True)
        deadline = time.monotonic() + self._start_timeout_s
        try:
            while True:
                if self._process is not None and self._process.poll() is not None:
                    text = log.read_text() if log.exists() else ""
                    raise RedisStartFailed(f"redis-server exited: {text[-500:]}")
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    if time.monotonic() > deadline:
                        raise RedisStartFailed("redis-server did not answer in time") from None
                    time.sleep(0.02)
            if self.cluster:
                command: Callable[..., Any] = client.execute_command  # untyped in redis-py
                command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
                while "cluster_state:ok" not in str(command("CLUSTER", "INFO")):
                    if time.monotonic() > deadline:
                        raise RedisStartFailed("the one-node cluster did not come up")
                    time.sleep(0.02)
        finally:
            client.close()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._process is not None:
            stop_process(self._process, timeout_s=10)
            self._process = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None


def shared_redis_url(*, cluster: bool = False) -> str:
    """The URL of a server shared by the whole test session, started on first use;
    raises `RedisUnavailable` or `RedisStartFailed` (every time, without trying again)
    when there is none to start, or it did not come up."""
    if cluster not in _shared:
        try:
            _shared[cluster] = RedisServer(cluster=cluster).__enter__()
        except (RedisUnavailable, RedisStartFailed) as missing:
            _shared[cluster] = missing
    found = _shared[cluster]
    if isinstance(found, RuntimeError):
        raise found
    return found.url


def redis_url_or_skip(*, cluster: bool = False) -> str:
    """`shared_redis_url`, or skip the calling test with the reason there is none
    (only when redis-server is not installed; one that fails to start fails the test)."""
    try:
        return shared_redis_url(cluster=cluster)
    except RedisUnavailable as missing:
        pytest.skip(f"no redis-server: {missing}")


def stop_shared_servers() -> None:
    for server in _shared.values():
        if isinstance(server, RedisServer):
            server.__exit__(None, None, None)
    _shared.clear()


def namespace() -> str:
    """A key namespace of its own, so that tests sharing a server never meet."""
    return f"test-{uuid.uuid4().hex[:12]}"
