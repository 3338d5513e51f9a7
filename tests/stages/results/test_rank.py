"""rank: BM25 over the candidates fused with each provider's order by reciprocal rank."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sleuth.contract import ResultItem
from sleuth.stages.results.rank import RankSettings, bm25_scores, rank

SETTINGS = RankSettings()
K = SETTINGS.rrf_k


def item(item_id: str, title: str, snippet: str = "", **ranks: int) -> ResultItem:
    return ResultItem(
        id=item_id, url=None, title=title, snippet=snippet, providers=list(ranks), ranks=ranks
    )


def ids(items: list[ResultItem]) -> list[str]:
    return [i.id for i in items]


def test_empty_and_single() -> None:
    assert rank([], ["python"], SETTINGS) == []
    [only] = rank([item("a", "Rust book", bing=4)], ["python"], SETTINGS)
    assert only.relevance == 1.0


def test_first_in_bm25_and_first_at_the_provider_weigh_the_same() -> None:
    items = [
        item("packaging", "Python packaging user guide", "How to build wheels.", bing=1),
        item("gil", "Python 3.13 makes the GIL optional", "A free-threaded build.", bing=2),
        item("rust", "Rust release notes", "Rust 1.80 is out.", bing=3),
    ]

    result = rank(items, ["GIL", "optional"], SETTINGS)

    # BM25 order: gil (matches), then packaging and rust with score 0 in bing's order
    fused = {
        "gil": 1 / (K + 1) + 1 / (K + 2),
        "packaging": 1 / (K + 2) + 1 / (K + 1),
        "rust": 1 / (K + 3) + 1 / (K + 3),
    }
    # gil and packaging tie exactly: the tie keeps first-seen order
    assert ids(result) == ["packaging", "gil", "rust"]
    assert [r.relevance for r in result] == pytest.approx([1.0, 1.0, fused["rust"] / fused["gil"]])


def test_agreement_of_providers_and_bm25_decides() -> None:
    items = [
        item("ad-like", "Cheap laptops", "Deals on laptops.", bing=1),
        item(
            "docs",
            "asyncio — Asynchronous I/O",
            "asyncio is a library to write concurrent code.",
            bing=2,
            brave=1,
            searxng=1,
        ),
        item("blog", "My asyncio journey", "Notes on asyncio tasks.", brave=2),
    ]

    result = rank(items, ["asyncio", "tasks"], SETTINGS)

    assert ids(result) == ["docs", "blog", "ad-like"]
    assert result[0].relevance == 1.0
    assert all(0.0 <= r.relevance <= 1.0 for r in result)


def test_chinese_query_where_providers_disagree_text_decides() -> None:
    # baidu and bing swap the first two; BM25 breaks the deadlock
    items = [
        item("roast-duck", "北京烤鸭推荐", "全聚德和便宜坊哪家好吃。", baidu=1, bing=2),
        item("beijing", "北京天气预报", "北京今天晴，最高气温二十八度。", baidu=2, bing=1),
        item("shanghai", "上海天气预报", "上海今天多云，气温二十五度。", baidu=3, bing=3),
    ]

    result = rank(items, ["北京天气"], SETTINGS)

    # beijing matches 北京, 京天 and 天气; the others one bigram each
    scores = bm25_scores(items, ["北京天气"], SETTINGS)
    assert scores[1] > scores[0] > 0
    assert scores[1] > scores[2] > 0
    assert ids(result) == ["beijing", "roast-duck", "shanghai"]
    assert result[1].relevance == pytest.approx(
        (1 / (K + 2) + 1 / (K + 1) + 1 / (K + 2)) / (1 / (K + 1) + 1 / (K + 2) + 1 / (K + 1))
    )


def test_mixed_language_query_terms() -> None:
    items = [
        item("en", "Python 3.13 released", "The Python team announced 3.13.", google=1, bing=2),
        item(
            "zh", "Python 3.13 发布", "Python 3.13 正式发布，带来自由线程构建。", google=2, bing=1
        ),
    ]

    assert ids(rank(items, ["Python", "发布"], SETTINGS)) == ["zh", "en"]


def test_results_that_match_nothing_follow_their_providers_order() -> None:
    items = [
        item("late", "Unrelated A", bing=9),
        item("early", "Unrelated B", brave=1),
        item("unranked", "Unrelated C"),
    ]

    result = rank(items, ["python"], SETTINGS)

    # BM25 ranks by best provider position: early 1, late 2, unranked 3
    assert ids(result) == ["early", "late", "unranked"]
    assert result[1].relevance == pytest.approx(
        (1 / (K + 2) + 1 / (K + 9)) / (1 / (K + 1) + 1 / (K + 1))
    )
    assert result[2].relevance == pytest.approx((1 / (K + 3)) / (2 / (K + 1)))


def test_equal_scores_keep_first_seen_order() -> None:
    twin_a = item("a", "Same text", "Identical snippet.", bing=1)
    twin_b = item("b", "Same text", "Identical snippet.", brave=1)

    assert ids(rank([twin_a, twin_b], [], SETTINGS)) == ["a", "b"]
    assert ids(rank([twin_b, twin_a], [], SETTINGS)) == ["b", "a"]


def test_title_terms_weigh_more_than_snippet_terms() -> None:
    in_title = item("title", "Kubernetes eviction", "How nodes reclaim memory.")
    in_snippet = item("snippet", "How nodes reclaim memory", "Kubernetes eviction.")
    items = [in_snippet, in_title]

    weighted = bm25_scores(items, ["eviction"], SETTINGS)
    flat = bm25_scores(items, ["eviction"], RankSettings(title_weight=1.0))

    assert weighted[1] > weighted[0] > 0
    assert flat[0] == pytest.approx(flat[1])


def test_idf_stays_positive_for_a_term_every_result_contains() -> None:
    items = [item(str(n), f"Python tutorial part {n}") for n in range(5)]

    assert all(score > 0 for score in bm25_scores(items, ["python"], SETTINGS))


def test_bm25_weight_zero_leaves_the_providers_order() -> None:
    items = [
        item("miss", "Unrelated", bing=1),
        item("hit", "Python asyncio", bing=2),
    ]

    assert ids(rank(items, ["asyncio"], RankSettings(bm25_weight=0.0))) == ["miss", "hit"]
    assert ids(rank(items, ["asyncio"], RankSettings(bm25_weight=2.0))) == ["hit", "miss"]


def test_a_full_text_back_end_that_answered_alone_keeps_its_order() -> None:
    # The knowledge base put the section that answers first, from its full text; the
    # snippets of the next two repeat more of the query's words.
    items = [
        item("answer", "CREATE INDEX CONCURRENTLY", "Writes go on while it builds.", local=1),
        item("modes", "Explicit locking", "Table-level locks and locking modes.", local=2),
        item("view", "Lock monitoring", "The pg_locks view shows each table lock.", local=3),
    ]
    terms = ["locking", "table"]

    kept = rank(items, terms, SETTINGS, full_text=["local"])
    assert ids(kept) == ["answer", "modes", "view"]
    assert [r.relevance for r in kept] == pytest.approx([1.0, 61 / 62, 61 / 63])
    # Without it, or with a web back end among the answers, BM25 is fused in as before.
    assert ids(rank(items, terms, SETTINGS)) == ["modes", "answer", "view"]
    mixed = [*items, item("web", "Unrelated", bing=4)]
    assert ids(rank(mixed, terms, SETTINGS, full_text=["local"]))[0] == "modes"


def test_inputs_are_not_changed() -> None:
    original = item("a", "Python", bing=2)

    rank([original, item("b", "Rust", bing=1)], ["python"], SETTINGS)

    assert original.relevance == 0.0


def test_settings_defaults_and_strictness() -> None:
    assert (SETTINGS.rrf_k, SETTINGS.bm25_k1, SETTINGS.bm25_b) == (60, 1.2, 0.75)
    assert (SETTINGS.title_weight, SETTINGS.bm25_weight) == (2.0, 1.0)
    with pytest.raises(ValidationError):
        RankSettings(bm25_b=1.5)
    with pytest.raises(ValidationError):
        RankSettings.model_validate({"k": 10})


def test_dates_and_trust_do_not_move_a_result_so_they_may_be_judged_after_rank() -> None:
    # The gateway dates and scores only the results rank puts in the answer.
    plain = [
        item("old", "Python 3.13 release notes", "What is new.", bing=1),
        item("new", "Python 3.13 is out", "Python 3.13 released today.", bing=2),
        item("other", "Rust notes", "Rust 1.80.", ddg=1),
    ]
    judged = [
        plain[0].model_copy(update={"freshness": "archive", "source_trust_score": 0.1}),
        plain[1].model_copy(update={"freshness": "realtime", "source_trust_score": 0.9}),
        plain[2].model_copy(update={"dated_from": "url", "trust_breakdown": {"authority": 1.0}}),
    ]
    for reordered in (judged, judged[::-1]):
        by_id = {i.id: i for i in plain}
        expected = rank([by_id[i.id] for i in reordered], ["python", "3.13"], SETTINGS)
        assert ids(rank(reordered, ["python", "3.13"], SETTINGS)) == ids(expected)


def test_limit_keeps_the_best_and_their_relevance() -> None:
    items = [
        item("a", "Python packaging", bing=1),
        item("b", "Python 3.13 GIL", bing=2),
        item("c", "Rust", bing=3),
    ]
    everything = rank(items, ["gil"], SETTINGS)
    assert rank(items, ["gil"], SETTINGS, limit=2) == everything[:2]
    assert rank(items, ["gil"], SETTINGS, limit=0) == []
