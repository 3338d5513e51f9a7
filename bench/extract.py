"""Main-text extraction on real article pages: F1, precision, recall and pages per
second for sleuth's extractor and for trafilatura, in the same run.

Reads ../shared/bench-data/extract-dev/ (or the folder given as the first argument:
`html/<id>.html.gz` and `ground-truth.json`, as that folder's README describes), the
pages of the public article-extraction benchmark with their hand-written bodies.

The benchmark's metric: tokens are `\\w+` runs; both texts become bags of 4-token
shingles; per page the true positives, false positives and false negatives are
counted over shingles and normalised to sum to 1; precision and recall are averaged
over pages and F1 is computed from the two means. Also printed: the same figures on
the two halves of the pages (alternate ids in sorted order), so a rule that only
fits some pages shows.

Speed: pages per CPU second of this process (one core, nothing runs in parallel),
parsing included (for sleuth: decoding, metadata, dates and links too); the
extractors take turns reading all the pages, `PASSES` rounds, and each one's median
pass is printed.

    python bench/extract.py [FOLDER]
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import trafilatura

from sleuth.extract.document import read_document

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "bench-data" / "extract-dev"
PASSES = 5
_TOKEN = re.compile(r"\w+")

Page = tuple[str, str, str, str]  # id, url, html, true body
Extractor = Callable[[str, str], str]


def load(folder: Path) -> list[Page]:
    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for key in sorted(truth):
        html = gzip.decompress((folder / "html" / f"{key}.html.gz").read_bytes())
        pages.append((key, truth[key]["url"], html.decode("utf-8"), truth[key]["articleBody"]))
    return pages


def shingles(text: str) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text)
    return Counter(tuple(tokens[i : i + 4]) for i in range(len(tokens) - 3))


def precision_recall(truth: str, prediction: str) -> tuple[float, float]:
    expected, got = shingles(truth), shingles(prediction)
    tp = sum((expected & got).values())
    fp = sum((got - expected).values())
    fn = sum((expected - got).values())
    if tp + fp + fn == 0:
        return 1.0, 1.0
    if tp == 0:
        return 0.0, 0.0
    # normalising to a sum of 1 leaves the ratios as they are
    return tp / (tp + fp), tp / (tp + fn)


def scores(pairs: list[tuple[float, float]]) -> tuple[float, float, float]:
    precision = statistics.fmean(p for p, _ in pairs)
    recall = statistics.fmean(r for _, r in pairs)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return f1, precision, recall


def trafilatura_default(html: str, url: str) -> str:
    return trafilatura.extract(html, url=url) or ""


def trafilatura_fast(html: str, url: str) -> str:
    return trafilatura.extract(html, url=url, fast=True) or ""


def sleuth_extract(html: str, url: str) -> str:
    # the whole reading path: charset, metadata, hidden text, main text, links
    return read_document(html.encode(), "text/html; charset=utf-8", url).text


EXTRACTORS: dict[str, Extractor] = {
    f"trafilatura {trafilatura.__version__}": trafilatura_default,
    f"trafilatura {trafilatura.__version__} fast": trafilatura_fast,
    "sleuth": sleuth_extract,
}


def one_pass(extract: Extractor, pages: list[Page]) -> tuple[list[str], float]:
    started = time.process_time()
    outputs = [extract(html, url) for _, url, html, _ in pages]
    return outputs, len(pages) / (time.process_time() - started)


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    pages = load(folder)
    speeds: dict[str, list[float]] = {name: [] for name in EXTRACTORS}
    outputs: dict[str, list[str]] = {}
    # Round robin, so a machine that gets busier slows every extractor alike.
    for _ in range(PASSES):
        for name, extract in EXTRACTORS.items():
            outputs[name], speed = one_pass(extract, pages)
            speeds[name].append(speed)
    print(f"{len(pages)} pages from {folder}; halves: alternate ids in sorted order")
    print(f"{'extractor':<24} {'F1':>6} {'prec':>6} {'recall':>6} {'pages/s':>8}  F1 half A / B")
    for name in EXTRACTORS:
        pairs = [
            precision_recall(page[3], out) for page, out in zip(pages, outputs[name], strict=True)
        ]
        f1, precision, recall = scores(pairs)
        half_a, half_b = scores(pairs[0::2])[0], scores(pairs[1::2])[0]
        print(
            f"{name:<24} {f1:6.4f} {precision:6.4f} {recall:6.4f} "
            f"{statistics.median(speeds[name]):8.1f}  {half_a:.4f} / {half_b:.4f}"
        )


if __name__ == "__main__":
    main()
