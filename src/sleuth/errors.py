"""The one exception tree. Each class knows its code, category and status hint.

    SearchError                      any failure a caller can see
    ├── InvalidRequest               bad input; names the field and the allowed values
    ├── PolicyViolation              the guard refused the query
    ├── ConfigError                  sleuth.yaml or a mapping is wrong
    ├── ServiceError                 the service's own refusals, never a back end's
    │   ├── Unauthorized             an API key is needed and none or a bad one came
    │   ├── Forbidden                the key is valid but not an operator's (role admin)
    │   ├── RequestTooLarge          the body or the headers are over serve.limits (413, 431)
    │   ├── RequestTimeout           the headers or the body came too slowly (408)
    │   ├── TooManyConnections       serve.limits.max_connections held, none of them slow (503)
    │   ├── TooManyRequests          a key's rate limit, or the task queue is full
    │   ├── TaskNotFound             no such task for this tenant (another's looks the same)
    │   ├── ToolNotFound             no declared tool of that name (names those there are)
    │   ├── WorkflowNotFound         no workflow of that name in workflows_dir (names them)
    │   ├── TaskCancelled            the task was cancelled before it finished
    │   ├── SearchTimeout            a synchronous search outran the service's limit
    │   ├── BudgetExceeded           the tenant's budget for the day or month is spent
    │   └── TaskAbandoned            the task's workers kept dying; it was given up
    └── ProviderError                a back end failed (carries `provider`)
        ├── ProviderTimeout          recoverable
        ├── ProviderUnavailable      recoverable: connection refused, 502/503/504
        ├── RateLimited              recoverable: 429; carries retry_after_s
        ├── QuotaExceeded            non_recoverable: the plan's quota is used up; carries
        │                            the seconds to its reset when the provider named it
        ├── AuthFailed               non_recoverable: 401/403
        ├── ProviderRejected         non_recoverable: 400 and other 4xx
        ├── MissingApiKey            non_recoverable: the configured key variable is empty
        ├── NoResults                non_recoverable: an empty result list
        ├── ReplayMiss               non_recoverable: the cassette has no answer
        ├── DeadlineExceeded         recoverable: the overall deadline ran out first
        ├── EgressDenied             non_recoverable: the egress policy refused the address
        ├── TlsInvalid               unexpected: a page's TLS certificate did not verify
        └── BadResponse              unexpected: unparseable body, wrong content type, too large

The HTTP and MCP layers map any of them with `error.info()` and `error.status_hint`,
never with isinstance chains.
"""

from __future__ import annotations

from typing import ClassVar

from sleuth.contract import ErrorAction, ErrorCategory, ErrorInfo


class SearchError(Exception):
    """Base of every failure sleuth reports."""

    code: ClassVar[str] = "internal_error"
    category: ClassVar[ErrorCategory] = "unexpected"
    #: The status an HTTP adapter should answer with when this error ends a request.
    status_hint: ClassVar[int] = 500

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        http_status: int | None = None,
        retry_after_s: float | None = None,
        action: ErrorAction = "report",
        field: str | None = None,
        allowed: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.http_status = http_status
        self.retry_after_s = retry_after_s
        self.action: ErrorAction = action
        self.field = field
        self.allowed = allowed

    def info(self) -> ErrorInfo:
        return ErrorInfo(
            code=self.code,
            category=self.category,
            provider=self.provider,
            http_status=self.http_status,
            message=self.message,
            retry_after_s=self.retry_after_s,
            action=self.action,
            field=self.field,
            allowed=self.allowed,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class InvalidRequest(SearchError):
    code = "invalid_request"
    category = "non_recoverable"
    status_hint = 422

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        allowed: list[str] | None = None,
        details: list[ErrorInfo] | None = None,
    ) -> None:
        super().__init__(message, field=field, allowed=allowed)
        self.details = details or [self.info()]

    @classmethod
    def from_details(cls, details: list[ErrorInfo]) -> InvalidRequest:
        first = details[0]
        return cls(
            "; ".join(d.message for d in details),
            details=details,
            field=first.field,
            allowed=first.allowed,
        )


class PolicyViolation(SearchError):
    code = "policy_violation"
    category = "non_recoverable"
    status_hint = 400


class ConfigError(SearchError):
    code = "config_error"
    category = "non_recoverable"
    status_hint = 500


class ServiceError(SearchError):
    """Raised by the service layer (keys, limits, tasks), never by a provider call, so
    the error rules never classify one."""

    code = "service_error"


class Unauthorized(ServiceError):
    code = "unauthorized"
    category = "non_recoverable"
    status_hint = 401


class Forbidden(ServiceError):
    code = "forbidden"
    category = "non_recoverable"
    status_hint = 403


