"""One provider call through breaker, quota, retry and the rules; each chain slot's race
to its backups. What an operator reads in the outcome: status, retries, the classified
error, and the degradations with their reasons.

Everything runs on an event loop with virtual time (the loop jumps to its next timer),
whose clock the policies get as theirs, so no test waits and every time is exact.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import pytest

from sleuth.errors import MissingApiKey, QuotaExceeded
from sleuth.providers.base import HttpRequest
from sleuth.resilience.breaker import Breaker, BreakerSettings
from sleuth.resilience.call import (
    Exchange,
    Policies,
    ProviderCall,
    ProviderOutcome,
    ask_chain,
)
from sleuth.resilience.hedge import HedgeSettings, LatencyTracker
from sleuth.resilience.quota import Quota, QuotaSettings
from sleuth.resilience.retry import RetrySettings
from sleuth.resilience.rules import RuleBook
from sleuth.resilience.stragglers import StragglerSettings
from sleuth.store import BreakerRecord, MemoryStore
from sleuth.testing import FAKE_MAPPING, fake_provider, run_in_virtual_time
from sleuth.transport import RawResponse

HITS = {"results": [{"url": "https://a.example/", "title": "A", "snippet": "An answer."}]}


run = run_in_virtual_time


def now() -> float:
    return asyncio.get_running_loop().time()


@dataclass
class Step:
    """One answer: after `delay` virtual seconds, a status and body, or `error` raised."""

    delay: float = 0.01
    status: int = 200
    body: Any = field(default_factory=lambda: HITS)
    error: Exception | None = None


@dataclass
class Scripted:
    """A provider answering its steps in order (the last one repeats)."""

    name: str
    steps: list[Step]
    sent_at: list[float] = field(default_factory=list)
    cancelled: bool = False
    build_error: Exception | None = None

    async def send(self, request: HttpRequest, timeout_s: float) -> RawResponse:
        step = self.steps[min(len(self.sent_at), len(self.steps) - 1)]
        self.sent_at.append(now())
        try:
            await asyncio.sleep(step.delay)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        if step.error is not None:
            raise step.error
        return RawResponse(step.status, {"content-type": "application/json"}, step.body)

    def exchange(self, timeout_s: float = 3.0) -> Exchange:
        provider = fake_provider(self.name)

        def build() -> HttpRequest:
            if self.build_error is not None:
                raise self.build_error
            return HttpRequest("GET", f"https://{self.name}.invalid/search", {"q": "q"})

        return Exchange(
            build=build,
            send=self.send,
            parse=lambda r: provider.parse_response(r.status, r.headers, r.body, FAKE_MAPPING),
            timeout_s=timeout_s,
        )


def policies(
    store: MemoryStore | None = None,
    *,
    quota: QuotaSettings | None = None,
    hedge: HedgeSettings | None = None,
) -> Policies:
    store = store or MemoryStore()
    return Policies(
        rules=RuleBook(),
        breaker=Breaker(store, BreakerSettings(), clock=now),
        quota=Quota(store, quota or QuotaSettings(), clock=now),
        latency=LatencyTracker(),
        retry=RetrySettings(),
        hedge=hedge or HedgeSettings(),
        clock=now,
        wall=now,
        rng=random.Random(7),  # noqa: S311 - jitter, repeatable
    )


async def call_once(
    provider: Scripted, shared: Policies | None = None, deadline_s: float = 3.0
) -> ProviderOutcome:
    call = ProviderCall(
        provider.name,
        provider.exchange(),
        shared or policies(),
        priority="normal",
        deadline=now() + deadline_s,
    )
    return await call.run()


# --- one provider ---------------------------------------------------------------------


def test_a_recoverable_failure_is_retried_and_the_answer_kept() -> None:
    alpha = Scripted("alpha", [Step(status=503, body="busy"), Step()])
    outcome = run(lambda: call_once(alpha))
    assert (outcome.status, outcome.retries, outcome.error) == ("ok", 1, None)
    assert len(outcome.hits) == 1 and len(alpha.sent_at) == 2


def test_retries_stop_before_the_deadline_with_the_classified_error() -> None:
    alpha = Scripted("alpha", [Step(delay=0.4, status=504, body="gateway timeout")])

    async def main() -> tuple[ProviderOutcome, float]:
        outcome = await call_once(alpha, deadline_s=1.0)
        return outcome, now()

    outcome, ended = run(main)
    assert ended <= 1.0
    assert outcome.status == "error" and outcome.retries == len(alpha.sent_at) - 1 >= 1
    assert outcome.error is not None
    info = outcome.error.info()
    assert (info.code, info.category, info.action, info.http_status) == (
        "provider_unavailable",
        "recoverable",
        "retry",
        504,
    )


def test_a_failure_the_rules_send_elsewhere_is_not_retried() -> None:
    alpha = Scripted("alpha", [Step(status=401, body={"error": "invalid API key"})])
    outcome = run(lambda: call_once(alpha))
    assert outcome.error is not None
    assert (outcome.error.code, outcome.error.category, outcome.error.action) == (
        "auth_failed",
        "non_recoverable",
        "fallback",
    )
    assert len(alpha.sent_at) == 1 and outcome.retries == 0


def test_a_captcha_that_repeats_opens_the_breaker_and_the_next_call_is_skipped() -> None:
    alpha = Scripted("alpha", [Step(body="<html>are you a robot? captcha</html>")])

    async def main() -> list[ProviderOutcome]:
        shared = policies()
        return [await call_once(alpha, shared) for _ in range(5)]

    *captchas, skipped = run(main)
    for first in captchas:  # one to three CAPTCHA pages: the provider is still asked
        assert first.error is not None
        assert (first.error.code, first.error.action) == ("captcha", "open_breaker")
    assert skipped.status == "skipped" and skipped.error is None
    (skip,) = skipped.degradations
    assert skip.kind == "breaker_open" and skip.provider == "alpha"
    assert "4 unexpected answers in a row: captcha" in skip.reason
    assert "next probe in 15s" in skip.reason
    assert "skipped until 1970-01-01T00:00:15" in skip.reason  # opened at virtual time ~0
    assert len(alpha.sent_at) == 4  # the skipped call never went out


def test_no_quota_token_before_the_deadline_falls_back_instead_of_waiting() -> None:
    one_per_second = QuotaSettings(
        pools={"alpha": {"rate_per_s": 1, "burst_per_s": 1, "burst_window_s": 0}}
    )
    alpha = Scripted("alpha", [Step(delay=0.0)])

    async def main() -> tuple[ProviderOutcome, ProviderOutcome, float]:
        shared = policies(quota=one_per_second)
        first = await call_once(alpha, shared)
        second = await call_once(alpha, shared, deadline_s=0.3)
        return first, second, now()

    first, second, ended = run(main)
    assert first.status == "ok"
    assert second.status == "skipped" and second.error is None
    (refused,) = second.degradations
    assert refused.kind == "quota_exhausted" and "no token from pool 'alpha'" in refused.reason
    assert ended == pytest.approx(0.0)  # refused at once: the token would come after 0.3 s
    assert len(alpha.sent_at) == 1


def test_an_empty_answer_is_no_results_with_a_suggestion() -> None:
    alpha = Scripted("alpha", [Step(body={"results": []})])
    outcome = run(lambda: call_once(alpha))
    assert outcome.status == "empty" and outcome.error is not None
    assert (outcome.error.code, outcome.error.category, outcome.error.action) == (
        "no_results",
        "non_recoverable",
        "report",
    )
    assert "suggestion: broaden the query" in outcome.error.message
    assert outcome.answered  # nothing found is an answer: no backup is asked for it


def test_a_missing_key_skips_the_provider_without_calling_it() -> None:
    alpha = Scripted("alpha", [Step()], build_error=MissingApiKey("alpha needs $ALPHA_KEY"))
    outcome = run(lambda: call_once(alpha))
    assert outcome.status == "skipped" and not alpha.sent_at
    assert outcome.error is not None
    assert (outcome.error.code, outcome.error.action) == ("missing_api_key", "fallback")
    assert outcome.error.provider == "alpha"


def test_every_attempt_teaches_the_hedge_its_latency() -> None:
    alpha = Scripted("alpha", [Step(delay=0.3, status=503, body="busy"), Step(delay=0.2)])

    async def main() -> Policies:
        shared = policies()
        await call_once(alpha, shared)
        return shared

    shared = run(main)
    assert shared.latency.count("alpha") == 2
    assert shared.latency.p95("alpha") == pytest.approx(0.3)


# --- the chain ------------------------------------------------------------------------


def chain(
    chosen: list[Scripted],
    backups: list[Scripted] = (),  # type: ignore[assignment]
    *,
    deadline_s: float = 3.0,
    shared: Callable[[], Policies] = policies,
    before: Callable[[Policies], Coroutine[Any, Any, None]] | None = None,
    want_results: int = 1,
) -> tuple[dict[str, ProviderOutcome], list[str], float]:
    """Run `ask_chain`; the outcomes by provider, the fallback reasons, and when it ended."""
    by_name = {provider.name: provider for provider in [*chosen, *backups]}

    async def main() -> tuple[dict[str, ProviderOutcome], list[str], float]:
        made = shared()
        if before is not None:
            await before(made)
        outcomes, fallbacks = await ask_chain(
            [provider.name for provider in chosen],
            [provider.name for provider in backups],
            lambda name: by_name[name].exchange(),
            made,
            priority="normal",
            deadline=now() + deadline_s,
            deadline_s=deadline_s,
            want_results=want_results,
        )
        assert all(step.kind == "fallback" for step in fallbacks)
        return {o.provider: o for o in outcomes}, [step.reason for step in fallbacks], now()

    return run(main)


def fixed_hedge(delay_s: float, *, enabled: bool = True) -> Callable[[], Policies]:
    def make() -> Policies:
        return policies(hedge=HedgeSettings(enabled=enabled, default_delay_s=delay_s))

    return make


def test_without_backups_every_chosen_provider_is_asked_at_once() -> None:
    alpha, beta = Scripted("alpha", [Step(delay=1.0)]), Scripted("beta", [Step(delay=1.0)])
    outcomes, fallbacks, ended = chain([alpha, beta])
    assert alpha.sent_at == [0.0] and beta.sent_at == [0.0]
    assert {name: o.status for name, o in outcomes.items()} == {"alpha": "ok", "beta": "ok"}
    assert fallbacks == [] and ended == pytest.approx(1.0)


def test_a_failed_provider_is_replaced_by_the_next_backup() -> None:
    alpha = Scripted("alpha", [Step(status=401, body="bad key")])
    beta, gamma = Scripted("beta", [Step()]), Scripted("gamma", [Step()])
    outcomes, fallbacks, _ = chain([alpha], [beta, gamma])
    assert outcomes["alpha"].status == "error" and outcomes["beta"].status == "ok"
    assert "gamma" not in outcomes and not gamma.sent_at
    assert fallbacks == ["alpha failed (auth_failed); asked beta instead"]


def test_a_provider_that_exhausts_its_retries_falls_back_with_the_count() -> None:
    alpha = Scripted("alpha", [Step(status=504, body="gateway timeout")])
    beta = Scripted("beta", [Step()])
    outcomes, fallbacks, _ = chain([alpha], [beta], shared=fixed_hedge(2.0))
    assert outcomes["alpha"].retries == 2 and outcomes["beta"].status == "ok"
    assert fallbacks == ["alpha failed (provider_unavailable after 3 attempts); asked beta instead"]


def test_a_slow_provider_is_hedged_and_the_first_good_answer_wins() -> None:
    alpha, beta = Scripted("alpha", [Step(delay=5.0)]), Scripted("beta", [Step(delay=0.2)])
    outcomes, fallbacks, ended = chain([alpha], [beta], shared=fixed_hedge(0.5))
    assert beta.sent_at == [pytest.approx(0.5)] and ended == pytest.approx(0.7)
    assert alpha.cancelled
    assert outcomes["alpha"].status == "timeout" and outcomes["alpha"].error is None
    assert outcomes["beta"].status == "ok"
    assert fallbacks == ["alpha had not answered within its 0.50 s hedge delay; asked beta too"]


def test_a_backup_beaten_by_its_primary_is_cancelled_and_no_fallback_recorded() -> None:
    alpha, beta = Scripted("alpha", [Step(delay=0.8)]), Scripted("beta", [Step(delay=1.0)])
    outcomes, fallbacks, ended = chain([alpha], [beta], shared=fixed_hedge(0.5))
    assert ended == pytest.approx(0.8) and beta.cancelled
    assert outcomes["alpha"].status == "ok" and outcomes["beta"].status == "skipped"
    assert fallbacks == []


def test_with_hedging_off_a_slow_provider_keeps_the_whole_deadline() -> None:
    alpha, beta = Scripted("alpha", [Step(delay=2.0)]), Scripted("beta", [Step()])
    outcomes, fallbacks, _ = chain([alpha], [beta], shared=fixed_hedge(0.5, enabled=False))
    assert outcomes["alpha"].status == "ok" and not beta.sent_at and fallbacks == []


def test_each_backup_stands_in_for_one_provider_only() -> None:
    alpha = Scripted("alpha", [Step(status=401, body="bad key")])
    beta = Scripted("beta", [Step(delay=0.02, status=401, body="bad key")])
    gamma = Scripted("gamma", [Step()])
    outcomes, fallbacks, _ = chain([alpha, beta], [gamma])
    assert len(gamma.sent_at) == 1 and outcomes["gamma"].status == "ok"
    assert fallbacks == ["alpha failed (auth_failed); asked gamma instead"]


def test_a_provider_with_an_open_breaker_is_replaced_by_a_backup() -> None:
    alpha, beta = Scripted("alpha", [Step()]), Scripted("beta", [Step()])

    async def trip(made: Policies) -> None:
        for _ in range(4):
            await made.breaker.record("alpha", "unexpected", detail="captcha")

    outcomes, fallbacks, _ = chain([alpha], [beta], before=trip)
    assert not alpha.sent_at and outcomes["alpha"].status == "skipped"
    assert outcomes["alpha"].degradations[0].kind == "breaker_open"
    assert fallbacks == ["alpha was skipped (breaker_open); asked beta instead"]


def test_the_deadline_cuts_what_is_still_running() -> None:
    alpha, beta = Scripted("alpha", [Step(delay=10.0)]), Scripted("beta", [Step(delay=0.1)])
    outcomes, _, ended = chain([alpha, beta], deadline_s=1.0)
    assert ended == pytest.approx(1.0) and alpha.cancelled
    cut = outcomes["alpha"]
    assert cut.status == "timeout" and cut.error is not None
    assert (cut.error.code, cut.error.category, cut.error.action) == (
        "deadline_exceeded",
        "recoverable",
        "fallback",
    )
    assert "1.0s deadline" in cut.error.message
    assert outcomes["beta"].status == "ok"


# --- stragglers, and what the breaker is told ------------------------------------------


def test_a_straggler_is_left_behind_once_the_others_have_answered() -> None:
    fast = [Scripted(name, [Step(delay=0.05)]) for name in ("alpha", "beta")]
    hung = Scripted("gamma", [Step(delay=10.0)])
    outcomes, _, ended = chain([*fast, hung])
    assert ended == pytest.approx(1.0)  # nothing learned of gamma yet: waited 1 s
    left = outcomes["gamma"]
    assert left.status == "timeout" and left.error is None and hung.cancelled
    (step,) = left.degradations
    assert step.kind == "straggler" and step.provider == "gamma"
    assert "answered with alpha, beta" in step.reason
    assert all(outcomes[name].status == "ok" for name in ("alpha", "beta"))


def test_a_straggler_is_left_at_its_learned_latency() -> None:
    fast = [Scripted(name, [Step(delay=0.05)]) for name in ("alpha", "beta")]
    slow = Scripted("gamma", [Step(delay=5.0)])

    def learned() -> Policies:
        made = policies()
        for _ in range(20):
            made.latency.record("gamma", 0.3)
        return made

    outcomes, _, ended = chain([*fast, slow], shared=learned)
    assert ended == pytest.approx(0.3)
    assert "usually answers within 0.30 s" in outcomes["gamma"].degradations[0].reason


def test_too_few_results_from_the_others_and_the_slow_one_is_waited_for() -> None:
    alpha, slow = Scripted("alpha", [Step(delay=0.05)]), Scripted("beta", [Step(delay=2.0)])
    outcomes, _, ended = chain([alpha, slow], want_results=5)  # alpha has one result
    assert ended == pytest.approx(2.0) and outcomes["beta"].status == "ok"


def test_a_slot_a_busy_loop_started_late_gets_its_whole_patience() -> None:
    """Real time: the event loop is held for 0.4 s as the search starts, so every slot
    begins late; gamma (0.15 s, patience 0.25 s) must not be left behind when the
    others answer 0.01 s after they began."""
    fast = [Scripted(name, [Step(delay=0.01)]) for name in ("alpha", "beta")]
    slow = Scripted("gamma", [Step(delay=0.15)])
    by_name = {provider.name: provider for provider in [*fast, slow]}

    async def main() -> dict[str, ProviderOutcome]:
        made = policies()
        for _ in range(20):
            made.latency.record("gamma", 0.15)
        asyncio.get_running_loop().call_soon(time.sleep, 0.4)  # runs before any slot
        outcomes, _ = await ask_chain(
            list(by_name),
            [],
            lambda name: by_name[name].exchange(),
            made,
            priority="normal",
            deadline=now() + 3.0,
            deadline_s=3.0,
            want_results=1,
        )
        return {outcome.provider: outcome for outcome in outcomes}

    with asyncio.Runner() as runner:
        outcomes = runner.run(main())
    assert outcomes["gamma"].status == "ok", outcomes["gamma"].degradations
    assert not outcomes["gamma"].degradations


def test_stragglers_off_every_provider_gets_the_whole_deadline() -> None:
    alpha, slow = Scripted("alpha", [Step(delay=0.05)]), Scripted("beta", [Step(delay=2.0)])

    def patient() -> Policies:
        made = policies()
        made.stragglers = StragglerSettings(enabled=False)
        return made

    outcomes, _, ended = chain([alpha, slow], shared=patient)
    assert ended == pytest.approx(2.0) and outcomes["beta"].status == "ok"


def test_calls_cut_by_the_deadline_never_count_against_the_breaker() -> None:
    hung = Scripted("alpha", [Step(delay=10.0)])

    async def main() -> tuple[list[ProviderOutcome], BreakerRecord]:
        shared = policies()
        cut = [await call_once(hung, shared, deadline_s=1.0) for _ in range(8)]
        return cut, await shared.breaker.store.get_breaker("alpha")

    cut, record = run(main)
    assert {outcome.status for outcome in cut} == {"timeout"}
    assert cut[-1].error is not None and cut[-1].error.code == "deadline_exceeded"
    assert record.state == "closed" and record.calls == ()
    assert len(hung.sent_at) == 8  # never skipped


def test_a_probe_cut_by_the_deadline_is_given_back_for_the_next_search() -> None:
    hung = Scripted("alpha", [Step(delay=10.0)])

    async def main() -> tuple[bool, bool]:
        shared = policies()
        for _ in range(4):
            await shared.breaker.record("alpha", "unexpected", detail="captcha")
        await asyncio.sleep(15)  # the first opening is over
        await call_once(hung, shared, deadline_s=1.0)  # the probe, cut
        decision = await shared.breaker.allow("alpha")
        return decision.allowed, decision.probe

    assert run(main) == (True, True)


def test_a_quota_used_up_is_not_retried_and_rests_the_provider_until_its_reset() -> None:
    used_up = QuotaExceeded("alpha: the month's searches are used up", retry_after_s=600.0)
    alpha = Scripted("alpha", [Step(error=used_up)])

    async def main() -> tuple[ProviderOutcome, ProviderOutcome]:
        shared = policies()
        return await call_once(alpha, shared), await call_once(alpha, shared)

    first, second = run(main)
    assert first.error is not None and (first.error.code, first.retries) == ("quota_exceeded", 0)
    assert first.error.action == "fallback"
    assert second.status == "skipped" and len(alpha.sent_at) == 1
    (skip,) = second.degradations
    assert "quota used up" in skip.reason and "next probe in 600s" in skip.reason


def test_a_timeout_held_up_by_a_busy_event_loop_is_not_the_providers() -> None:
    """Real time: another task holds the loop for 0.4 s while the provider's 0.2 s
    timeout is due, so the timeout fires ~0.2 s late."""
    hung = Scripted("alpha", [Step(delay=10.0)])

    async def main() -> tuple[ProviderOutcome, BreakerRecord]:
        shared = policies()
        shared.clock = time.perf_counter
        shared.retry = RetrySettings(max_attempts=1)

        async def hog() -> None:
            await asyncio.sleep(0.1)
            time.sleep(0.4)

        call = ProviderCall(
            "alpha",
            hung.exchange(timeout_s=0.2),
            shared,
            priority="normal",
            deadline=time.perf_counter() + 3.0,
        )
        outcome, _ = await asyncio.gather(call.run(), hog())
        return outcome, await shared.breaker.store.get_breaker("alpha")

    with asyncio.Runner() as runner:
        outcome, record = runner.run(main())
    assert outcome.error is not None and outcome.error.code == "provider_timeout"
    assert record.calls == ()  # not counted


def left_behind_failing(retry: RetrySettings) -> tuple[ProviderOutcome, BreakerRecord]:
    """alpha and beta answer; gamma answers 503 to every attempt and is left behind at
    its learned 0.3 s."""
    fast = [Scripted(name, [Step(delay=0.01)]) for name in ("alpha", "beta")]
    failing = Scripted("gamma", [Step(delay=0.01, status=503, body="busy")])

    def learned() -> Policies:
        made = policies()
        made.retry = retry
        for _ in range(20):
            made.latency.record("gamma", 0.3)
        return made

    made = learned()
    outcomes, _, _ = chain([*fast, failing], shared=lambda: made)
    record = run(lambda: made.breaker.store.get_breaker("gamma"))
    return outcomes["gamma"], record


def test_a_straggler_whose_one_attempt_failed_is_not_counted() -> None:
    outcome, record = left_behind_failing(RetrySettings(base_delay_s=1.0, jitter="none"))
    assert outcome.status == "error" and outcome.retries == 0  # its retry was waiting
    assert outcome.degradations[-1].kind == "straggler"
    assert record.calls == ()


def test_a_straggler_whose_every_attempt_failed_is_counted() -> None:
    retry = RetrySettings(max_attempts=5, base_delay_s=0.05, jitter="none")
    outcome, record = left_behind_failing(retry)
    assert outcome.status == "error" and outcome.retries >= 1
    assert [(call.failed, call.code) for call in record.calls] == [(True, "provider_unavailable")]
