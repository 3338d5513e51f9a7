"""Error rules: every default rule on a realistic failure, first match wins, the file
reloads when edited, and a broken edit keeps the last good rules."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from sleuth import errors
from sleuth.errors import (
    AuthFailed,
    BadResponse,
    ConfigError,
    DeadlineExceeded,
    EgressDenied,
    MissingApiKey,
    NoResults,
    PolicyViolation,
    ProviderRejected,
    ProviderTimeout,
    ProviderUnavailable,
    QuotaExceeded,
    RateLimited,
    ReplayMiss,
    SearchError,
    ServiceError,
)
from sleuth.providers.base import check_status, expect_object
from sleuth.resilience.rules import (
    DEFAULT_RULES_FILE,
    Classification,
    Failure,
    Rule,
    RuleBook,
    RulesSettings,
    classify,
    parse_rules,
)
from sleuth.transport import RawResponse, decode_body

HTML = {"content-type": "text/html; charset=utf-8"}
JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def book() -> RuleBook:
    return RuleBook()


def raised(call: Callable[[], object]) -> Exception:
    try:
        call()
    except AssertionError:
        raise
    except Exception as exc:  # noqa: BLE001 - the test wants whatever was raised
        return exc
    raise AssertionError("expected an exception")


def answered(provider: str, status: int, headers: dict[str, str], body: Any) -> Failure:
    """What a provider's parser makes of an answer, as the gateway would see it."""
    response = RawResponse(status, headers, body)

    def parse() -> None:
        check_status(provider, status, headers, body)
        expect_object(provider, body)
        raise AssertionError("the answer parsed")

    return Failure.of(provider, raised(parse), response=response)


def caused(error: SearchError, cause: BaseException) -> SearchError:
    error.__cause__ = cause
    return error


