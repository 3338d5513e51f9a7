"""The optional model summary against a local stub of an OpenAI-compatible server."""

import json
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from sleuth.contract import ResultItem
from sleuth.errors import RateLimited
from sleuth.model_summary import summarize_with_model
from sleuth.stages.facts.grounding import GroundingSettings
from sleuth.stages.summary.llm_summary import LLMSummarySettings
from sleuth.transport import HttpTransport

QUERY = "iPhone 15 价格"
RESULTS = [
    ResultItem(id="a", url="https://a.example/iphone", providers=["brave"], title="iPhone 15",
               snippet="iPhone 15 售价 5999 元。它有三种颜色。"),
    ResultItem(id="b", url="https://b.example/mate", providers=["brave"], title="Mate 60 Pro",
               snippet="Mate 60 Pro 支持卫星通话。续航表现出色。"),
]  # fmt: skip


def completion(text: str) -> dict[str, object]:
    """A body shaped as the chat completions reference shows."""
    return {
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "created": 1677652288,
        "model": "gpt-4o-mini",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21},
    }


@pytest.fixture
def settings(httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> LLMSummarySettings:
    monkeypatch.setenv("SLEUTH_TEST_LLM_KEY", "sk-test")
    return LLMSummarySettings(
        enabled=True, base_url=httpserver.url_for("/v1"), api_key_env="SLEUTH_TEST_LLM_KEY"
    )


async def test_grounded_sentences_are_kept_and_cited_mixed_ones_dropped(
    httpserver: HTTPServer, settings: LLMSummarySettings, tmp_path: Path
) -> None:
    answer = "iPhone 15 售价 5999 元 [1]。Mate 60 Pro 支持卫星通话 [2]。iPhone 15 支持卫星通话。"
    httpserver.expect_request(
        "/v1/chat/completions", method="POST", headers={"Authorization": "Bearer sk-test"}
    ).respond_with_json(completion(answer))
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite")
    summary = await summarize_with_model(
        transport, "iPhone 15 和 Mate 60 Pro", RESULTS, settings, GroundingSettings(), 5.0
    )
    await transport.aclose()
    sent = json.loads(httpserver.log[0][0].get_data())
    assert "[1]" in json.dumps(sent, ensure_ascii=False)  # the snippets went numbered
    kept = [(s.text, s.citations[0].result) for s in summary.sentences]
    assert [source for _, source in kept] == [0, 1]
    for sentence in summary.sentences:
        (citation,) = sentence.citations
        cited = RESULTS[citation.result].snippet[citation.start : citation.end]
        assert cited and cited in RESULTS[citation.result].snippet
    (dropped,) = summary.degradations
    assert dropped.kind == "summary_sentence_dropped" and "mixed" in dropped.reason


async def test_a_failing_model_raises_the_contract_error(
    httpserver: HTTPServer, settings: LLMSummarySettings, tmp_path: Path
) -> None:
    httpserver.expect_request("/v1/chat/completions").respond_with_json(
        {
            "error": {
                "message": "Rate limit reached",
                "type": "requests",
                "code": "rate_limit_exceeded",
            }
        },
        status=429,
        headers={"Retry-After": "2"},
    )
    transport = HttpTransport(kb_path=tmp_path / "kb.sqlite")
    with pytest.raises(RateLimited) as caught:
        await summarize_with_model(transport, "q", RESULTS, settings, GroundingSettings(), 5.0)
    await transport.aclose()
    assert caught.value.retry_after_s == 2


async def test_a_search_shows_the_grounded_model_summary_or_falls_back(
    httpserver: HTTPServer, settings: LLMSummarySettings
) -> None:
    from sleuth.testing import Cassette, fake_provider, memory_settings, registered

    answer = "iPhone 15 售价 5999 元 [1]。iPhone 15 支持卫星通话。"
    httpserver.expect_ordered_request("/v1/chat/completions").respond_with_json(completion(answer))
    httpserver.expect_ordered_request("/v1/chat/completions").respond_with_data("down", status=503)
    body = {"results": [{"url": r.url, "title": r.title, "snippet": r.snippet} for r in RESULTS]}
    served = memory_settings(
        chain=["shop"], providers={"shop": {}}, llm_summary=settings, retry={"max_attempts": 1}
    )
    with registered(fake_provider("shop")):
        from sleuth.gateway import Sleuth

        class ModelThenCassette:
            """Provider calls from the cassette; the model call over real HTTP."""

            def __init__(self) -> None:
                self.replay = (
                    Cassette()
                    .add("shop", QUERY, body=body)
                    .add("shop", QUERY, body=body)
                    .transport()
                )
                self.http = HttpTransport(kb_path=Path("unused.sqlite"))

            async def send(self, provider, query, request, timeout_s):  # type: ignore[no-untyped-def]
                inner = self.http if provider == "llm_summary" else self.replay
                return await inner.send(provider, query, request, timeout_s)

            async def aclose(self) -> None:
                await self.http.aclose()

        transport = ModelThenCassette()
        sleuth = Sleuth(served, transport)
        grounded = await sleuth.search({"query": QUERY, "no_cache": True})
        failed = await sleuth.search({"query": QUERY, "no_cache": True})
        await transport.aclose()
    assert [s.text for s in grounded.summary] == ["iPhone 15 售价 5999 元 [1]。"]
    assert any(d.kind == "summary_sentence_dropped" for d in grounded.degradations)
    assert failed.summary and all(s.citations for s in failed.summary)  # the extractive one
    assert any(d.kind == "model_summary_failed" for d in failed.degradations)
