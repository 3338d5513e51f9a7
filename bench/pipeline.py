"""The pipeline's own overhead: one search, everything but provider I/O.

Three real providers (searxng, wikipedia, local) each answer 10 results instantly
from memory, in their documented body shapes, so what is timed is guard, rewrite,
request building, parsing, normalize, clean, dedupe, rank and project.
Target (issue 17): median at most 2 ms and p99 at most 5 ms on the project machine.
Every run's results are new (other snippets and URLs from the same small vocabulary), as
a new search's are: what is cached by a whole text or link cannot help the next run,
what is cached by a word can, as it does between real searches. With --cold every cache
keyed by a text, a word or a link is emptied too (dedupe's word-by-word checks, token
hashes, stems), which is what a search of words never seen before costs.

The default vocabulary has 21 words, so results resemble each other far more than real
ones do (dedupe compares many near pairs word by word). With --text real the titles and
snippets are cut from real news articles instead (../shared/bench-data/extract-dev), and
each run asks about one of them.

    python bench/pipeline.py [--runs 500] [--cold] [--text real]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from _common import percentile
from sleuth.config import Settings
from sleuth.gateway import Sleuth
from sleuth.providers.base import HttpRequest
from sleuth.text import split_sentences
from sleuth.transport import RawResponse

QUERY = "please find the latest solar panel efficiency records 太阳能电池 转换效率"
ARTICLES = (
    Path(__file__).resolve().parents[1].parent / "shared/bench-data/extract-dev/ground-truth.json"
)
WORDS = [
    *("solar", "panel", "efficiency", "record", "perovskite", "silicon", "tandem", "cell"),
    *("laboratory", "module", "sunlight", "electricity", "percent", "researchers"),
    *("announced", "太阳能", "电池", "转换", "效率", "纪录", "实验室"),
]


class GeneratedText:
    """Sentences of a small vocabulary around the query's subject (the default)."""

    def query_for(self, rng: random.Random) -> str:
        return QUERY

    def sentence(self, rng: random.Random, n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."

    def snippet(self, rng: random.Random) -> str:
        text = " ".join(self.sentence(rng, rng.randint(8, 14)) for _ in range(4))
        return text.replace("efficiency", "<em>efficiency</em>", 1)


class RealText:
    """Titles and snippets cut from real news articles (`--text real`): the labelled
    bodies of ../shared/bench-data/extract-dev, written by nobody here. Each run's query
    is one article's opening words; half the results come from that article, the rest
    from others, as a search's results are partly on its subject."""

    def __init__(self, ground_truth: Path) -> None:
        pages = json.loads(ground_truth.read_text()).values()
        self.articles = [
            sentences
            for page in pages
            if len(sentences := split_sentences(page["articleBody"])) >= 8
        ]
        self.topic = self.articles[0]

    def query_for(self, rng: random.Random) -> str:
        self.topic = rng.choice(self.articles)
        return " ".join(self.topic[0].split()[:8])

    def sentence(self, rng: random.Random, n: int) -> str:
        return " ".join(self._source(rng)[0].split()[:n])

    def snippet(self, rng: random.Random) -> str:
        source = self._source(rng)
        start = rng.randrange(len(source) - 3)
        return " ".join(source[start : start + 3])[:320]  # engines cut snippets about here

    def _source(self, rng: random.Random) -> list[str]:
        return self.topic if rng.random() < 0.5 else rng.choice(self.articles)


Texts = GeneratedText | RealText


def bodies(seed: int = 7, texts: Texts | None = None) -> dict[str, Any]:
    """The three providers' answers for one run, and (under "query") what was asked."""
    rng = random.Random(seed)
    texts = texts or GeneratedText()
    query = texts.query_for(rng)
    sentence, snippet = texts.sentence, texts.snippet
    shared = [
        f"https://news.example.com/solar/{seed}-{i}" for i in range(4)
    ]  # overlap across providers
    searx = [
        {
            "url": (shared[i] + "?utm_source=feed")
            if i < 4
            else f"https://site{i}.example.org/a/{seed}-{i}",
            "title": f"Solar record {i}: {sentence(rng, 5)}",
            "content": snippet(rng),
            "engine": "brave",
            "engines": ["brave", "duckduckgo"],
            "positions": [i + 1],
            "score": 1.0 / (i + 1),
            "category": "general",
            "publishedDate": "2026-11-20T00:00:00" if i % 2 else None,
        }
        for i in range(10)
    ]
    wiki = {
        "batchcomplete": True,
        "query": {
            "search": [
                {
                    "ns": 0,
                    "title": f"Solar cell efficiency {seed} {i}",
                    "pageid": 1000 + i,
                    "size": 5000,
                    "wordcount": 800,
                    "snippet": snippet(rng)
                    .replace("<em>", '<span class="searchmatch">')
                    .replace("</em>", "</span>"),
                    "timestamp": "2026-10-01T12:00:00Z",
                }
                for i in range(10)
            ],
            "general": {"server": "https://en.wikipedia.org", "articlepath": "/wiki/$1"},
        },
    }
    local = {
        "results": [
            {
                "url": shared[i] if i < 2 else f"file:///notes/solar-{seed}-{i}.md",
                "title": f"Notes on solar {i}",
                "snippet": snippet(rng),
                "published_at": "2026-09-01T00:00:00+00:00",
                "path": f"solar-{seed}-{i}.md",
                "score": 5.0 - i * 0.3,
            }
            for i in range(10)
        ]
    }
    return {
        "searxng": {"results": searx, "query": query},
        "wikipedia": wiki,
        "local": local,
        "query": query,
    }


# Bounded caches keyed by configuration (patterns built from settings) or by a small
# set of values, not by a search's texts: kept warm by --cold too, as are the unbounded
# ones (a loaded model, a dictionary, an SSL context).
_CONFIG_CACHES = frozenset(
    {"_ad_pattern", "_param_matcher", "term_matcher", "_names_pattern", "parse_path"}
    | {"build", "_day_label", "_bigram_slices"}
)


def text_caches() -> list[functools._lru_cache_wrapper[Any]]:
    """sleuth's caches keyed by a text, a word or a link (see --cold)."""
    return [
        found
        for found in gc.get_objects()
        if isinstance(found, functools._lru_cache_wrapper)
        and getattr(found, "__module__", "").startswith("sleuth")
        and found.cache_parameters()["maxsize"] is not None
        and found.__name__ not in _CONFIG_CACHES
    ]


def request_for(answers: dict[str, Any]) -> dict[str, Any]:
    return {"query": answers["query"], "max_results": 10, "include": ["url", "published_at"]}


class InstantTransport:
    """Answers every call at once from memory: no sockets, no files."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

    async def send(
        self, provider: str, query: str, request: HttpRequest, timeout_s: float
    ) -> RawResponse:
        return RawResponse(200, {"content-type": "application/json"}, self.answers[provider])

    async def aclose(self) -> None:
        return None


async def run(runs: int, cold: bool, texts: Texts) -> None:
    settings = Settings(
        chain=["searxng", "wikipedia", "local"],
        providers={"searxng": {"enabled": True}, "wikipedia": {}, "local": {}},
        # The same request every run: without this the cache would answer from run 2 on.
        cache={"enabled": False},
        store={"backend": "memory"},
    )
    warm = bodies(texts=texts)
    transport = InstantTransport(warm)
    sleuth = Sleuth(settings, transport)
    for _ in range(30):  # warm-up: jieba's dictionary, regex caches
        response = await sleuth.search(request_for(warm))
    # Made before the clock runs: each run answers with results of its own.
    answers = [bodies(seed, texts) for seed in range(1000, 1000 + runs)]
    totals: list[float] = []
    cpu: list[float] = []
    stages: dict[str, list[float]] = {}
    emptied = text_caches() if cold else []
    for answer in answers:
        transport.answers = answer
        request = request_for(answer)
        for cache in emptied:
            cache.cache_clear()
        started, cpu_started = time.perf_counter(), time.process_time()
        response = await sleuth.search(request)
        totals.append((time.perf_counter() - started) * 1000)
        # CPU time is what the pipeline costs whatever else the machine runs.
        cpu.append((time.process_time() - cpu_started) * 1000)
        for name, ms in response.timings.items():
            stages.setdefault(name, []).append(ms)
    merged = sum(r.results for r in response.providers.values())
    print(
        f"pipeline overhead, 3 providers x 10 results "
        f"({merged} hits -> {len(response.results)} results), {runs} runs, "
        f"{'real' if isinstance(texts, RealText) else 'generated'} texts"
        + (f", {len(emptied)} text caches emptied per run" if cold else "")
    )
    print(
        f"  median {statistics.median(totals):.3f} ms   p99 {percentile(totals, 0.99):.3f} ms   "
        f"mean {statistics.fmean(totals):.3f} ms   (target: median <= 2 ms, p99 <= 5 ms)"
    )
    print(
        f"  CPU time: median {statistics.median(cpu):.3f} ms   p99 {percentile(cpu, 0.99):.3f} ms"
    )
    print(
        "  per stage, median ms: "
        + ", ".join(
            f"{name} {statistics.median(values):.3f}"
            for name, values in stages.items()
            if name != "total"
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument(
        "--cold", action="store_true", help="empty every cache keyed by a text or link per run"
    )
    parser.add_argument(
        "--text",
        choices=["generated", "real"],
        default="generated",
        help="the results' words: a small vocabulary (default) or real news articles'",
    )
    parser.add_argument(
        "--articles",
        type=Path,
        default=ARTICLES,
        help="labelled article bodies (ground-truth.json) for --text real",
    )
    args = parser.parse_args()
    if args.text == "real" and not args.articles.is_file():
        parser.error(f"--articles: {args.articles} does not exist (../shared/bench-data/...)")
    texts = RealText(args.articles) if args.text == "real" else GeneratedText()
    asyncio.run(run(args.runs, args.cold, texts))


if __name__ == "__main__":
    main()