# (rule name, failure, category, code, action): one realistic failure per default rule.
CASES: list[tuple[str, Failure, str, str, str]] = [
    (
        "geoblocked",
        answered("brave", 451, JSON, {"error": "geoblocked: this service is not available in CN"}),
        "recoverable",
        "geoblocked",
        "fallback",
    ),
    (
        "captcha",
        answered(
            "google",
            200,
            HTML,
            "<html><title>Are you a robot?</title><div class='g-recaptcha'></div></html>",
        ),
        "unexpected",
        "captcha",
        "open_breaker",
    ),
    (
        "deadline_exceeded",
        Failure.of("exa", DeadlineExceeded("exa had not answered when the 3.0s deadline passed")),
        "recoverable",
        "deadline_exceeded",
        "fallback",
    ),
    (
        "quota_exceeded",
        Failure.of(
            "tavily",
            QuotaExceeded(
                "tavily answered HTTP 432: This request exceeds your plan's set usage limit",
                provider="tavily",
                http_status=432,
            ),
            status=432,
            body={"detail": {"error": "This request exceeds your plan's set usage limit."}},
        ),
        "non_recoverable",
        "quota_exceeded",
        "fallback",
    ),
    (
        "timeout",
        Failure.of(
            "tavily",
            caused(
                ProviderTimeout("tavily did not answer within 2.0s", provider="tavily"),
                aiohttp.SocketTimeoutError("Timeout on reading data from socket"),
            ),
        ),
        "recoverable",
        "provider_timeout",
        "retry",
    ),
    (
        "rate_limited_429",
        answered("serpapi", 429, {**JSON, "retry-after": "2"}, {"error": "Too many requests"}),
        "recoverable",
        "rate_limited",
        "retry",
    ),
    (
        "rate_limited",
        Failure.of(
            "wikipedia",
            RateLimited(
                "wikipedia API error maxlag: Waiting for a database server: 3 seconds lagged",
                provider="wikipedia",
                http_status=200,
                retry_after_s=5,
            ),
        ),
        "recoverable",
        "rate_limited",
        "retry",
    ),
    (
        "gateway_unavailable",
        answered("brave", 504, HTML, "<html><h1>504 Gateway Time-out</h1></html>"),
        "recoverable",
        "provider_unavailable",
        "retry",
    ),
    (
        "connection_failed",
        Failure.of(
            "searxng",
            caused(
                ProviderUnavailable("cannot reach searxng: ClientOSError", provider="searxng"),
                aiohttp.ClientOSError(111, "Connection refused"),
            ),
        ),
        "recoverable",
        "connection_failed",
        "retry",
    ),
    (
        "provider_unavailable",
        Failure.of(
            "searxng",
            ProviderUnavailable(
                "searxng found nothing and its engines failed: google: timeout",
                provider="searxng",
                http_status=200,
            ),
        ),
        "recoverable",
        "provider_unavailable",
        "retry",
    ),
    (
        "policy_violation",
        answered("tavily", 400, JSON, {"detail": {"error": "Query violates our content policy."}}),
        "non_recoverable",
        "policy_violation",
        "report",
    ),
    (
        "bad_key",
        answered(
            "brave",
            401,
            JSON,
            {"type": "ErrorResponse", "error": {"code": "SUBSCRIPTION_TOKEN_INVALID"}},
        ),
        "non_recoverable",
        "auth_failed",
        "fallback",
    ),
    (
        "auth_failed",
        Failure.of(
            "wikipedia",
            AuthFailed("wikipedia API error permissiondenied", provider="wikipedia"),
        ),
        "non_recoverable",
        "auth_failed",
        "fallback",
    ),
    (
        "missing_api_key",
        Failure.of("brave", MissingApiKey("brave needs an API key ($BRAVE_API_KEY); skipped")),
        "non_recoverable",
        "missing_api_key",
        "fallback",
    ),
    (
        "no_results",
        Failure.of(None, NoResults("no results for 'qwxz 2031 quarterly'")),
        "non_recoverable",
        "no_results",
        "report",
    ),
    (
        "replay_miss",
        Failure.of("exa", ReplayMiss("the cassette has no answer for provider 'exa'")),
        "non_recoverable",
        "replay_miss",
        "fallback",
    ),
    (
        "server_error",
        answered("exa", 500, JSON, {"error": "Internal Server Error"}),
        "recoverable",
        "server_error",
        "retry",
    ),
    (
        "other_5xx",
        answered("google", 501, HTML, "<html>Not Implemented</html>"),
        "unexpected",
        "server_error",
        "open_breaker",
    ),
    (
        "other_4xx",
        answered("google", 404, JSON, {"error": {"code": 404, "message": "Not Found"}}),
        "non_recoverable",
        "provider_rejected",
        "fallback",
    ),
    (
        "provider_rejected",
        Failure.of(
            "wikipedia",
            ProviderRejected(
                "wikipedia API error badvalue: Unrecognized value for parameter 'list'",
                provider="wikipedia",
                http_status=200,
            ),
        ),
        "non_recoverable",
        "provider_rejected",
        "fallback",
    ),
    (
        "body_too_large",
        Failure.of(
            "brave",
            BadResponse(
                "brave sent a body over the 5000000-byte limit", provider="brave", http_status=200
            ),
        ),
        "unexpected",
        "body_too_large",
        "open_breaker",
    ),
    (
        "wrong_content_type",
        answered("serpapi", 200, HTML, "<html><body>Scheduled maintenance</body></html>"),
        "unexpected",
        "wrong_content_type",
        "open_breaker",
    ),
    (
        "unparseable_body",
        answered(
            "tavily",
            200,
            JSON,
            decode_body(b'{"results": [{"title": "Python 3.13 rele', "application/json"),
        ),
        "unexpected",
        "bad_response",
        "open_breaker",
    ),
    (
        "caller_input",
        Failure.of(None, PolicyViolation("the query contains a blocked term: 'bomb'")),
        "non_recoverable",
        "policy_violation",
        "report",
    ),
    (
        "egress_denied",
        Failure.of(
            "searxng",
            EgressDenied("egress refused: searx.lan resolves to 192.168.1.20, a private address"),
        ),
        "non_recoverable",
        "egress_denied",
        "fallback",
    ),
    (
        "config_error",
        Failure.of("searxng", ConfigError("searxng: options.categories must be a list")),
        "non_recoverable",
        "config_error",
        "fallback",
    ),
    (
        "unforeseen",
        Failure.of("brave", KeyError("web")),
        "unexpected",
        "unexpected_error",
        "open_breaker",
    ),
]


@pytest.mark.parametrize(
    ("rule", "failure", "category", "code", "action"), CASES, ids=[case[0] for case in CASES]
)
def test_default_rule_classifies_a_realistic_failure(
    book: RuleBook, rule: str, failure: Failure, category: str, code: str, action: str
) -> None:
    verdict = book.classify(failure)
    assert (verdict.rule_name, verdict.category, verdict.code, verdict.action) == (
        rule,
        category,
        code,
        action,
    )


def test_every_default_rule_is_exercised_above(book: RuleBook) -> None:
    assert [case[0] for case in CASES] == [rule.name for rule in book.current()]


