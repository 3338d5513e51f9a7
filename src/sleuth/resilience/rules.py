"""Error rules: what a failure is, and what sleuth does about it.

Owns the classification of every provider failure into a `category`
(recoverable | non_recoverable | unexpected), a `code` and an `action`
(retry | fallback | report | open_breaker), decided by an ordered list of rules in
YAML; the first rule whose `match` fits wins. The built-in rules live in
`default_rules.yaml` beside this module (each with a comment saying why); a
deployment points `rules.path` at its own file. `RuleBook` re-reads the file when
its mtime or size changes, so an edit takes effect on the next call without a
restart; an edit that breaks the file keeps the last good rules and logs why.

A rule, in YAML (every `match` key is optional and all given keys must fit;
`match: {}` fits everything):

    - name: geoblocked
      match:
        provider: [brave, google]        # one name or a list
        status: 451                      # an int, "500-599", or a list of either
        body_contains: geoblocked        # substring, case-insensitive
        body_regex: "(?i)region|country" # Python regex, searched
        header: {content-type: html}     # header name -> substring, case-insensitive
        exception: ProviderRejected      # class name (its bases count), error code,
                                         # or the transport's exception type name
        message_contains: byte limit     # substring of the error's message
      then:
        category: recoverable
        code: geoblocked                 # omitted: the error keeps its own code
        action: fallback
        suggestion: null                 # for `report`: what the caller could do

It does no I/O except reading the rules file, and it decides nothing about timing:
retrying is `sleuth.resilience.retry`, breaking is the breaker's.

>>> book = RuleBook()
>>> from sleuth.errors import from_status
>>> error = from_status("brave", 451, "geoblocked in your region")
>>> verdict = book.classify(Failure.of("brave", error, body="geoblocked in your region"))
>>> (verdict.category, verdict.code, verdict.action)
('recoverable', 'geoblocked', 'fallback')
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from sleuth.contract import ErrorAction, ErrorCategory
from sleuth.errors import ConfigError, SearchError
from sleuth.private_attrs import private
from sleuth.yaml_file import read_yaml

DEFAULT_RULES_FILE = Path(__file__).with_name("default_rules.yaml")
#: How much of a failed response's body the rules see, unless settings say otherwise.
DEFAULT_BODY_PREVIEW_BYTES = 8192
#: What a failure is when no rule fits, by the error class's own category.
_ACTION_BY_CATEGORY: Mapping[ErrorCategory, ErrorAction] = {
    "recoverable": "retry",
    "non_recoverable": "fallback",
    "unexpected": "open_breaker",
}
_STATUS_RANGE = re.compile(r"^\s*(\d{3})\s*(?:-\s*(\d{3})\s*)?$")

log = logging.getLogger(__name__)


class RulesSettings(BaseModel):
    """The `rules:` section of sleuth.yaml.

    >>> RulesSettings().path is None
    True
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path | None = Field(
        default=None,
        description=(
            "YAML file of error rules (first match wins); the built-in default_rules.yaml "
            "when unset. Re-read when its modification time or size changes."
        ),
    )
    body_preview_bytes: int = Field(
        default=DEFAULT_BODY_PREVIEW_BYTES,
        ge=0,
        description="How much of a failed response's body `body_contains` and `body_regex` see.",
    )

    @field_validator("path")
    @classmethod
    def _expand_home(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None


# --- what happened --------------------------------------------------------------------


class ResponseLike(Protocol):
    """What a failure may carry of the answer (`sleuth.transport.RawResponse` fits)."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def body(self) -> Any: ...


@dataclass(frozen=True)
class Failure:
    """One failed call, as the rules see it. Build it with `Failure.of`.

    `headers` have lower-case names; `body` is the text (or JSON dumped) cut to the
    preview size; `error` is the contract error, if the failure became one;
    `exception_type` names the underlying exception (aiohttp's `ClientConnectorError`, a
    `KeyError` from a parser); `cause` is that exception, whose bases also match.
    """

    provider: str | None
    status: int | None = None
    body: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    error: SearchError | None = None
    exception_type: str | None = None
    cause: BaseException | None = None

    @classmethod
    def of(
        cls,
        provider: str | None,
        exc: BaseException | None = None,
        *,
        response: ResponseLike | None = None,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        body_preview_bytes: int = DEFAULT_BODY_PREVIEW_BYTES,
    ) -> Failure:
        """The failure of `provider`'s call from what is at hand.

        `exc` is what was raised: a `SearchError` (its `__cause__`, when set, is the
        transport's exception) or anything else. `response` fills status, headers and
        body unless they are given. The status falls back to the error's `http_status`.

        >>> from sleuth.errors import RateLimited
        >>> Failure.of("brave", RateLimited("slow down", http_status=429)).status
        429
        """
        error = exc if isinstance(exc, SearchError) else None
        cause = error.__cause__ if error is not None else exc
        if response is not None:
            status = response.status if status is None else status
            headers = response.headers if headers is None else headers
            body = response.body if body is None else body
        if status is None and error is not None:
            status = error.http_status
        underlying = cause if cause is not None else exc
        return cls(
            provider=provider or (error.provider if error is not None else None),
            status=status,
            body=_preview(body, body_preview_bytes),
            headers={str(k).lower(): str(v) for k, v in (headers or {}).items()},
            error=error,
            exception_type=type(underlying).__name__ if underlying is not None else None,
            cause=cause,
        )

    def exception_names(self) -> frozenset[str]:
        """Every name an `exception:` match may use: classes (and bases) and the code."""
        names: set[str] = set()
        for exc in (self.error, self.cause):
            if exc is not None:
                names.update(kind.__name__ for kind in type(exc).__mro__ if kind is not object)
        if self.error is not None:
            names.add(self.error.code)
        if self.exception_type:
            names.add(self.exception_type)
        return frozenset(names)

    def retry_after_s(self) -> float | None:
        """Seconds the back end asked to wait: the error's, else the Retry-After header
        (seconds, or an HTTP date measured against the response's Date header)."""
        if self.error is not None and self.error.retry_after_s is not None:
            return self.error.retry_after_s
        value = self.headers.get("retry-after", "").strip()
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            until = parsedate_to_datetime(value)
            now = parsedate_to_datetime(self.headers["date"])
        except (KeyError, TypeError, ValueError):
            return None  # a date with no Date header to measure it against: unusable
        return max(0.0, (until - now).total_seconds())


def _preview(body: Any, limit: int) -> str | None:
    if body is None:
        return None
    if isinstance(body, bytes | bytearray):
        text = bytes(body[:limit]).decode("utf-8", errors="ignore")
    elif isinstance(body, str):
        text = body
    else:
        text = json.dumps(body, ensure_ascii=False, default=str)
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    return encoded[:limit].decode("utf-8", errors="ignore")


# --- the rules ------------------------------------------------------------------------


def _names(value: Any) -> Any:
    """One name or a list of names, as a tuple."""
    if isinstance(value, str):
        return (value,)
    return tuple(value) if isinstance(value, list | tuple) else value


def status_ranges(value: Any) -> tuple[tuple[int, int], ...]:
    """`451`, `"500-599"` or a list of either as (low, high) ranges; `ValueError` naming
    the item that is not one (error rules and declared providers' error tables)."""
    items = value if isinstance(value, list | tuple) else [value]
    ranges = []
    for item in items:
        if isinstance(item, bool):
            raise ValueError(f"{item!r} is not an HTTP status")
        if isinstance(item, int):
            low = high = item
        elif isinstance(item, str) and (found := _STATUS_RANGE.match(item)):
            low = int(found.group(1))
            high = int(found.group(2) or low)
        else:
            raise ValueError(f"{item!r} is not a status or a range like 500-599")
        if not 100 <= low <= high <= 599:
            raise ValueError(f"{item!r} is not a status (100-599) or an ascending range")
        ranges.append((low, high))
    return tuple(ranges)


def compiled_or_none(regex: str | None) -> str | None:
    """`regex` as given, after checking it compiles; `ValueError` saying why not."""
    if regex is not None:
        try:
            re.compile(regex)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
    return regex


class RuleMatch(BaseModel):
    """What a failure must look like for the rule to apply; every given key must fit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: tuple[str, ...] | None = Field(
        default=None, description="Provider name, or a list of them."
    )
    status: tuple[tuple[int, int], ...] | None = Field(
        default=None, description='HTTP status: 451, "500-599", or a list of either.'
    )
    body_contains: str | None = Field(
        default=None, min_length=1, description="Substring of the body, case-insensitive."
    )
    body_regex: str | None = Field(
        default=None, min_length=1, description="Python regular expression searched in the body."
    )
    header: dict[str, str] | None = Field(
        default=None, description="Header name -> substring of its value, case-insensitive."
    )
    exception: tuple[str, ...] | None = Field(
        default=None,
        description=(
            "Error class name from sleuth.errors (subclasses match too), an error code, "
            "or the name of the transport's exception type (or one of its bases)."
        ),
    )
    message_contains: str | None = Field(
        default=None, min_length=1, description="Substring of the error's message."
    )

    _regex: re.Pattern[str] | None = PrivateAttr(default=None)

    @field_validator("provider", "exception", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return _names(value)

    @field_validator("status", mode="before")
    @classmethod
    def _parse_status(cls, value: Any) -> Any:
        return None if value is None else status_ranges(value)

    @field_validator("body_regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return compiled_or_none(value)

    @field_validator("header")
    @classmethod
    def _lower_names(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return {k.lower(): v for k, v in value.items()} if value is not None else None

    def model_post_init(self, context: Any, /) -> None:
        if self.body_regex is not None:
            self._regex = re.compile(self.body_regex)

    def fits(self, failure: Failure) -> bool:
        """Whether every condition given holds for `failure`."""
        if self.provider is not None and failure.provider not in self.provider:
            return False
        if self.status is not None and not (
            failure.status is not None
            and any(low <= failure.status <= high for low, high in self.status)
        ):
            return False
        if self.body_contains is not None and not (
            failure.body is not None and self.body_contains.casefold() in failure.body.casefold()
        ):
            return False
        regex: re.Pattern[str] | None = private(self, "_regex")
        if regex is not None and not (failure.body is not None and regex.search(failure.body)):
            return False
        if self.header is not None and not all(
            value.casefold() in failure.headers.get(name, "\0").casefold()
            for name, value in self.header.items()
        ):
            return False
        if self.exception is not None and failure.exception_names().isdisjoint(self.exception):
            return False
        return self.message_contains is None or (
            failure.error is not None
            and self.message_contains.casefold() in failure.error.message.casefold()
        )


class RuleThen(BaseModel):
    """What a matching failure is, and what sleuth does about it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    category: ErrorCategory
    code: str | None = Field(
        default=None,
        pattern=r"^[a-z][a-z0-9_]*$",
        description="Machine-readable code; omitted, the error keeps its own.",
    )
    action: ErrorAction
    suggestion: str | None = Field(
        default=None, description="For `report`: what the caller could change, in a few words."
    )

    @model_validator(mode="after")
    def _retry_needs_recoverable(self) -> RuleThen:
        if self.action == "retry" and self.category != "recoverable":
            raise ValueError(
                f"action 'retry' needs category 'recoverable' (got {self.category!r}): "
                "retrying what cannot recover only spends the deadline"
            )
        return self


class Rule(BaseModel):
    """One line of the rules table: a `match` and a `then`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(default=None, description="Shown in logs and classifications.")
    match: RuleMatch
    then: RuleThen


class _RulesFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rules: tuple[Rule, ...]

    @field_validator("rules", mode="before")
    @classmethod
    def _not_empty(cls, value: Any) -> Any:
        if isinstance(value, list | tuple) and not value:
            raise ValueError("no rules: name at least one (`match: {}` fits every failure)")
        return value


# --- the verdict ----------------------------------------------------------------------


@dataclass(frozen=True)
class Classification:
    """The verdict on one failure. `rule` is the index of the rule that decided, or
    None when no rule fitted and the error's own class decided."""

    category: ErrorCategory
    code: str
    action: ErrorAction
    suggestion: str | None = None
    retry_after_s: float | None = None
    rule: int | None = None
    rule_name: str | None = None

    @property
    def retryable(self) -> bool:
        return self.action == "retry"

    def apply_to(self, error: SearchError) -> SearchError:
        """Record the verdict on `error` (in place; returned for chaining).

        The error's `code` and `category` become the rule's for this instance (its
        class keeps its own), `action` says what was done, a missing `retry_after_s`
        is filled in, and a suggestion is appended to the message once.

        >>> from sleuth.errors import ProviderRejected
        >>> error = ProviderRejected("451 geoblocked", provider="brave")
        >>> verdict = Classification("recoverable", "geoblocked", "fallback")
        >>> info = verdict.apply_to(error).info()
        >>> (info.code, info.category, info.action)
        ('geoblocked', 'recoverable', 'fallback')
        """
        # `code` and `category` are class attributes of the error tree; an instance
        # attribute overrides them for this one error, which is what a rule decides.
        vars(error).update(code=self.code, category=self.category)
        error.action = self.action
        if error.retry_after_s is None:
            error.retry_after_s = self.retry_after_s
        if self.suggestion and self.suggestion not in error.message:
            error.message = f"{error.message}; suggestion: {self.suggestion}"
            error.args = (error.message, *error.args[1:])
        return error

    def error_for(self, failure: Failure) -> SearchError:
        """The contract error to report: the failure's own, or one made for a foreign
        exception (a parser's KeyError, say), with this verdict applied."""
        if failure.error is not None:
            return self.apply_to(failure.error)
        what = failure.exception_type or "failure"
        detail = f": {failure.cause}" if failure.cause is not None else ""
        where = failure.provider or "sleuth"
        error = SearchError(
            f"{where} failed unexpectedly: {what}{detail}"[:500],
            provider=failure.provider,
            http_status=failure.status,
        )
        return self.apply_to(error)


def classify(failure: Failure, rules: Sequence[Rule]) -> Classification:
    """The verdict of the first rule that fits `failure`; with none, the error's own
    class decides (recoverable: retry, non_recoverable: fallback, unexpected:
    open_breaker), and a foreign exception is unexpected."""
    retry_after = failure.retry_after_s()
    for index, rule in enumerate(rules):
        if rule.match.fits(failure):
            then = rule.then
            own_code = failure.error.code if failure.error is not None else "internal_error"
            return Classification(
                category=then.category,
                code=then.code or own_code,
                action=then.action,
                suggestion=then.suggestion,
                retry_after_s=retry_after,
                rule=index,
                rule_name=rule.name,
            )
    if failure.error is not None:
        category = failure.error.category
        return Classification(
            category, failure.error.code, _ACTION_BY_CATEGORY[category], retry_after_s=retry_after
        )
    return Classification("unexpected", "internal_error", "open_breaker", retry_after_s=retry_after)


# --- the file -------------------------------------------------------------------------


def parse_rules(data: Any, source: str) -> tuple[Rule, ...]:
    """Rules from the YAML document `data`; `ConfigError` names rule index and field."""
    try:
        return _RulesFile.model_validate(data).rules
    except ValidationError as exc:
        problems = "; ".join(_describe(error, data) for error in exc.errors())
        raise ConfigError(f"rules {source} are invalid: {problems}") from exc


def _describe(error: Mapping[str, Any], data: Any) -> str:
    loc = list(error["loc"])
    where = ".".join(str(part) for part in loc) or "(top level)"
    if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int):
        index = loc[1]
        name = _rule_name(data, index)
        field_path = ".".join(str(part) for part in loc[2:]) or "(the rule)"
        where = f"rule {index}{f' ({name})' if name else ''} field {field_path}"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}"


def _rule_name(data: Any, index: int) -> str | None:
    try:
        name = data["rules"][index].get("name")
    except (AttributeError, IndexError, KeyError, TypeError):
        return None
    return str(name) if name else None


def load_rules(path: Path) -> tuple[Rule, ...]:
    """The rules in the YAML file at `path`, validated; `ConfigError` otherwise."""
    return parse_rules(read_yaml(path, "rules"), str(path))


class RuleBook:
    """The rules of one file, re-read when the file's mtime or size changes.

    Every `classify` (and `current`) costs one `stat`. An edit that breaks the file
    keeps the last good rules and logs a warning with the reason (once per change of
    the file); a file broken from the start is a `ConfigError`.

    >>> RuleBook().current()[0].name
    'geoblocked'
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else DEFAULT_RULES_FILE
        stamp = self._stamp()
        if stamp is None:
            raise ConfigError(f"rules file {self.path} does not exist")
        self._rules = load_rules(self.path)
        self._stamp_seen: tuple[int, int] | None = stamp

    @classmethod
    def from_settings(cls, settings: RulesSettings) -> RuleBook:
        return cls(settings.path)

    def current(self) -> tuple[Rule, ...]:
        """The rules in force, re-read first if the file changed on disk."""
        stamp = self._stamp()
        if stamp == self._stamp_seen:
            return self._rules
        self._stamp_seen = stamp  # a broken file is reported once, not on every call
        if stamp is None:
            log.warning(
                "rules file %s has gone; keeping the last good %d rules",
                self.path,
                len(self._rules),
            )
            return self._rules
        try:
            rules = load_rules(self.path)
        except ConfigError as exc:
            log.warning("keeping the last good rules: %s", exc.message)
            return self._rules
        log.info("reloaded %d error rules from %s", len(rules), self.path)
        self._rules = rules
        return rules

    def classify(self, failure: Failure) -> Classification:
        """`classify` with the current rules."""
        return classify(failure, self.current())

    def _stamp(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except OSError:  # gone or unreadable: the caller keeps what it has
            return None
        return (stat.st_mtime_ns, stat.st_size)
