"""`sleuth serve` on the command line: the port it prints is the port it listens on,
and a port it cannot have is said before any banner."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import httpx
import yaml
from live import free_port, wait_ready


def config(tmp_path: Path) -> Path:
    path = tmp_path / "sleuth.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "store": {"backend": "sqlite", "path": str(tmp_path / "state.sqlite")},
                "kb": {"path": str(tmp_path / "kb.sqlite")},
                "observe": {"log_to": "off"},
            }
        ),
        encoding="utf-8",
    )
    return path


def serve(*args: str) -> list[str]:
    return [sys.executable, "-m", "sleuth.api.cli", "serve", *args]


def test_a_port_out_of_range_is_refused_by_name(tmp_path: Path) -> None:
    for port in ("99999", "-1", "0"):
        run = subprocess.run(  # noqa: S603 - our own interpreter and arguments
            [*serve("--port", port), "--config", str(config(tmp_path))],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert run.returncode == 2, run.stderr
        assert "Invalid value for '--port'" in run.stderr
        assert (
            "less than or equal to 65535" in run.stderr
            or "greater than or equal to 1" in run.stderr
        )
        assert "serving on" not in run.stdout


def test_a_port_in_use_is_said_before_any_banner(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        run = subprocess.run(  # noqa: S603 - our own interpreter and arguments
            [*serve("--port", port), "--config", str(config(tmp_path))],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert run.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in run.stderr
    assert "serving on" not in run.stdout


def test_the_printed_port_is_the_one_listened_on(tmp_path: Path) -> None:
    port = free_port()
    out = (tmp_path / "out.txt").open("w+")
    server = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [*serve("--port", str(port)), "--config", str(config(tmp_path))], stdout=out
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}", server)
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").json() == {"status": "ok"}
    finally:
        server.terminate()
        server.wait(timeout=30)
    out.seek(0)
    assert f"sleuth serving on http://127.0.0.1:{port}" in out.read()
    out.close()