def test_every_default_rule_carries_a_comment() -> None:
    lines = DEFAULT_RULES_FILE.read_text(encoding="utf-8").splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("  - name:")]
    assert len(starts) == len(RuleBook().current())
    uncommented = [lines[i] for i in starts if not lines[i - 1].strip().startswith("#")]
    assert uncommented == []


def test_451_geoblocked_falls_back_to_the_next_provider(book: RuleBook) -> None:
    error = raised(lambda: check_status("brave", 451, JSON, {"message": "Geoblocked region"}))
    assert isinstance(error, SearchError)
    assert error.category == "non_recoverable"  # what the status alone says
    verdict = book.classify(Failure.of("brave", error, body={"message": "Geoblocked region"}))
    info = verdict.apply_to(error).info()
    assert (info.code, info.category, info.action, info.provider, info.http_status) == (
        "geoblocked",
        "recoverable",
        "fallback",
        "brave",
        451,
    )


def test_451_without_geoblocked_is_an_ordinary_refusal(book: RuleBook) -> None:
    failure = answered("brave", 451, JSON, {"message": "Unavailable for legal reasons"})
    assert (book.classify(failure).code, book.classify(failure).action) == (
        "provider_rejected",
        "fallback",
    )


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (200, "<html><body>Our systems have detected unusual traffic from your network"),
        (200, "<html><body>请输入验证码以继续访问</body></html>"),
        (200, "<html><body>为了您的安全，请完成人机验证</body></html>"),
        (200, "<form id='captcha-form'><div class='h-captcha'></div></form>"),
        (403, "<script>window._cf_chl_opt={cvId: '3'}</script>Just a moment..."),
        (503, "<html><form action='/cdn-cgi/challenge-platform/h/b/cf-chl-bypass'>"),
        (429, "<html>Our systems have detected unusual traffic. /sorry/index</html>"),
    ],
)
def test_bot_checks_are_caught_in_english_and_chinese(
    book: RuleBook, status: int, body: str
) -> None:
    verdict = book.classify(answered("google", status, HTML, body))
    assert (verdict.category, verdict.code, verdict.action) == (
        "unexpected",
        "captcha",
        "open_breaker",
    )


def test_without_a_status_every_error_keeps_its_own_category(book: RuleBook) -> None:
    def subclasses(cls: type[SearchError]) -> list[type[SearchError]]:
        return [sub for direct in cls.__subclasses__() for sub in (direct, *subclasses(direct))]

    # What a provider call can raise; the service's own errors never reach the rules.
    kinds: list[type[SearchError]] = [
        kind
        for kind in [SearchError, *subclasses(SearchError)]
        if not issubclass(kind, ServiceError)
    ]
    assert len(kinds) >= 15
    for kind in kinds:
        verdict = book.classify(Failure.of("brave", kind("something failed")))
        assert verdict.category == kind.category, kind.__name__
        assert verdict.rule is not None, f"{kind.__name__} fell through every rule"


def test_429_carries_retry_after_from_the_header(book: RuleBook) -> None:
    error = RateLimited("serpapi answered HTTP 429", provider="serpapi", http_status=429)
    verdict = book.classify(Failure.of("serpapi", error, headers={"Retry-After": "7"}))
    assert verdict.retry_after_s == 7.0
    assert verdict.apply_to(error).info().retry_after_s == 7.0


def test_retry_after_as_an_http_date_is_measured_against_the_date_header() -> None:
    failure = Failure.of(
        "brave",
        RateLimited("429"),
        headers={
            "Retry-After": "Wed, 21 Oct 2026 07:28:30 GMT",
            "Date": "Wed, 21 Oct 2026 07:28:00 GMT",
        },
    )
    assert failure.retry_after_s() == 30.0
    undated = Failure.of("brave", RateLimited("429"), headers={"Retry-After": "soon"})
    assert undated.retry_after_s() is None


def rules(text: str) -> tuple[Rule, ...]:
    return parse_rules(yaml.safe_load(text), "test")


def test_first_matching_rule_wins() -> None:
    timeout = Failure.of("brave", ProviderTimeout("no answer"))
    both = """
rules:
  - name: first
    match: {provider: brave}
    then: {category: non_recoverable, code: brave_off, action: fallback}
  - name: second
    match: {exception: ProviderTimeout}
    then: {category: recoverable, code: slow, action: retry}
"""
    assert classify(timeout, rules(both)).rule_name == "first"
    swapped = rules(both)[::-1]
    assert classify(timeout, swapped).rule_name == "second"
    assert classify(Failure.of("exa", ProviderTimeout("x")), rules(both)).code == "slow"


