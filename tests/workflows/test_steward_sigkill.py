"""The knowledge steward survives a SIGKILL mid-run: `sleuth run --key K` is killed
while it files pages, a second `sleuth run --key K` resumes the same run at the item
it reached, and no page is filed twice. Real processes over the SQLite store; each
page also goes to a local webhook that takes a moment to answer, so the kill lands
in the middle of the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from steward_kb import index, pages_at, steward

PAGES = 12
KILL_AFTER = 4


def more_pages(folder: Path) -> None:
    for n in range(PAGES - 3):  # the example has three tagged pages
        (folder / f"policy-{n:02d}.md").write_text(
            f"---\ntags: [policy]\n---\n# 制度 {n}\n\n第 {n} 号制度规定了审批的流程。"
            f"\n\n生效日期：2026-0{1 + n % 9}-01\n适用部门：部门{n}\n修订人：员工{n}\n",
            encoding="utf-8",
        )


def workflow_file(folder: Path, hook: str) -> Path:
    data = steward().model_dump(mode="json", exclude_none=True)
    each = data["steps"][1]["for_each"]["steps"]
    record = {"path": "{{item.path}}", "modified_at": "{{item.modified_at}}"}
    each.append(
        {
            "id": "filed",
            "sink": {"jsonl": "filed.jsonl", "key": ["path", "modified_at"], "record": record},
        }
    )
    each.append(
        {
            "id": "notify",
            "sink": {"webhook": hook, "key": ["path", "modified_at"], "record": record},
        }
    )
    path = folder / "steward.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def config_file(tmp_path: Path) -> Path:
    config = {
        "kb": {"path": str(tmp_path / "kb.sqlite")},
        "store": {"backend": "sqlite", "path": str(tmp_path / "state.sqlite")},
        "tasks": {"lease_s": 1.0, "poll_s": 0.1},
        "egress": {"allow_private": ["127.0.0.1", "localhost"]},
        "observe": {"log_to": "off"},
    }
    path = tmp_path / "sleuth.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def sleuth_run(config: Path, workflow: Path, out: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "sleuth.api.cli", "run", str(workflow)]
    with out.open("wb") as stdout, out.with_suffix(".err").open("wb") as stderr:
        return subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            [*command, "--config", str(config), "--key", "nightly-1", "--json"],
            stdout=stdout,
            stderr=stderr,
        )


def errors_of(out: Path) -> str:
    return out.with_suffix(".err").read_text(encoding="utf-8", errors="replace")


def test_a_killed_run_resumes_at_its_item_and_files_no_page_twice(
    tmp_path: Path, httpserver: HTTPServer
) -> None:
    pages = pages_at(tmp_path / "pages")
    more_pages(pages)
    index(tmp_path / "kb.sqlite", pages)
    posted: list[str] = []
    lock = threading.Lock()

    def receive(request: Request) -> Response:
        time.sleep(0.3)  # a slow receiver: the run is still going when it is killed
        with lock:
            posted.append(request.headers["Idempotency-Key"])
        return Response("{}", status=200, content_type="application/json")

    httpserver.expect_request("/filed", method="POST").respond_with_handler(receive)
    folder = tmp_path / "workflow"
    folder.mkdir()
    workflow = workflow_file(folder, httpserver.url_for("/filed"))
    config = config_file(tmp_path)

    first = sleuth_run(config, workflow, tmp_path / "first.json")
    deadline = time.monotonic() + 120
    while len(posted) < KILL_AFTER and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert first.poll() is None, errors_of(tmp_path / "first.json")
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    filed_at_kill = len((folder / "filed.jsonl").read_text(encoding="utf-8").splitlines())
    assert KILL_AFTER <= filed_at_kill < PAGES

    second = sleuth_run(config, workflow, tmp_path / "second.json")
    second.wait(timeout=180)
    assert second.returncode == 0, errors_of(tmp_path / "second.json")
    task: dict[str, Any] = json.loads((tmp_path / "second.json").read_text(encoding="utf-8"))

    assert task["status"] == "success" and task["attempts"] == 2
    assert task["run"]["attempt"] == 2
    events = task["events"]
    (resumed,) = [event["detail"] for event in events if event["kind"] == "resumed"]
    assert resumed["steps_done"] == ["changed"] and resumed["items_done"] >= KILL_AFTER - 1
    # Each page once: in the file sink, and among the finished items of both attempts.
    lines = (folder / "filed.jsonl").read_text(encoding="utf-8").splitlines()
    paths = Counter(json.loads(line)["path"] for line in lines)
    assert len(paths) == PAGES and set(paths.values()) == {1}
    done = Counter(e["detail"]["key"] for e in events if e["kind"] == "item_done")
    assert len(done) == PAGES and set(done.values()) == {1}
    # The webhook heard every page; only the one cut off mid-item may have been sent
    # again, with the same Idempotency-Key for the receiver to recognise.
    assert len(set(posted)) == PAGES and len(posted) - len(set(posted)) <= 1
    assert task["run"]["steps"][0]["resumed"] is True
