"""The call log, metrics and redaction, from replayed searches through the gateway:
what one event holds, who asked, what the counters say, and that no key is ever written."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sleuth.config import Settings
from sleuth.contract import SearchRequest
from sleuth.errors import ConfigError
from sleuth.gateway import Sleuth
from sleuth.observe import CallRecord, Observer, ObserveSettings, call_context, query_hash
from sleuth.providers.base import Provider
from sleuth.redaction import REDACTED, RedactSecrets, redact_text, secret_values
from sleuth.resilience.breaker import Breaker, BreakerSettings
from sleuth.store import MemoryStore, cache_key
from sleuth.tasks import TaskRunner
from sleuth.testing import Cassette, fake_provider, registered

QUERY = "solar panel efficiency"
#: Shaped like a real key, so the env-name rule and the value rule both apply.
SECRET = "zq-live-9f8e7d6c5b4a39281706"


def hit(n: int) -> dict[str, Any]:
    return {
        "url": f"https://example{n}.org/solar-{n}",
        "title": f"Solar panel efficiency, part {n}",
        "snippet": f"Modern solar panels convert about {18 + n}% of sunlight into power.",
    }


@pytest.fixture
def fakes() -> Iterator[dict[str, Provider]]:
    made = {name: fake_provider(name) for name in ("alpha", "beta")}
    with registered(*made.values()):
        yield made


def settings(**kw: Any) -> Settings:
    base: dict[str, Any] = {
        "chain": ["alpha", "beta"],
        "providers": {"alpha": {}, "beta": {}},
        "store": {"backend": "memory"},
        "retry": {"max_attempts": 1},
    }
    base.update(kw)
    return Settings(**base)


def observed(conf: Settings, cassette: Cassette, log: Path, **observe: Any) -> Sleuth:
    """A Sleuth whose call log goes to `log` (the `observe:` section, given here)."""
    sleuth = Sleuth(conf, cassette.transport(), store=MemoryStore())
    sleuth.observer = Observer(
        ObserveSettings(log_to=str(log), **observe),
        secret_env=conf.secret_env(),
        watched=[*conf.chain, *conf.backups],
    )
    return sleuth


def events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def sample(sleuth: Sleuth, name: str, **labels: str) -> float | None:
    assert sleuth.observer.metrics is not None
    return sleuth.observer.metrics.registry.get_sample_value(name, labels)


async def test_a_degraded_search_leaves_one_event_with_every_field(
    fakes: dict[str, Provider], tmp_path: Path
) -> None:
    cassette = (
        Cassette()
        .add("alpha", QUERY, body={"results": [hit(1), hit(2)]})
        .add("beta", QUERY, status=503, body={"error": "down for maintenance"})
    )
    log = tmp_path / "calls.jsonl"
    sleuth = observed(settings(), cassette, log)
    with call_context(tenant="acme", tool_name="cli"):
        response = await sleuth.search({"query": QUERY, "include": ["url"]})

    (event,) = events(log)
    assert event["event"] == "search" and event["level"] == "info"
    assert event["task_id"] == response.task_id
    assert (event["tenant"], event["tool_name"]) == ("acme", "cli")
    assert event["query_hash"] == hashlib.sha256(QUERY.encode()).hexdigest()
    assert event["query_hash"] == query_hash(f"  {QUERY.upper()}\u3000")  # normalised
    assert "query" not in event and "keywords" not in event  # not configured
    assert event["start_time"] <= event["end_time"] and event["duration_ms"] >= 0
    assert event["status"] == "degraded"
    assert event["error_code"] == "provider_unavailable"
    assert event["retry_count"] == 0
    assert event["final_result_count"] == len(response.results) == 2
    # Projected results carry no trust score (not included); the log has it anyway.
    assert all(item.source_trust_score is None for item in response.results)
    assert 0 < event["avg_source_trust_score"] <= 1
    assert event["cache"] == "miss"
    by_provider = {p["provider"]: p for p in event["providers"]}
    assert by_provider["alpha"]["outcome"] == "ok" and by_provider["alpha"]["results"] == 2
    assert by_provider["beta"]["outcome"] == "error"
    assert by_provider["beta"]["error_code"] == "provider_unavailable"
    assert all(p["latency_ms"] >= 0 for p in event["providers"])
    failed = [d for d in event["degradations"] if d["kind"] == "provider_failed"]
    assert failed and failed[0]["provider"] == "beta"
    assert "provider_unavailable" in failed[0]["reason"]
    assert [e["code"] for e in event["errors"]] == ["provider_unavailable"]


async def test_retries_are_summed_over_providers(
    fakes: dict[str, Provider], tmp_path: Path
) -> None:
    cassette = (
        Cassette()
        .add("alpha", QUERY, body={"results": [hit(1)]})
        .add("beta", QUERY, status=503, body={"error": "busy"})
        .add("beta", QUERY, body={"results": [hit(2)]})
    )
    log = tmp_path / "calls.jsonl"
    conf = settings(retry={"max_attempts": 2, "base_delay_s": 0, "min_attempt_s": 0})
    sleuth = observed(conf, cassette, log)
    await sleuth.search(QUERY)

    (event,) = events(log)
    assert event["status"] == "ok" and event["retry_count"] == 1
    assert {p["provider"]: p["retries"] for p in event["providers"]} == {"alpha": 0, "beta": 1}
    assert sample(sleuth, "sleuth_provider_retries_total", provider="beta") == 1


async def test_the_raw_query_is_logged_only_when_configured(
    fakes: dict[str, Provider], tmp_path: Path
) -> None:
    cassette = Cassette().add("alpha", QUERY, body={"results": [hit(1)]})
    cassette.add("beta", QUERY, body={"results": [hit(2)]})
    log = tmp_path / "calls.jsonl"
    sleuth = observed(settings(), cassette, log, log_raw_query=True)
    await sleuth.search(QUERY)

    (event,) = events(log)
    assert event["query"] == QUERY and event["keywords"]


async def test_a_refused_request_is_a_failed_event_with_its_code(
    fakes: dict[str, Provider], tmp_path: Path
) -> None:
    log = tmp_path / "calls.jsonl"
    sleuth = observed(settings(), Cassette(), log)
    with pytest.raises(Exception, match="time_range"):
        await sleuth.search({"query": "q", "time_range": "today"})

    (event,) = events(log)
    assert event["level"] == "warning"
    assert (event["status"], event["error_code"]) == ("failed", "invalid_request")
    assert event["query_hash"] == hashlib.sha256(b"q").hexdigest()
    assert event["final_result_count"] == 0 and event["providers"] == []
    assert sample(sleuth, "sleuth_errors_total", code="invalid_request", provider="") == 1


async def test_a_cached_answer_calls_no_provider(
    fakes: dict[str, Provider], tmp_path: Path
) -> None:
    cassette = Cassette().add("alpha", QUERY, body={"results": [hit(1)]})
    cassette.add("beta", QUERY, body={"results": [hit(2)]})
    log = tmp_path / "calls.jsonl"
    sleuth = observed(settings(), cassette, log)
    await sleuth.search(QUERY)
    await sleuth.search(QUERY)

    first, again = events(log)
    assert first["status"] == "ok" and first["cache"] == "miss"
    assert again["status"] == "cached" and again["cache"] == "hit"
    assert again["providers"] == [] and again["retry_count"] == 0
    assert sample(sleuth, "sleuth_cache_lookups_total", result="hit") == 1
    assert sample(sleuth, "sleuth_provider_calls_total", provider="alpha", outcome="ok") == 1


async def test_a_task_names_its_tenant_and_the_task_tool(
    fakes: dict[str, Provider], tmp_path: Path
) -> None:
    cassette = Cassette().add("alpha", QUERY, body={"results": [hit(1)]})
    cassette.add("beta", QUERY, body={"results": [hit(2)]})
    log = tmp_path / "calls.jsonl"
    sleuth = observed(settings(), cassette, log)
    store = MemoryStore()
    async with TaskRunner(sleuth, store) as runner:
        task, _ = await runner.submit({"query": QUERY}, tenant="globex")
        done = await runner.wait(task.task_id, "globex")

    assert done.status == "success"
    (event,) = events(log)
    assert (event["tenant"], event["tool_name"]) == ("globex", "task")
    assert event["task_id"] == task.task_id


async def test_metrics_count_searches_providers_and_errors(
    fakes: dict[str, Provider], tmp_path: Path
) -> None:
    cassette = (
        Cassette()
        .add("alpha", QUERY, body={"results": [hit(1), hit(2)]})
        .add("beta", QUERY, status=503, body={"error": "down"})
        .add("alpha", "wind turbines", body={"results": []})
        .add("beta", "wind turbines", body={"results": []})
    )
    sleuth = observed(settings(), cassette, tmp_path / "calls.jsonl")
    await sleuth.search(QUERY)
    await sleuth.search("wind turbines")

    assert sample(sleuth, "sleuth_searches_total", tool_name="library", status="degraded") == 1
    assert sample(sleuth, "sleuth_searches_total", tool_name="library", status="failed") == 1
    assert (
        sample(
            sleuth, "sleuth_search_duration_seconds_count", tool_name="library", status="degraded"
        )
        == 1
    )
    assert sample(sleuth, "sleuth_provider_calls_total", provider="alpha", outcome="ok") == 1
    assert sample(sleuth, "sleuth_provider_calls_total", provider="beta", outcome="error") == 1
    assert sample(sleuth, "sleuth_provider_calls_total", provider="beta", outcome="empty") == 1
    assert sample(sleuth, "sleuth_provider_duration_seconds_count", provider="alpha") == 2
    errors = {"code": "provider_unavailable", "provider": "beta"}
    assert sample(sleuth, "sleuth_errors_total", **errors) == 1
    assert sample(sleuth, "sleuth_degradations_total", kind="provider_failed") == 1
    assert sample(sleuth, "sleuth_cache_lookups_total", result="miss") == 2

    figures = sleuth.observer.dashboard_figures()
    assert figures["searches"] == 2 and figures["failure_rate"] == 0.5
    # Every error a response reports: both providers found nothing, then the search.
    assert figures["error_codes"] == [
        {"code": "no_results", "count": 3},
        {"code": "provider_unavailable", "count": 1},
    ]
    assert {p["provider"] for p in figures["providers"]} == {"alpha", "beta"}
    assert figures["p95_series"] and figures["p95_series"][0]["count"] == 2
    assert {k["keyword"] for k in figures["hot_keywords"]} >= {"solar", "wind"}


async def test_quota_waits_and_refusals_are_counted(
    fakes: dict[str, Provider], tmp_path: Path
) -> None:
    cassette = Cassette()
    for _ in range(6):
        cassette.add("alpha", QUERY, body={"results": [hit(1)]})
    # Four tokens, one more every 250 ms: the fifth call waits for one, then (told
    # not to wait) the sixth is refused.
    quota = {"default": {"rate_per_s": 4, "burst_per_s": 4, "burst_window_s": 0}}
    conf = settings(chain=["alpha"], cache={"enabled": False}, quota=quota)
    sleuth = observed(conf, cassette, tmp_path / "calls.jsonl")
    for _ in range(4):
        await sleuth.search(QUERY)
    assert sample(sleuth, "sleuth_quota_waits_total", pool="alpha") is None
    await sleuth.search(QUERY)
    waited = sample(sleuth, "sleuth_quota_waits_total", pool="alpha")
    assert waited == 1
    assert (sample(sleuth, "sleuth_quota_wait_seconds_total", pool="alpha") or 0) > 0

    refusing = conf.model_copy(update={"quota": conf.quota.model_copy(update={"max_wait_s": 0.0})})
    sleuth.settings = refusing
    response = await sleuth.search(QUERY)
    assert response.providers["alpha"].status == "skipped"
    assert sample(sleuth, "sleuth_quota_rejections_total", pool="alpha") == 1


async def test_breaker_states_and_queue_depth_are_read_on_scrape(
    fakes: dict[str, Provider], tmp_path: Path
) -> None:
    store = MemoryStore()
    sleuth = Sleuth(settings(), Cassette().transport(), store=store)
    breaker = Breaker(store, BreakerSettings())
    for _ in range(4):  # the same CAPTCHA four times in a row opens it
        await breaker.record("beta", "unexpected", detail="captcha")
    runner = TaskRunner(sleuth, store)  # not started: the tasks stay pending
    await runner.submit({"query": "one"})
    await runner.submit({"query": "two"})

    states = await sleuth.observer.states(store, store)

    assert states.breakers["alpha"][0] == "closed"
    assert states.breakers["beta"][0] == "open" and "captcha" in states.breakers["beta"][1]
    assert sample(sleuth, "sleuth_breaker_state", provider="beta") == 2
    assert sample(sleuth, "sleuth_breaker_state", provider="alpha") == 0
    assert sample(sleuth, "sleuth_task_queue_depth") == 2
    assert sample(sleuth, "sleuth_tasks", status="pending") == 2
    assert b"sleuth_breaker_state" in (
        sleuth.observer.metrics.render() if sleuth.observer.metrics else b""
    )


# --- redaction ------------------------------------------------------------------------


async def test_a_key_echoed_in_a_provider_error_never_reaches_log_response_or_dashboard(
    fakes: dict[str, Provider], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BETA_KEY_VAR", SECRET)  # a name no rule guesses: configured only
    conf = settings(providers={"alpha": {}, "beta": {"api_key_env": "BETA_KEY_VAR"}})
    leak = f"invalid api key {SECRET}; sent as ?token={SECRET} with Authorization: Bearer {SECRET}"
    cassette = (
        Cassette()
        .add("alpha", QUERY, body={"results": [hit(1)]})
        .add("beta", QUERY, status=401, body={"error": leak})
    )
    log = tmp_path / "calls.jsonl"
    sleuth = observed(conf, cassette, log, log_raw_query=True)
    response = await sleuth.search(QUERY)

    text = log.read_text(encoding="utf-8")
    assert SECRET not in text and REDACTED in text
    (event,) = events(log)
    assert event["error_code"] == "auth_failed"
    assert REDACTED in event["errors"][0]["message"]
    answer = response.model_dump_json()
    assert SECRET not in answer and REDACTED in answer
    figures = json.dumps(sleuth.observer.dashboard_figures())
    assert SECRET not in figures and REDACTED in figures
    key = cache_key(SearchRequest(query=QUERY), conf.chain)
    cached = await sleuth.store.get_cached(key, time.time())
    assert cached is not None  # the partial answer was kept, without the key
    assert SECRET not in json.dumps(cached.entry.response) and REDACTED in json.dumps(
        cached.entry.response
    )


def test_the_processor_redacts_headers_keys_and_secret_env_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ACME_API_TOKEN", "tok-5551234567890")  # named like a secret
    monkeypatch.setenv("PLAIN_SETTING", "tok-5551234567890-not-secret-by-name")
    sleuth_key = "sk_" + "A1b2C3d4" * 5
    event = {
        "event": "search",
        "headers": {"Authorization": "Bearer whatever-it-is", "X-API-Key": "abc", "Accept": "*/*"},
        "url": "https://api.example.org/search?q=rust&key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI",
        "note": [f"agent used {sleuth_key}", "token in env: tok-5551234567890"],
        "prefix": sleuth_key[:11],  # shown on purpose to tell keys apart: too short to be one
        "count": 3,
    }
    out = RedactSecrets()(None, "info", event)

    dumped = json.dumps(out)
    assert "whatever-it-is" not in dumped and "AIza" not in dumped
    assert sleuth_key not in dumped and "tok-5551234567890" not in dumped
    assert out["headers"] == {"Authorization": REDACTED, "X-API-Key": REDACTED, "Accept": "*/*"}
    assert out["url"] == f"https://api.example.org/search?q=rust&key={REDACTED}"
    assert out["prefix"] == sleuth_key[:11] and out["count"] == 3


def test_secret_values_follow_the_environment_as_it_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LATE_SERVICE_TOKEN", raising=False)
    monkeypatch.delenv("BETA_KEY_VAR", raising=False)
    before = secret_values(["BETA_KEY_VAR"])
    assert SECRET not in before
    monkeypatch.setenv("LATE_SERVICE_TOKEN", SECRET)  # set after the first search
    assert SECRET in secret_values(["BETA_KEY_VAR"])
    monkeypatch.setenv("LATE_SERVICE_TOKEN", "changed-value-12345")
    now = secret_values(["BETA_KEY_VAR"])
    assert SECRET not in now and "changed-value-12345" in now
    monkeypatch.delenv("LATE_SERVICE_TOKEN")
    monkeypatch.setenv("BETA_KEY_VAR", SECRET)  # a configured name, not a guessed one
    assert SECRET in secret_values(["BETA_KEY_VAR"]) and SECRET not in secret_values()
    assert "changed-value-12345" not in secret_values(["BETA_KEY_VAR"])


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic "),
        ('{"api_key": "0123456789abcdef"}', '{"api_key": "'),
        ("exa error: x-api-key=0f1e2d3c4b5a6978 rejected", "exa error: x-api-key="),
        ("openai sk-proj-AbCdEfGhIjKlMnOpQrSt said no", "openai "),
        ("python 3.13 adds a free-threaded build", "python 3.13 adds a free-threaded build"),
    ],
)
def test_redact_text(text: str, kept: str) -> None:
    redacted = redact_text(text, ())
    assert redacted.startswith(kept)
    assert (REDACTED in redacted) == (kept != text)


async def test_a_key_pasted_into_a_query_is_not_a_hot_keyword(
    fakes: dict[str, Provider], tmp_path: Path
) -> None:
    query = "sk_live_0123456789abcdefghij rate limits"
    cassette = Cassette().add("alpha", query, body={"results": [hit(1)]})
    cassette.add("beta", query, body={"results": [hit(2)]})
    log = tmp_path / "calls.jsonl"
    sleuth = observed(settings(), cassette, log, log_raw_query=True)
    await sleuth.search(query)

    keywords = [k["keyword"] for k in sleuth.observer.dashboard_figures()["hot_keywords"]]
    assert "limits" in keywords or "rate" in keywords
    assert not any("0123456789" in k for k in keywords)
    assert "0123456789abcdefghij" not in log.read_text(encoding="utf-8")


# --- sinks, traces ----------------------------------------------------------------------


async def test_log_targets(
    fakes: dict[str, Provider], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = Cassette().add("alpha", QUERY, body={"results": [hit(1)]})
    cassette.add("beta", QUERY, body={"results": [hit(2)]})
    sleuth = Sleuth(settings(), cassette.transport(), store=MemoryStore())
    await sleuth.search(QUERY)  # the library: auto means off
    assert capsys.readouterr().out == ""

    sleuth.observer.start(auto="stdout")  # as the HTTP service does
    await sleuth.search({"query": QUERY, "no_cache": True, "providers": ["alpha"]})
    sleuth.observer.close()
    (line,) = capsys.readouterr().out.splitlines()
    assert json.loads(line)["status"] in ("ok", "failed")


def test_a_span_per_search_when_traces_are_on(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = pytest.importorskip("opentelemetry.trace")
    spans: list[dict[str, Any]] = []

    class Span:
        def __init__(self, name: str, start_time: int, attributes: dict[str, Any]) -> None:
            self.record: dict[str, Any] = {"name": name, "start": start_time, **attributes}
            spans.append(self.record)

        def add_event(self, name: str, attributes: dict[str, Any]) -> None:
            self.record.setdefault("events", []).append((name, attributes))

        def set_status(self, status: Any) -> None:
            self.record["error"] = True

        def end(self, end_time: int) -> None:
            self.record["end"] = end_time

    class Tracer:
        def start_span(self, name: str, **kw: Any) -> Span:
            return Span(name, kw["start_time"], kw["attributes"])

    monkeypatch.setattr(trace, "get_tracer", lambda *_a, **_k: Tracer())
    observer = Observer(ObserveSettings(log_to="off", traces=True))
    observer.record(
        CallRecord("t1", "acme", "web_search", "q", 10.0, 10.5, 0.5, error=TimeoutError())
    )

    (span,) = spans
    assert span["name"] == "sleuth.search" and span["sleuth.status"] == "failed"
    assert span["sleuth.error_code"] == "internal_error" and span["error"] is True
    assert (span["start"], span["end"]) == (10_000_000_000, 10_500_000_000)


def test_the_grafana_dashboard_queries_only_exported_metrics() -> None:
    grafana = Path(__file__).parents[1] / "deploy" / "grafana" / "sleuth.json"
    dashboard = json.loads(grafana.read_text(encoding="utf-8"))
    queried = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\bsleuth_\w+", target["expr"])
    }
    suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_count", "_sum"], "gauge": [""]}
    metrics = Observer().metrics
    assert metrics is not None
    exported = {
        family.name + suffix
        for family in metrics.registry.collect()
        for suffix in suffixes.get(family.type, [])
    }
    assert queried and queried <= exported, queried - exported
    titles = " ".join(panel["title"] for panel in dashboard["panels"]).lower()
    for needed in ("p95", "failure rate", "error codes", "provider share", "breakers", "queue"):
        assert needed in titles


def test_a_log_file_that_cannot_be_written_stops_the_start(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    observer = Observer(ObserveSettings(log_to=str(blocker / "calls.jsonl")))
    with pytest.raises(ConfigError, match=r"observe\.log_to"):
        observer.start(auto="stdout")
    Observer(ObserveSettings(log_to="off")).start(auto="stdout")  # nothing to check