def test_match_keys_must_all_fit() -> None:
    table = rules("""
rules:
  - name: brave_html_5xx
    match:
      provider: [brave, google]
      status: ["500-599"]
      header: {Content-Type: HTML}
      body_regex: "(?i)maintenance"
      body_contains: WINDOW
      message_contains: http 503
    then: {category: recoverable, code: maintenance, action: retry}
""")
    body = "<html>Scheduled Maintenance window</html>"
    fits = answered("google", 503, HTML, body)
    assert classify(fits, table).code == "maintenance"
    for different in (
        answered("exa", 503, HTML, body),  # provider
        answered("google", 429, HTML, body),  # status
        answered("google", 503, JSON, body),  # header
        answered("google", 503, HTML, "<html>Service Unavailable</html>"),  # body
    ):
        assert classify(different, table).rule is None


def test_no_rule_fitting_leaves_the_decision_to_the_error_class() -> None:
    table = rules("""
rules:
  - match: {status: 418}
    then: {category: non_recoverable, code: teapot, action: fallback}
""")
    verdict = classify(Failure.of("brave", ProviderTimeout("slow")), table)
    assert (verdict.rule, verdict.category, verdict.code, verdict.action) == (
        None,
        "recoverable",
        "provider_timeout",
        "retry",
    )
    foreign = classify(Failure.of("brave", ValueError("bad date")), table)
    assert (foreign.category, foreign.action) == ("unexpected", "open_breaker")


def test_a_rule_without_code_keeps_the_errors_own() -> None:
    table = rules("""
rules:
  - match: {exception: ProviderError}
    then: {category: unexpected, action: open_breaker}
""")
    assert classify(Failure.of("exa", ReplayMiss("gone")), table).code == "replay_miss"
    assert classify(Failure.of("exa", OSError("disk")), table).code == "internal_error"


def test_exception_matches_transport_exception_bases_and_codes() -> None:
    table = rules("""
rules:
  - match: {exception: ServerTimeoutError}
    then: {category: recoverable, code: read_timeout, action: retry}
  - match: {exception: rate_limited}
    then: {category: recoverable, code: by_code, action: retry}
""")
    # SocketTimeoutError's base ServerTimeoutError matches.
    read = caused(ProviderTimeout("read"), aiohttp.SocketTimeoutError("no data in time"))
    assert classify(Failure.of("brave", read), table).code == "read_timeout"
    assert classify(Failure.of("brave", RateLimited("slow down")), table).code == "by_code"


def test_report_suggestion_reaches_the_callers_message(book: RuleBook) -> None:
    error = NoResults("no results")
    verdict = book.classify(Failure.of(None, error))
    info = verdict.apply_to(error).info()
    assert info.action == "report"
    assert "broaden the query or drop time_range/domain_filter" in info.message
    assert verdict.apply_to(error).message.count("broaden") == 1  # applied twice, said once


def test_a_foreign_exception_becomes_a_reportable_error(book: RuleBook) -> None:
    failure = Failure.of("brave", KeyError("web"), response=RawResponse(200, JSON, {}))
    info = book.classify(failure).error_for(failure).info()
    assert (info.code, info.category, info.action, info.provider, info.http_status) == (
        "unexpected_error",
        "unexpected",
        "open_breaker",
        "brave",
        200,
    )
    assert "KeyError" in info.message


def test_body_is_dumped_and_cut_to_the_preview_size() -> None:
    body = {"results": [], "note": "ünïcode " * 2000}
    failure = Failure.of("brave", BadResponse("x"), body=body, body_preview_bytes=100)
    assert failure.body is not None
    assert failure.body.startswith('{"results": [], "note": "ünïcode')
    assert len(failure.body.encode("utf-8")) <= 100
    raw = Failure.of("brave", BadResponse("x"), body=b"<html>" + b"x" * 50, body_preview_bytes=10)
    assert raw.body == "<html>xxxx"


# --- the file on disk -----------------------------------------------------------------

GOOD = """
rules:
  - name: first_version
    match: {status: 503}
    then: {category: recoverable, code: busy, action: retry}
"""
EDITED = """
rules:
  # the operator decided a 503 from this deployment means "gone for the day"
  - name: second_version
    match: {status: 503}
    then: {category: non_recoverable, code: closed_for_the_day, action: fallback}
"""
BROKEN = """
rules:
  - name: typo
    match: {status: "503-50"}
    then: {category: recoverable, code: busy, action: retry}
"""


