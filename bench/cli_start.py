"""How long the `sleuth` command takes to start: wall time of a fresh interpreter
running one command (its `--help`, or one import), median over alternating runs.

Each `--src` is a checkout's `src` folder (this one by default), so two trees are
compared in one run, alternating A B B A ... on a shared, noisy machine:

    python bench/cli_start.py [--runs 9] [--src ../main/src --src src]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CASES = {
    "sleuth --help": ["-c", "from sleuth.api.cli import main; main()", "--help"],
    "sleuth search --help": ["-c", "from sleuth.api.cli import main; main()", "search", "--help"],
    "import sleuth": ["-c", "import sleuth"],
    "import sleuth.api.cli": ["-c", "import sleuth.api.cli"],
    "settings loaded": ["-c", "from sleuth.config import load_settings; load_settings(None)"],
    "import sleuth.gateway": ["-c", "import sleuth.gateway"],
}


def once(src: Path, args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "100"}
    started = time.perf_counter()
    subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, *args], env=env, check=True, stdout=subprocess.DEVNULL
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="Runs of each case per tree.")
    parser.add_argument("--src", type=Path, action="append", help="A checkout's src folder.")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="Only these.")
    options = parser.parse_args()
    trees = options.src or [Path(__file__).resolve().parents[1] / "src"]
    print(f"load {os.getloadavg()[0]:.2f}; {options.runs} runs per case and tree")
    for name in options.case or list(CASES):
        times: dict[Path, list[float]] = {tree: [] for tree in trees}
        for run in range(options.runs):
            order = trees if run % 2 == 0 else trees[::-1]  # A B, B A, ...
            for tree in order:
                times[tree].append(once(tree, CASES[name]))
        figures = "  ".join(
            f"{tree}: {statistics.median(taken) * 1000:.0f} ms" for tree, taken in times.items()
        )
        print(f"{name:24} {figures}")


if __name__ == "__main__":
    main()