class RequestTooLarge(ServiceError):
    code = "request_too_large"
    category = "non_recoverable"
    status_hint = 413


class RequestTimeout(ServiceError):
    code = "request_timeout"
    category = "recoverable"
    status_hint = 408


class TooManyConnections(ServiceError):
    code = "too_many_connections"
    category = "recoverable"
    status_hint = 503


class TooManyRequests(ServiceError):
    code = "too_many_requests"
    category = "recoverable"
    status_hint = 429


class TaskNotFound(ServiceError):
    code = "task_not_found"
    category = "non_recoverable"
    status_hint = 404


class ToolNotFound(ServiceError):
    """No declared tool of the name asked for; `allowed` lists those there are."""

    code = "tool_not_found"
    category = "non_recoverable"
    status_hint = 404


class WorkflowNotFound(ServiceError):
    """No workflow of that name in `workflows_dir`; `allowed` lists those there are."""

    code = "workflow_not_found"
    category = "non_recoverable"
    status_hint = 404


class TaskCancelled(ServiceError):
    code = "cancelled"
    category = "non_recoverable"
    status_hint = 409


class SearchTimeout(ServiceError):
    code = "search_timeout"
    category = "recoverable"
    status_hint = 504


class BudgetExceeded(ServiceError):
    """The tenant's budget (`usage.budgets`) for this day or month is spent, and its
    rule says refuse (or degrade, with no free provider to degrade to).
    `retry_after_s` is the time until the period ends and the budget is whole again."""

    code = "budget_exceeded"
    category = "non_recoverable"
    status_hint = 402


class TaskAbandoned(ServiceError):
    code = "task_abandoned"
    category = "unexpected"
    status_hint = 500


class ProviderError(SearchError):
    code = "provider_error"
    category: ClassVar[ErrorCategory] = "unexpected"
    status_hint = 502


class ProviderTimeout(ProviderError):
    code = "provider_timeout"
    category = "recoverable"
    status_hint = 504


class ProviderUnavailable(ProviderError):
    code = "provider_unavailable"
    category = "recoverable"
    status_hint = 503


class RateLimited(ProviderError):
    code = "rate_limited"
    category = "recoverable"
    status_hint = 429


class QuotaExceeded(ProviderError):
    """The plan's quota (the month's searches, the credits) is used up. Waiting seconds
    does not bring it back, so it is never retried; `retry_after_s`, when the provider
    named it, is when it resets, and the breaker rests the provider until then."""

    code = "quota_exceeded"
    category = "non_recoverable"
    status_hint = 502


class AuthFailed(ProviderError):
    code = "auth_failed"
    category = "non_recoverable"
    status_hint = 502


class ProviderRejected(ProviderError):
    code = "provider_rejected"
    category = "non_recoverable"
    status_hint = 502


class MissingApiKey(ProviderError):
    code = "missing_api_key"
    category = "non_recoverable"
    status_hint = 502


class NoResults(ProviderError):
    code = "no_results"
    category = "non_recoverable"
    status_hint = 404


class ReplayMiss(ProviderError):
    code = "replay_miss"
    category = "non_recoverable"
    status_hint = 502


class DeadlineExceeded(ProviderError):
    code = "deadline_exceeded"
    category = "recoverable"
    status_hint = 504


class EgressDenied(ProviderError):
    """The egress policy refused the address a call would go to (a private, loopback or
    link-local one, the cloud metadata endpoint...), or a call could not be made
    through the configured egress proxy. Retrying cannot help; the operator decides."""

    code = "egress_denied"
    category = "non_recoverable"
    status_hint = 502


class TlsInvalid(ProviderError):
    """A page's TLS certificate did not verify (`sleuth.extract`); the page was not read.
    Unexpected, as the error rules class an error they have no rule for: a public
    site whose certificate fails is rare, and worth a look."""

    code = "tls_invalid"
    category = "unexpected"
    status_hint = 502


class BadResponse(ProviderError):
    code = "bad_response"
    category = "unexpected"
    status_hint = 502


def from_status(
    provider: str, status: int, message: str, retry_after_s: float | None = None
) -> ProviderError:
    """The error for an HTTP status a back end answered with (not 2xx)."""
    kind: type[ProviderError]
    if status == 429:
        kind = RateLimited
    elif status in (401, 403):
        kind = AuthFailed
    elif status in (502, 503, 504):
        kind = ProviderUnavailable
    elif 400 <= status < 500:
        kind = ProviderRejected
    else:
        kind = BadResponse
    return kind(
        f"{provider} answered HTTP {status}: {message}"[:500],
        provider=provider,
        http_status=status,
        retry_after_s=retry_after_s,
    )
