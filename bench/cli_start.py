"""How long the `sleuth` command takes to start: wall time of a fresh interpreter
running one command (its `--help`, one import, or one search of an empty local
knowledge base), median over alternating runs.

Each `--src` is a checkout's `src` folder (this one by default), so two trees are
compared in one run, alternating A B B A ... on a shared, noisy machine. Bytecode is
cached (in a temporary PYTHONPYCACHEPREFIX, warmed by one uncounted run of each case),
as in an installed sleuth; --no-bytecode compiles every module at every start instead.

    python bench/cli_start.py [--runs 9] [--src ../main/src --src src] [--no-bytecode]
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

CLI = "from sleuth.api.cli import main; main()"
CASES = {
    "sleuth --help": ["-c", CLI, "--help"],
    "sleuth search --help": ["-c", CLI, "search", "--help"],
    "import sleuth": ["-c", "import sleuth"],
    "import sleuth.api.cli": ["-c", "import sleuth.api.cli"],
    "settings loaded": ["-c", "from sleuth.config import load_settings; load_settings(None)"],
    "import sleuth.gateway": ["-c", "import sleuth.gateway"],
    # {config}: a sleuth.yaml with a memory store and an empty knowledge base
    "sleuth search (local)": ["-c", CLI, "search", "solar cells", "--config", "{config}"],
}


def once(src: Path, args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, *args],
        env={**env, "PYTHONPATH": str(src)},
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="Runs of each case per tree.")
    parser.add_argument("--src", type=Path, action="append", help="A checkout's src folder.")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="Only these.")
    parser.add_argument("--no-bytecode", action="store_true", help="Compile at every start.")
    options = parser.parse_args()
    trees = options.src or [Path(__file__).resolve().parents[1] / "src"]
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "sleuth.yaml"
        config.write_text(
            f"store: {{backend: memory}}\nkb: {{path: {Path(folder) / 'kb.sqlite'}}}\n",
            encoding="utf-8",
        )
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["COLUMNS"] = "100"
        if options.no_bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            env["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pycache")
        print(
            f"load {os.getloadavg()[0]:.2f}; {options.runs} runs per case and tree; "
            f"bytecode {'not ' if options.no_bytecode else ''}cached"
        )
        for name in options.case or list(CASES):
            args = [arg.replace("{config}", str(config)) for arg in CASES[name]]
            times: dict[Path, list[float]] = {tree: [] for tree in trees}
            for tree in trees:
                once(tree, args, env)  # writes the bytecode; not counted
            for run in range(options.runs):
                order = trees if run % 2 == 0 else trees[::-1]  # A B, B A, ...
                for tree in order:
                    times[tree].append(once(tree, args, env))
            figures = "  ".join(
                f"{tree}: {statistics.median(taken) * 1000:.0f} ms" for tree, taken in times.items()
            )
            print(f"{name:24} {figures}")
        print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
