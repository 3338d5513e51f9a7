"""Write tests/data/golden/*.json: the full answers for every recorded cassette at a
fixed "now" (see tests/full_responses.py). Run it only when a change alters answers
on purpose, and read the diff it makes.

    python scripts/record_full_responses.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from full_responses import GOLDEN, KEYS, answers, cassettes, golden_path


async def main() -> None:
    os.environ.update(KEYS)
    GOLDEN.mkdir(exist_ok=True)
    for cassette in cassettes():
        found = await answers(cassette)
        text = json.dumps(found, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
        golden_path(cassette).write_text(text, encoding="utf-8")
        print(f"{golden_path(cassette)}: {len(found)} queries")


if __name__ == "__main__":
    asyncio.run(main())
