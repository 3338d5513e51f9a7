"""Declared tools run end to end through the gateway: a templated search with its
fixed fields applied, and a composite whose failing part degrades, never fails, the
answer."""

from collections.abc import Iterator
from typing import Any

import pytest

from sleuth.config import Settings
from sleuth.errors import InvalidRequest, ToolNotFound
from sleuth.gateway import Sleuth
from sleuth.observe import ObserveSettings
from sleuth.providers.base import Provider
from sleuth.testing import Cassette, fake_provider, registered
from sleuth.workflows.composite import CompositeResponse
from sleuth.workflows.tool_book import ToolBook, tools_from_data
from sleuth.workflows.toolbox import ToolBox

COMPANY = "ACME Robotics"

TOOLS = tools_from_data(
    [
        {
            "name": "registry_search",
            "description": "The business registry's entry for a company",
            "parameters": {"company": {"required": True}},
            "search": {
                "query": "{{company}} business registry",
                "providers": ["registry"],
                "projection": ["title", "snippet", "url"],
            },
        },
        {
            "name": "company_intel_search",
            "description": "Registry, court records and news sentiment about one company",
            "parameters": {"company": {"required": True, "description": "The company's name"}},
            "parts": [
                {
                    "name": "registry",
                    "tool": "registry_search",
                    "arguments": {"company": "{{company}}"},
                    "weight": 2,
                },
                {
                    "name": "court",
                    "search": {"query": "{{company}} court records", "providers": ["court"]},
                },
                {
                    "name": "news",
                    "search": {"query": "{{company}} news", "providers": ["news"]},
                },
            ],
        },
    ],
    "test tools",
)


def hit(n: int, site: str, text: str) -> dict[str, Any]:
    return {"url": f"https://{site}/{n}", "title": f"{COMPANY} {text} {n}", "snippet": text}


@pytest.fixture
def backends() -> Iterator[None]:
    made: list[Provider] = [fake_provider(name) for name in ("registry", "court", "news")]
    with registered(*made):
        yield


def sleuth_with(cassette: Cassette, records: list[Any] | None = None) -> Sleuth:
    settings = Settings(
        chain=["registry"],
        providers={"registry": {}, "court": {}, "news": {}},
        store={"backend": "memory"},
        tools=TOOLS,
        observe=ObserveSettings(log_to="off"),
    )
    sleuth = Sleuth(settings, cassette.transport())
    if records is not None:
        original = sleuth.observer.record

        def keep(record: Any) -> None:
            records.append(record)
            original(record)

        sleuth.observer.record = keep  # type: ignore[method-assign]
    return sleuth


def answering(court_status: int = 200) -> Cassette:
    cassette = (
        Cassette()
        .add(
            "registry",
            f"{COMPANY} business registry",
            body={"results": [hit(1, "registry.example", "registered in 2015, capital 10m")]},
        )
        .add(
            "news",
            f"{COMPANY} news",
            body={"results": [hit(2, "news.example", "wins a contract"), hit(3, "b.example", "x")]},
        )
    )
    for _ in range(3):  # a 503 is retried twice
        cassette.add(
            "court",
            f"{COMPANY} court records",
            status=court_status,
            body={"results": [hit(4, "court.example", "no open cases")]}
            if court_status == 200
            else "unavailable",
        )
    return cassette


async def test_a_simple_tool_fills_its_query_and_keeps_its_projection(backends: None) -> None:
    records: list[Any] = []
    answer = await ToolBox(sleuth_with(answering(), records)).call(
        "registry_search", {"company": COMPANY}
    )
    assert not isinstance(answer, CompositeResponse)
    assert answer.query == f"{COMPANY} business registry"
    assert list(answer.providers) == ["registry"]
    (item,) = answer.model_dump(mode="json")["results"]
    assert set(item) == {"title", "snippet", "url"}
    # The call record names the declared tool, for usage by tool.
    assert [(r.tool, r.workflow) for r in records] == [("registry_search", None)]


