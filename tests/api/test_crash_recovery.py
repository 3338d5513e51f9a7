"""No accepted task is lost: 200 tasks, the server killed with SIGKILL mid-run and
started again, and every task finishes once. Real processes: `sleuth serve` over the
SQLite store, a local SearXNG-shaped back end that takes 50 ms a search."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml
from live import free_port, wait_ready

from fault_server import FaultServer

TASKS = 200


def service_config(tmp_path: Path, provider_url: str) -> Path:
    config = {
        "chain": ["searxng"],
        "providers": {"searxng": {"enabled": True, "base_url": provider_url}},
        "egress": {"allow_private": ["127.0.0.1"]},  # the back end is on this machine
        "store": {"backend": "sqlite", "path": str(tmp_path / "state.sqlite")},
        "kb": {"path": str(tmp_path / "kb.sqlite")},
        "cache": {"enabled": False},
        "tasks": {"workers": 4, "lease_s": 2.0, "poll_s": 0.1},
        "serve": {"shutdown_grace_s": 0, "processes": 1},
    }
    path = tmp_path / "sleuth.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@contextmanager
def sleuth_serve(config: Path, port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    command = [sys.executable, "-m", "sleuth.api.cli", "serve", "--config", str(config)]
    with log.open("ab") as out:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            [*command, "--port", str(port)], stdout=out, stderr=subprocess.STDOUT
        )
    try:
        wait_ready(f"http://127.0.0.1:{port}", process, why=lambda: log.read_text(encoding="utf-8"))
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)


def statuses(client: httpx.Client, ids: list[str]) -> dict[str, dict[str, Any]]:
    return {task_id: client.get(f"/v1/tasks/{task_id}").json() for task_id in ids}


def test_every_task_finishes_once_across_a_sigkill_and_restart(tmp_path: Path) -> None:
    with FaultServer(slow_s=0.05) as provider:
        config = service_config(tmp_path, provider.url_for("slow"))
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        log = tmp_path / "serve.log"

        with sleuth_serve(config, port, log) as first, httpx.Client(base_url=base) as client:
            ids = []
            for n in range(TASKS):
                accepted = client.post(
                    "/v1/tasks",
                    json={"query": f"python release {n}", "no_cache": True},
                    headers={"Idempotency-Key": f"load-{n}"},
                )
                assert accepted.status_code == 202, accepted.text
                ids.append(accepted.json()["task_id"])
            while sum(s["status"] == "success" for s in statuses(client, ids[:40]).values()) < 20:
                time.sleep(0.05)
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=10)

        at_kill = _count_by_status(tmp_path / "state.sqlite")
        # Killed mid-run: tasks were waiting, and some were running (their leases held).
        assert at_kill.get("pending", 0) > 0 and at_kill.get("running", 0) > 0, at_kill

        with sleuth_serve(config, port, log), httpx.Client(base_url=base) as client:
            # A retried submit after the crash gets the task it made before.
            again = client.post(
                "/v1/tasks",
                json={"query": "python release 0", "no_cache": True},
                headers={"Idempotency-Key": "load-0"},
            )
            assert again.status_code == 200 and again.json()["task_id"] == ids[0]
            deadline = time.monotonic() + 120
            while True:
                final = statuses(client, ids)
                if all(s["status"] in ("success", "failed") for s in final.values()):
                    break
                assert time.monotonic() < deadline, _count_by_status(tmp_path / "state.sqlite")
                time.sleep(0.2)

    assert len(final) == TASKS == len(set(ids))
    assert all(task["status"] == "success" for task in final.values()), [
        (t["task_id"], t["error"]) for t in final.values() if t["status"] != "success"
    ]
    assert all(task["result"]["task_id"] == task["task_id"] for task in final.values())
    assert all(task["result"]["results"] for task in final.values())  # the back end answered
    assert all(sum(e["kind"] == "done" for e in t["events"]) == 1 for t in final.values())
    rows = sqlite3.connect(tmp_path / "state.sqlite").execute("SELECT count(*) FROM tasks")
    assert rows.fetchone()[0] == TASKS  # nothing duplicated
    rerun = [task for task in final.values() if task["attempts"] == 2]
    assert len(rerun) == at_kill["running"]  # exactly the tasks cut off were run again


def _count_by_status(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT status, count(*) FROM tasks GROUP BY status").fetchall()
    return {str(status): int(count) for status, count in rows}