def edit(path: Path, text: str) -> None:
    """Save `text` as an operator would, a second after the previous save."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def unavailable() -> Failure:
    return answered("brave", 503, JSON, {"error": "Service Unavailable"})


def test_editing_the_file_changes_the_next_classification(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    edit(path, GOOD)
    book = RuleBook.from_settings(RulesSettings(path=path))
    assert book.classify(unavailable()).code == "busy"

    edit(path, EDITED)
    verdict = book.classify(unavailable())
    assert (verdict.code, verdict.action, verdict.rule_name) == (
        "closed_for_the_day",
        "fallback",
        "second_version",
    )


def test_a_broken_edit_keeps_the_last_good_rules_and_logs_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "rules.yaml"
    edit(path, GOOD)
    book = RuleBook(path)

    edit(path, BROKEN)
    with caplog.at_level(logging.WARNING, logger="sleuth.resilience.rules"):
        assert book.classify(unavailable()).code == "busy"
        assert book.classify(unavailable()).code == "busy"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # once per broken save, not once per call
    assert "keeping the last good rules" in warnings[0]
    assert "rule 0 (typo) field match.status" in warnings[0]
    assert "'503-50' is not a status or a range like 500-599" in warnings[0]

    edit(path, EDITED)  # the fix is picked up as any edit is
    assert book.classify(unavailable()).code == "closed_for_the_day"


def test_a_deleted_file_keeps_the_last_good_rules(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "rules.yaml"
    edit(path, GOOD)
    book = RuleBook(path)
    path.unlink()
    with caplog.at_level(logging.WARNING, logger="sleuth.resilience.rules"):
        assert book.classify(unavailable()).code == "busy"
    assert "has gone" in caplog.text


def test_invalid_yaml_after_a_good_load_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "rules.yaml"
    edit(path, GOOD)
    book = RuleBook(path)
    edit(path, "rules: [\n  - {match: {status: 503}, then: {")
    with caplog.at_level(logging.WARNING, logger="sleuth.resilience.rules"):
        assert book.classify(unavailable()).code == "busy"
    assert "not valid YAML" in caplog.text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            BROKEN,
            "rule 0 (typo) field match.status: '503-50' is not a status or a range like 500-599",
        ),
        (
            GOOD + "  - match: {statuss: 504}\n    then: {category: recoverable, action: retry}\n",
            "rule 1 field match.statuss: Extra inputs are not permitted",
        ),
        (
            GOOD
            + "  - match: {body_regex: '(unclosed'}\n"
            + "    then: {category: unexpected, action: open_breaker}\n",
            "rule 1 field match.body_regex: not a valid regular expression",
        ),
        (
            GOOD
            + "  - name: loop\n    match: {status: 401}\n"
            + "    then: {category: non_recoverable, action: retry}\n",
            "rule 1 (loop) field then: action 'retry' needs category 'recoverable'",
        ),
        (
            GOOD
            + "  - match: {status: 401}\n"
            + "    then: {category: permanent, action: fallback}\n",
            "rule 1 field then.category: Input should be 'recoverable'",
        ),
        (
            GOOD + "  - match: {status: 401}\n    then: {category: recoverable, action: wait}\n",
            "rule 1 field then.action: Input should be 'retry', 'fallback'",
        ),
        ("rules: []\n", "rules: no rules: name at least one"),
        ("- match: {}\n", "(top level): Input should be a valid dictionary"),
    ],
)
def test_a_file_broken_from_the_start_is_a_config_error_naming_rule_and_field(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "rules.yaml"
    edit(path, text)
    with pytest.raises(ConfigError) as caught:
        RuleBook(path)
    assert expected in caught.value.message
    assert str(path) in caught.value.message


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        RuleBook(tmp_path / "nowhere.yaml")


def test_status_forms_accepted() -> None:
    table = rules("""
rules:
  - match: {status: [404, "410", "500-504"]}
    then: {category: non_recoverable, code: listed, action: fallback}
""")
    statuses = (404, 410, 500, 502, 504, 505, 403)
    hits = [s for s in statuses if classify(Failure("x", s), table).rule is not None]
    assert hits == [404, 410, 500, 502, 504]


def test_a_rule_overrides_code_and_category_of_one_error_not_its_class() -> None:
    error = errors.from_status("brave", 500, "<html>oops</html>")
    Classification("unexpected", "captcha", "open_breaker").apply_to(error)
    fresh = errors.from_status("brave", 500, "<html>oops</html>")
    assert (error.info().code, error.info().category) == ("captcha", "unexpected")
    assert (fresh.info().code, fresh.info().action) == ("bad_response", "report")
    assert Classification("recoverable", "busy", "retry").retryable
