"""Verification end to end, on replayed real-shaped bodies: facts, summary, confidence."""

from pathlib import Path

import pytest

from sleuth.config import Settings
from sleuth.gateway import Sleuth

DATA = Path(__file__).parent / "data"


async def search(query: str, cassette: Path, provider: str) -> dict:  # type: ignore[type-arg]
    served = Settings(
        replay=cassette, projection={"optional": ["url", "fact_check", "source_trust_score"]}
    )
    async with Sleuth(served) as sleuth:
        response = await sleuth.search(
            {
                "query": query,
                "providers": [provider],
                "include": ["url", "fact_check", "source_trust_score"],
            }
        )
    return response.model_dump(mode="json")


@pytest.mark.parametrize(
    ("query", "majority", "minority", "unit"),
    [("iPhone 16 价格", 5999, 6999, "CNY"), ("iPhone 16 price", 799, 829, "USD")],
)
async def test_a_price_two_domains_agree_on_and_a_third_disputes(
    query: str, majority: float, minority: float, unit: str
) -> None:
    response = await search(query, DATA / "prices.jsonl", "brave")
    (price,) = [f for f in response["facts"] if f["unit"] == unit and f["status"] == "disputed"]
    assert price["value"] == majority
    by_value = {v["value"]: v for v in price["values"]}
    assert len(by_value[majority]["domains"]) == 2
    assert len(by_value[minority]["domains"]) == 1
    results = response["results"]
    assert {results[i]["fact_check"] for i in by_value[majority]["sources"]} == {"agreed"}
    assert {results[i]["fact_check"] for i in by_value[minority]["sources"]} == {"disputed"}


async def test_every_summary_sentence_is_cited_inside_its_snippet() -> None:
    response = await search("iPhone 16 价格", DATA / "prices.jsonl", "brave")
    assert response["summary"]
    for sentence in response["summary"]:
        (citation,) = sentence["citations"]
        snippet = response["results"][citation["result"]]["snippet"]
        assert snippet[citation["start"] : citation["end"]] == sentence["text"]


async def test_results_carry_trust_and_the_answer_a_confidence() -> None:
    response = await search("iPhone 16 价格", DATA / "prices.jsonl", "brave")
    assert all(0 < item["source_trust_score"] <= 1 for item in response["results"])
    assert 0 < response["confidence"] < 1
