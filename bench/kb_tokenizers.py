"""Compare the knowledge base's two tokenizers on a generated bilingual corpus.

Run: PYTHONPATH=src .venv/bin/python bench/kb_tokenizers.py [--docs 300] [--seed 7]
     [--filler N]  (N extra filler sentences per note: longer notes, same topics)
     [--handbooks N]  (N long multi-section documents besides the notes; 0 for none)

Writes ~300 short notes (Markdown, text, HTML; Chinese, English and mixed) about ten
known topics into a temporary folder, and 30 handbooks: long Markdown and HTML
documents in Chinese or English with 6 to 9 sections under their own headings, most
about one topic each (with passing mentions of others), some filler. It indexes the
folder once with each tokenizer and asks 40 labelled queries (per topic: a
2-character Chinese word, a 4-character Chinese term, an English word, an English
phrase). A document is relevant to a query when it is about the query's topic (a
handbook: has a section about it) and written in the query's language (mixed
documents count for both). Prints index time, database size, median query latency,
recall@5, MRR@10 and precision@10, overall and per kind of query; and, for the
relevant handbooks in the top 10, how often the result links to the section about
the topic (`#anchor`) and how often the snippet comes from that section.

The corpus holds the usual traps of both approaches: Chinese phrases that contain
a query word as a substring across a word boundary (排队列表 holds 队列), which
fool substring matching, and English plurals (caches, queues), which fool
whole-word matching.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from sleuth.kb import Tokenizer, index_folder, search
from sleuth.kb.tokenize import segment


@dataclass(frozen=True)
class Topic:
    zh2: str
    zh4: str
    en_word: str
    en_phrase: str
    plural: str
    zh: tuple[str, ...]
    en: tuple[str, ...]


TOPICS = [
    Topic("缓存", "缓存策略", "cache", "cache invalidation", "caches",
          ("命中率", "淘汰", "过期时间", "热点数据"), ("eviction", "hit ratio", "ttl", "hot keys")),
    Topic("检索", "全文检索", "retrieval", "inverted index", "retrievals",
          ("倒排", "相关性", "召回", "排序"), ("ranking", "relevance", "recall", "postings")),
    Topic("共识", "共识算法", "consensus", "leader election", "consensuses",
          ("选主", "日志复制", "任期", "多数派"), ("raft", "quorum", "log replication", "terms")),
    Topic("容器", "容器编排", "container", "pod scheduling", "containers",
          ("镜像", "调度", "节点", "副本"), ("kubernetes", "image", "node", "replica")),
    Topic("编译", "编译优化", "compiler", "register allocation", "compilers",
          ("语法树", "中间表示", "内联", "寄存器"), ("parser", "ir", "inlining", "codegen")),
    Topic("加密", "加密算法", "encryption", "public key", "encryptions",
          ("密钥", "签名", "哈希", "证书"), ("cipher", "signature", "hash", "certificate")),
    Topic("监控", "监控告警", "monitoring", "alert rules", "monitors",
          ("指标", "阈值", "仪表盘", "采样"), ("metrics", "threshold", "dashboard", "sampling")),
    Topic("队列", "消息队列", "queue", "message broker", "queues",
          ("消费者", "生产者", "积压", "重试"), ("consumer", "producer", "backlog", "retry")),
    Topic("负载", "负载均衡", "balancer", "health check", "balancers",
          ("后端", "权重", "轮询", "健康检查"), ("backend", "weight", "round robin", "upstream")),
    Topic("分词", "中文分词", "tokenizer", "word segmentation", "tokenizers",
          ("词典", "歧义", "未登录词", "词性"), ("lexicon", "ambiguity", "vocabulary", "stemming")),
]  # fmt: skip

ZH_TOPIC = [
    "{a}是系统设计中经常讨论的话题。",
    "在实际项目里，{a}和{b}往往需要一起考虑。",
    "我们发现{a}对{b}有明显影响。",
    "这篇笔记记录了{a}的几个常见问题。",
    "团队在上线前重新评估了{a}。",
    "关于{a}，最重要的是理解它的边界条件。",
]
EN_TOPIC = [
    "The {a} is a recurring topic in system design.",
    "In real projects {a} and {b} must be considered together.",
    "We found that {a} has a clear effect on {b}.",
    "These notes record common problems with {a}.",
    "Before launch the team reviewed the {a} again.",
    "Most of the trouble with {a} comes from edge cases.",
]
MIXED_TOPIC = [
    "{a}（{e}）是这次讨论的重点。",
    "我们把 {e} 和{b}放在一起评估。",
    "线上事故复盘时提到了 {e} 的配置。",
]
ZH_FILLER = [
    "今天的会议持续了两个小时。", "文档需要定期更新。", "代码评审发现了几个小问题。",
    "下周继续跟进这个事项。", "大家对方案基本达成一致。", "测试环境已经准备好了。",
    "排队列表很长，需要耐心等待。", "我们需要区分词语的不同用法。", "增加密度可以提高产量。",
    "公共识别码已经更新。", "新的工作负载率统计已经完成。", "这份报告的内容很多。",
]  # fmt: skip
EN_FILLER = [
    "The meeting lasted two hours.", "Documentation needs regular updates.",
    "Code review found a few small issues.", "We will follow up next week.",
    "Everyone mostly agreed on the plan.", "The test environment is ready.",
    "The release notes were published on Friday.", "Several people asked for a demo.",
]  # fmt: skip


@dataclass(frozen=True)
class Query:
    text: str
    kind: str
    relevant: frozenset[str]
    # Relevant handbook -> (anchor, text) of its section about the query's topic.
    sections: dict[str, tuple[str, str]]


def sentence(rng: random.Random, lang: str, topic: Topic) -> str:
    if lang == "en":
        words = [topic.en_word, topic.en_phrase, topic.plural, *topic.en]
        return rng.choice(EN_TOPIC).format(a=rng.choice(words), b=rng.choice(topic.en))
    words = [topic.zh2, topic.zh4, *topic.zh]
    a, b = rng.choice(words), rng.choice(topic.zh)
    if lang == "mixed" and rng.random() < 0.5:
        e = rng.choice([topic.en_word, topic.en_phrase, topic.plural])
        return rng.choice(MIXED_TOPIC).format(a=a, b=b, e=e)
    return rng.choice(ZH_TOPIC).format(a=a, b=b)


def document(rng: random.Random, lang: str, topic: Topic | None, filler: int) -> tuple[str, str]:
    """Title and body sentences of one note; `topic` None makes a noise note."""
    fill = EN_FILLER if lang == "en" else ZH_FILLER
    sentences = [rng.choice(fill) for _ in range(rng.randint(3, 6) + filler)]
    if topic is not None:
        sentences += [sentence(rng, lang, topic) for _ in range(rng.randint(2, 4))]
    other = rng.choice([t for t in TOPICS if t is not topic])  # one passing mention
    if topic is None or rng.random() < 0.6:
        mention = other.en_word if lang == "en" else other.zh2
        sentences.append(
            f"Someone briefly mentioned {mention} in passing."
            if lang == "en"
            else f"有人顺便提到了{mention}。"
        )
    rng.shuffle(sentences)
    if topic is None:
        title = rng.choice(
            ["Weekly log", "Meeting notes"] if lang == "en" else ["周报", "会议记录"]
        )
    elif lang == "en":
        title = rng.choice([f"Notes on {topic.en_phrase}", f"About {topic.en[0]}", "Weekly log"])
    else:
        title = rng.choice([f"{topic.zh4}笔记", f"关于{topic.zh[0]}的思考", "周报"])
    return title, (" " if lang == "en" else "").join(sentences)


def section_text(rng: random.Random, lang: str, topic: Topic | None) -> str:
    """One paragraph: filler, and a few sentences about `topic` (None: filler only)."""
    fill = EN_FILLER if lang == "en" else ZH_FILLER
    sentences = [rng.choice(fill) for _ in range(rng.randint(3, 6))]
    if topic is not None:
        sentences += [sentence(rng, lang, topic) for _ in range(rng.randint(2, 4))]
        if rng.random() < 0.5:  # a passing mention of another topic
            other = rng.choice([t for t in TOPICS if t is not topic])
            sentences.append(
                f"This is unrelated to {other.en_word}."
                if lang == "en"
                else f"这和{other.zh2}无关。"
            )
    rng.shuffle(sentences)
    return (" " if lang == "en" else "").join(sentences)


def write_handbooks(
    root: Path, count: int, seed: int
) -> dict[tuple[int, str], dict[str, tuple[str, str]]]:
    """Long documents of several sections; (topic, language) -> {name: (anchor, text)}."""
    rng = random.Random(seed + 1)  # its own stream: the notes stay the same with or without
    found: dict[tuple[int, str], dict[str, tuple[str, str]]] = {}
    for n in range(count):
        lang = ("zh", "en")[n % 2]
        name = f"handbook-{n:03d}" + (".md", ".md", ".html")[n % 3]
        title = f"Handbook {n}" if lang == "en" else f"手册 {n}"
        plan: list[int | None] = [*rng.sample(range(len(TOPICS)), rng.randint(4, 7)), None, None]
        rng.shuffle(plan)
        parts: list[tuple[str, str]] = []
        for k, index in enumerate(plan, start=1):
            topic = TOPICS[index] if index is not None else None
            if topic is not None and rng.random() < 0.5:  # a heading that names the topic
                heading = topic.en[0].capitalize() if lang == "en" else topic.zh[0]
            else:
                heading = f"Part {k}" if lang == "en" else f"第{k}部分"
            parts.append((heading, section_text(rng, lang, topic)))
            if index is not None:  # GitHub's anchor of these plain headings
                found.setdefault((index, lang), {})[name] = (
                    heading.lower().replace(" ", "-"),
                    parts[-1][1],
                )
        intro = section_text(rng, lang, None)
        if name.endswith(".html"):
            sections = "".join(f"<h2>{heading}</h2><p>{body}</p>" for heading, body in parts)
            text = f"<html><head><title>{title}</title></head><body><h1>{title}</h1>"
            text += f"<p>{intro}</p>{sections}</body></html>"
        else:
            text = f"# {title}\n\n{intro}\n\n"
            text += "".join(f"## {heading}\n\n{body}\n\n" for heading, body in parts)
        (root / name).write_text(text, encoding="utf-8")
    return found


def write_corpus(
    root: Path, docs: int, seed: int, filler: int = 0, handbooks: int = 0
) -> list[Query]:
    rng = random.Random(seed)
    relevant: dict[tuple[int, str], set[str]] = {}
    per_topic = docs * 9 // 10 // len(TOPICS)
    plan: list[tuple[str, Topic | None]] = [
        (("zh", "en", "mixed")[n % 3], topic) for topic in TOPICS for n in range(per_topic)
    ]
    plan += [(("zh", "en")[n % 2], None) for n in range(docs - len(plan))]
    for n, (lang, topic) in enumerate(plan):
        title, body = document(rng, lang, topic, filler)
        name = f"note-{n:04d}" + (".md", ".txt", ".html")[n % 3]
        if name.endswith(".md"):
            text = f"---\ndate: 2025-{n % 12 + 1:02d}-01\n---\n# {title} {n}\n\n{body}\n"
        elif name.endswith(".html"):
            text = f"<html><head><title>{title} {n}</title></head><body><p>{body}</p></body></html>"
        else:
            text = body + "\n"
        (root / name).write_text(text, encoding="utf-8")
        if topic is not None:
            index = TOPICS.index(topic)
            for query_lang in ("zh", "en"):
                if lang in (query_lang, "mixed"):
                    relevant.setdefault((index, query_lang), set()).add(name)
    sections = write_handbooks(root, handbooks, seed)
    queries = []
    for index, topic in enumerate(TOPICS):
        for text, kind, lang in (
            (topic.zh2, "zh 2-char", "zh"),
            (topic.zh4, "zh 4-char", "zh"),
            (topic.en_word, "en word", "en"),
            (topic.en_phrase, "en phrase", "en"),
        ):
            in_handbooks = sections.get((index, lang), {})
            documents = frozenset(relevant[(index, lang)] | set(in_handbooks))
            queries.append(Query(text, kind, documents, in_handbooks))
    return queries


def timed(call: Callable[..., object], *args: object, **kwargs: object) -> float:
    started = time.perf_counter()
    call(*args, **kwargs)
    return time.perf_counter() - started


@dataclass(frozen=True)
class Figures:
    median_ms: float
    p95_ms: float
    kind_ms: dict[str, float]  # median latency by kind of query
    recall: dict[str, float]  # by kind of query
    mrr: dict[str, float]
    precision: dict[str, float]
    recall_all: float
    mrr_all: float
    precision_all: float
    handbooks: float  # relevant handbooks in the top 10, per query
    anchor: float  # of those, the share that link to the section about the topic
    snippet: float  # of those, the share whose snippet comes from that section


def evaluate(db: Path, queries: list[Query], repeat: int) -> Figures:
    latencies: dict[str, list[float]] = {}
    recall: dict[str, list[float]] = {}
    mrr: dict[str, list[float]] = {}
    precision: dict[str, list[float]] = {}
    in_section: list[tuple[bool, bool]] = []  # per relevant handbook hit: anchor, snippet
    for query in queries:
        latencies.setdefault(query.kind, []).extend(
            timed(search, db, query.text, 10) * 1000 for _ in range(repeat)
        )
        results = search(db, query.text, 10)
        for hit in results:
            if hit["path"] in query.sections:
                anchor, text = query.sections[hit["path"]]
                in_section.append((hit["url"].endswith(f"#{anchor}"), hit["snippet"] in text))
        ranked = [hit["path"] for hit in results]
        hits = [path in query.relevant for path in ranked]
        recall.setdefault(query.kind, []).append(sum(hits[:5]) / min(5, len(query.relevant)))
        first = next((rank for rank, hit in enumerate(hits, start=1) if hit), None)
        mrr.setdefault(query.kind, []).append(1 / first if first else 0.0)
        precision.setdefault(query.kind, []).append(sum(hits) / 10)
    return Figures(
        median_ms=statistics.median(x for values in latencies.values() for x in values),
        p95_ms=statistics.quantiles([x for v in latencies.values() for x in v], n=20)[-1],
        kind_ms={kind: statistics.median(values) for kind, values in latencies.items()},
        recall={kind: statistics.fmean(values) for kind, values in recall.items()},
        mrr={kind: statistics.fmean(values) for kind, values in mrr.items()},
        precision={kind: statistics.fmean(values) for kind, values in precision.items()},
        recall_all=statistics.fmean(x for values in recall.values() for x in values),
        mrr_all=statistics.fmean(x for values in mrr.values() for x in values),
        precision_all=statistics.fmean(x for values in precision.values() for x in values),
        handbooks=len(in_section) / len(queries),
        anchor=statistics.fmean(anchor for anchor, _ in in_section) if in_section else 0.0,
        snippet=statistics.fmean(snippet for _, snippet in in_section) if in_section else 0.0,
    )


def db_size(db: Path) -> int:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each query for latency")
    parser.add_argument("--filler", type=int, default=0, help="extra filler sentences per note")
    parser.add_argument("--handbooks", type=int, default=30, help="long multi-section documents")
    args = parser.parse_args()
    jieba_load = timed(segment, "预热词典")  # once per process, not part of indexing
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "notes")
        root.mkdir()
        queries = write_corpus(root, args.docs, args.seed, args.filler, args.handbooks)
        corpus_kb = sum(path.stat().st_size for path in root.iterdir()) / 1024
        print(
            f"corpus: {args.docs} notes and {args.handbooks} handbooks, {corpus_kb:.0f} KiB, "
            f"{len(queries)} queries, seed {args.seed}; "
            f"jieba dictionary load {jieba_load:.2f} s (once per process)"
        )
        tokenizers: tuple[Tokenizer, ...] = ("jieba", "trigram")
        results: dict[str, tuple[float, int, Figures]] = {}
        for tokenizer in tokenizers:
            db = Path(tmp, f"{tokenizer}.db")
            seconds = timed(index_folder, db, root, tokenizer=tokenizer)
            results[tokenizer] = (seconds, db_size(db), evaluate(db, queries, args.repeat))
    print(
        f"\n{'tokenizer':<10}{'index s':>9}{'DB KiB':>9}{'median ms':>11}{'p95 ms':>9}"
        f"{'recall@5':>10}{'MRR':>7}{'P@10':>7}"
    )
    for name, (seconds, size, fig) in results.items():
        print(
            f"{name:<10}{seconds:>9.2f}{size / 1024:>9.0f}{fig.median_ms:>11.2f}"
            f"{fig.p95_ms:>9.2f}{fig.recall_all:>10.3f}{fig.mrr_all:>7.3f}{fig.precision_all:>7.3f}"
        )
    print("\nby kind of query: recall@5  MRR  P@10  median ms")
    for kind in results["jieba"][2].recall:
        cells = "   ".join(
            f"{name} {fig.recall[kind]:.3f} {fig.mrr[kind]:.2f} {fig.precision[kind]:.2f}"
            f" {fig.kind_ms[kind]:5.2f}"
            for name, (_, _, fig) in results.items()
        )
        print(f"  {kind:<10} {cells}")
    print("\nrelevant handbooks in the top 10: per query, share at the right #anchor, share")
    print("with the snippet from that section")
    for name, (_, _, fig) in results.items():
        print(f"  {name:<10}{fig.handbooks:>6.2f}{fig.anchor:>8.3f}{fig.snippet:>8.3f}")


if __name__ == "__main__":
    main()
