"""`make run` without a terminal (CI, a fresh-clone check): start `sleuth serve`, ask it
what an agent would (an English and a Chinese search, one task followed through its
server-sent events), print the answers, and stop the server gracefully.

In a terminal, `make run` serves until Ctrl-C instead.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

QUESTIONS = ["How does sleuth remove duplicate results?", "本地知识库怎么支持中文检索？"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_ready(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"sleuth serve exited with {server.returncode}")
        try:
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    sys.exit("sleuth serve did not become ready within 60 s")


def show(answer: dict[str, Any]) -> None:
    print(f"\n? {answer['query']}")
    for n, item in enumerate(answer["results"], 1):
        print(f"  [{n}] {item['title']}  <{item.get('url', '')}>")
    for sentence in answer["summary"]:
        cited = "".join(f"[{c['result'] + 1}]" for c in sentence["citations"])
        print(f"  > {sentence['text']} {cited}")


def main() -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    sleuth = Path(sys.executable).with_name("sleuth")
    server = subprocess.Popen([str(sleuth), "serve", "--host", "127.0.0.1", "--port", str(port)])
    try:
        wait_ready(base, server)
        with httpx.Client(base_url=base, timeout=30) as client:
            for question in QUESTIONS:
                answer = client.post("/v1/search", json={"query": question, "include": ["url"]})
                answer.raise_for_status()
                show(answer.json())
            task = client.post("/v1/tasks", json={"query": QUESTIONS[0]}).json()
            print(f"\ntask {task['task_id']} accepted; its events:")
            with client.stream("GET", f"/v1/tasks/{task['task_id']}/events") as events:
                for line in events.iter_lines():
                    if line.startswith("data: "):
                        event = json.loads(line.removeprefix("data: "))
                        detail = {k: v for k, v in event["detail"].items() if k != "query"}
                        print(f"  {event['seq']:>2} {event['kind']:<18} {json.dumps(detail)}")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    print("\nserver stopped. In a terminal, `make run` keeps serving until Ctrl-C.")


if __name__ == "__main__":
    main()
