"""Field profiling and the before/after measure, on real-shaped bodies."""

import json
from pathlib import Path

from sleuth.field_profile import (
    answer_bearing,
    approx_tokens,
    kept_by_projection,
    measure,
    profile,
    suggest_projection,
    walk,
)
from sleuth.mapping_files import builtin_mapping

DATA = Path(__file__).parent / "data"


def test_walk_lists_leaf_paths_with_lists_as_brackets() -> None:
    body = {"a": {"b": [1, 2], "c": {"d": "x"}}, "e": [{"f": 1}], "g": []}
    assert sorted({path for path, _ in walk(body)}) == ["a.b[]", "a.c.d", "e[].f", "g"]
    assert sorted({path for path, _ in walk(body, skip="e")}) == ["a.b[]", "a.c.d", "g"]


def test_stable_is_the_intersection_over_runs_and_results() -> None:
    mapping = builtin_mapping("searxng")
    first = {"query": "q", "results": [{"url": "u1", "title": "A", "content": "x", "score": 1}]}
    second = {"query": "q", "results": [
        {"url": "u2", "title": "B", "content": "", "score": 2, "publishedDate": "2026-01-01"},
        {"url": "u3", "title": "C", "content": "z", "score": 3},
    ]}  # fmt: skip
    found = profile([first, second], mapping)
    assert (found.runs, found.results) == (2, 3)
    assert found.stable == ["score", "title", "url"]
    assert found.occasional == ["content", "publishedDate"]  # an empty string is not present
    assert list(found.top_level) == ["query"]
    assert found.result_fields["publishedDate"].samples == ['"2026-01-01"']


def test_suggestion_keeps_answer_fields_and_flags_unstable_sources() -> None:
    mapping = builtin_mapping("wikipedia")
    body = json.loads((DATA / "wikipedia" / "search_en.json").read_text(encoding="utf-8"))
    suggestion = suggest_projection(profile([body], mapping), mapping, "wikipedia")
    assert "  always: [title, snippet" in suggestion
    assert "snippet comes from 'snippet', which is not stable" in suggestion
    assert "#   pageid" in suggestion


def test_tokens_count_chinese_characters_one_each() -> None:
    assert approx_tokens("abcdefgh") == 2
    assert approx_tokens("北京天气") == 4


def test_measure_counts_characters_items_and_coverage() -> None:
    mapping = builtin_mapping("searxng")
    raw = {
        "searxng": {"results": [{"url": "u", "title": "A", "content": "x" * 500}, {"title": "B"}]}
    }
    projected = [{"title": "A", "snippet": "x" * 100, "url": "u"}, {"title": "B", "snippet": "B"}]
    plain = measure("q", raw, {"searxng": mapping}, projected, citing=False)
    assert plain.raw_items == 2 and plain.projected_items == 2
    assert plain.raw_chars == len(json.dumps(raw["searxng"]))
    assert plain.reduction > 0.5
    assert plain.coverage == 1.0
    citing = measure("q", raw, {"searxng": mapping}, projected, citing=True)
    assert citing.coverage == 0.5  # the second item has no url to cite
    assert not answer_bearing({"title": "T", "snippet": ""}, citing=False)


def test_kept_counts_fields_the_back_end_never_sent_as_not_lost() -> None:
    never_sent = {"title": "T", "snippet": "T", "degraded": True, "missing": ["snippet"]}
    lost = {"title": "T", "snippet": ""}
    assert kept_by_projection(never_sent, citing=False)
    assert not kept_by_projection(lost, citing=False)
    assert not kept_by_projection({"title": "T", "snippet": "S"}, citing=True)  # url dropped
    assert kept_by_projection({"title": "T", "snippet": "S", "missing": ["url"]}, citing=True)
