"""Live servers for tests that need a real socket: a free port, `sleuth serve` in a
subprocess waited for on /readyz, and an ASGI app under uvicorn in a thread."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_ready(
    base: str,
    process: subprocess.Popen[bytes],
    # Generous: `serve --processes 2` starts on ~12 s of CPU (the supervisor ~2 s, each
    # worker ~4.5 s); at load 4 on two cores that was 35 s, at load 9 over 60 s.
    timeout_s: float = 240,
    why: Callable[[], str] = lambda: "the server exited",
) -> None:
    """Until `base/readyz` answers 200; fails when the process exits (with `why()`) or
    the time runs out."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert process.poll() is None, why()
        assert time.monotonic() < deadline, "the server did not become ready"
        time.sleep(0.1)


@contextmanager
def uvicorn_thread(app: Any, **options: Any) -> Iterator[str]:
    """`app` served by uvicorn on 127.0.0.1 (a free port) in a daemon thread, lifespan
    on; yields the base URL and stops the server on exit. `options` go to uvicorn's
    Config (`http=` a protocol class, say)."""
    chosen: dict[str, Any] = {"http": "h11", **options}
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", ws="none", lifespan="on", **chosen
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    # Generous: an app's startup takes seconds on a loaded machine; a fast one is
    # seen at once.
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