async def test_a_composite_with_a_failing_part_answers_with_the_rest_and_names_it(
    backends: None,
) -> None:
    records: list[Any] = []
    answer = await ToolBox(sleuth_with(answering(court_status=503), records)).call(
        "company_intel_search", {"company": COMPANY}
    )
    assert isinstance(answer, CompositeResponse)
    parts = {part.name: part for part in answer.parts}
    assert parts["registry"].status == "ok" and parts["registry"].results
    assert parts["news"].status == "ok" and len(parts["news"].results) == 2
    assert parts["court"].status == "failed" and parts["court"].results == []
    (failed,) = answer.failed
    assert (failed.part, failed.code) == ("court", "provider_unavailable")
    assert answer.degraded
    # The overall confidence: the answering parts' weighted confidences over every
    # part's weight (2 + 1 + 1), the failed one counting zero.
    registry, news = parts["registry"].confidence, parts["news"].confidence
    assert registry is not None and news is not None
    assert answer.confidence == pytest.approx((2 * registry + news) / 4, abs=1e-4)
    assert {r.tool for r in records} == {"company_intel_search"} and len(records) == 3


async def test_every_part_answering_gives_a_higher_confidence(backends: None) -> None:
    whole = await ToolBox(sleuth_with(answering())).call(
        "company_intel_search", {"company": COMPANY}
    )
    partial = await ToolBox(sleuth_with(answering(court_status=503))).call(
        "company_intel_search", {"company": COMPANY}
    )
    assert isinstance(whole, CompositeResponse) and isinstance(partial, CompositeResponse)
    assert whole.failed == [] and not any(p.status == "failed" for p in whole.parts)
    assert whole.confidence > partial.confidence


async def test_a_part_refused_for_its_arguments_is_a_failed_part_not_an_error(
    backends: None,
) -> None:
    tools = tools_from_data(
        [
            TOOLS[0].model_dump(exclude_none=True),
            {
                "name": "intel",
                "description": "d",
                "parameters": {"company": {"required": True}},
                "parts": [
                    {"name": "registry", "tool": "registry_search", "arguments": {"company": 5}},
                    {
                        "name": "news",
                        "search": {"query": "{{company}} news", "providers": ["news"]},
                    },
                ],
            },
        ],
        "t",
    )
    sleuth = sleuth_with(answering())
    sleuth.settings = sleuth.settings.model_copy(update={"tools": tools})
    sleuth.tools = ToolBook(tools)
    answer = await ToolBox(sleuth).call("intel", {"company": COMPANY})
    assert isinstance(answer, CompositeResponse)
    assert [(f.part, f.code) for f in answer.failed] == [("registry", "invalid_request")]
    assert "company" in answer.failed[0].reason
    assert {p.name: p.status for p in answer.parts} == {"registry": "failed", "news": "ok"}


async def test_unknown_tools_and_bad_arguments_are_the_callers_errors(backends: None) -> None:
    toolbox = ToolBox(sleuth_with(answering()))
    with pytest.raises(ToolNotFound) as missing:
        await toolbox.call("registry", {})
    assert missing.value.allowed == ["company_intel_search", "registry_search"]
    with pytest.raises(InvalidRequest) as bad:
        await toolbox.call("registry_search", {"company": COMPANY, "year": 2020})
    assert bad.value.field == "year" and bad.value.allowed == ["company"]


def test_the_declared_tools_are_listed_in_every_form(backends: None) -> None:
    sleuth = sleuth_with(Cassette())
    (intel, registry) = ToolBox(sleuth).definitions()
    assert intel["mcp"]["name"] == "company_intel_search"
    assert intel["mcp"]["outputSchema"]["properties"]["failed"]["type"] == "array"
    assert registry["openai_strict"]["function"]["parameters"]["required"] == ["company"]
    assert registry["anthropic"]["input_schema"]["properties"]["company"]["type"] == "string"
