"""The public contract: what an agent sends, what it gets back, and how failures look.

Every type here is a pydantic v2 model whose JSON Schema is what `sleuth schema`
prints and what the HTTP and MCP adapters will publish. Nothing in this module does
I/O or knows about providers; it only validates and describes.

A rejected value always yields a message that names the field and the values it
accepts (see `describe_validation_error`).

>>> SearchRequest(query="  latest python release  ").query
'latest python release'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from functools import cache
from typing import Annotated, Any, Literal, Self, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

QUERY_MAX_CHARS = 400
MAX_RESULTS_LIMIT = 20

TimeRange = Literal["any", "past_week", "past_month", "past_year"]
Priority = Literal["normal", "high"]
Freshness = Literal["realtime", "past_week", "past_month", "archive", "unknown"]
ErrorCategory = Literal["recoverable", "non_recoverable", "unexpected"]
ErrorAction = Literal["retry", "fallback", "report", "open_breaker"]
CacheState = Literal["hit", "miss", "stale"]
ProviderStatus = Literal["ok", "empty", "error", "skipped", "timeout"]
TaskStatus = Literal["pending", "running", "success", "failed"]
FactCheck = Literal["agreed", "disputed", "single_source"]
FactStatus = FactCheck
DatedFrom = Literal["provider", "title", "snippet", "url", "page"]
#: What a fetched page's connection proved: https with a certificate that verified,
#: https with one that did not, or no TLS at all (plain http).
TlsStatus = Literal["valid", "invalid", "none"]

#: Fields of `ResultItem` an agent may ask for with `include`. Which of them a
#: deployment actually serves is the configured optional tier (`projection.optional`).
IncludeField = Literal[
    "id",
    "url",
    "domain",
    "providers",
    "ranks",
    "published_at",
    "freshness",
    "dated_from",
    "source_trust_score",
    "trust_breakdown",
    "sources",
    "relevance",
    "fields",
    "fact_check",
    "flags",
    "content",
]

_STRICT = ConfigDict(extra="forbid", frozen=True)

#: A host name with at least one dot, optionally with a scheme and a path, or the name
#: of a knowledge-base source (one label, no dot): what `domain_filter` accepts, stated
#: in the JSON Schema so that clients can check it too.
#: (No \s or \w: their meaning differs between regex engines.)
_LABEL = "[A-Za-z0-9\u00a1-\ud7ff\ue000-\uffff_-]+"
#: What a failed pattern means, per field, in words.
_PATTERN_MEANS = {
    "domain_filter": "not a domain or source name; expected a host name such as "
    "'python.org' or a knowledge-base source such as 'support_tickets'",
    "tags": "not a tag; expected 1..64 characters without spaces or commas",
    "query": "only whitespace; expected 1..400 visible characters",
    "url": "expected an http(s) URL with a dotted host name, such as 'https://python.org/'",
}
#: Some character that is not whitespace as `str.strip` sees it, spelled out: regex
#: engines (pydantic's, Python's, ECMAScript's, Hypothesis's) disagree on `\S`.
NOT_ONLY_WHITESPACE = (
    "[^\\t-\\r\\x1c- \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
)
#: Earlier turns: how many, and how long each (the rewrite reads no more).
CONTEXT_MAX_TURNS = 20
CONTEXT_TURN_MAX_CHARS = 2000
_DOTTED = f"(?:[Hh][Tt][Tt][Pp][Ss]?://)?{_LABEL}(?:\\.{_LABEL})+\\.?(?:/[^ ]*)?"
DOMAIN_PATTERN = f"^ *(?:{_DOTTED}|{_LABEL}) *$"
#: A domain only (no source name): what a deployment without sources accepts.
DOTTED_PATTERN = f"^ *{_DOTTED} *$"
#: A tag of a knowledge-base document: no whitespace, no comma.
TAG_PATTERN = "^[^\\t-\\r ,\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]+$"


def _prose_only(schema: dict[str, Any]) -> None:
    """The model's description without its docstring's runnable examples: an agent
    reading the schema wants the words, not a Python session."""
    description = str(schema.get("description", ""))
    if ">>>" in description:
        schema["description"] = description.split(">>>", 1)[0].strip()


class SearchRequest(BaseModel):
    """One search, as an agent asks for it.

    >>> SearchRequest(query="那明天呢", context=["北京今天天气怎么样"]).max_results
    5
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, title="SearchRequest", json_schema_extra=_prose_only
    )

    query: str = Field(
        description="The information need in the user's full original wording (1..400 characters).",
        min_length=1,
        max_length=QUERY_MAX_CHARS,
        # Said in the schema too: a query of only whitespace is refused.
        pattern=NOT_ONLY_WHITESPACE,
    )
    max_results: int = Field(
        5, ge=1, le=MAX_RESULTS_LIMIT, description="How many results to return."
    )
    time_range: TimeRange = Field("any", description="Only results published within this range.")
    domain_filter: list[Annotated[str, Field(max_length=300, pattern=DOMAIN_PATTERN)]] = Field(
        default_factory=list,
        max_length=50,
        description="Only results from these domains (subdomains included), e.g. "
        "['python.org'], or from these sources of the local knowledge base (a name "
        "without a dot, as configured in kb.sources), e.g. ['support_tickets'].",
    )
    tags: list[Annotated[str, Field(min_length=1, max_length=64, pattern=TAG_PATTERN)]] = Field(
        default_factory=list,
        max_length=20,
        description="Only knowledge-base documents carrying at least one of these tags "
        "(front matter tags or a source's folder rules); unless domain_filter names "
        "domains, web back ends are not asked.",
    )
    providers: list[str] | None = Field(
        None, description="Back ends to ask; default: the configured chain."
    )
    context: list[Annotated[str, Field(max_length=CONTEXT_TURN_MAX_CHARS)]] = Field(
        default_factory=list,
        max_length=CONTEXT_MAX_TURNS,
        description="Earlier turns, oldest first, used to complete elliptical queries "
        f"(at most {CONTEXT_MAX_TURNS} of at most {CONTEXT_TURN_MAX_CHARS} characters each).",
    )
    include: list[IncludeField] = Field(
        default_factory=list,
        description="Optional-tier fields to add to each result (e.g. url, published_at).",
    )
    priority: Priority = Field("normal", description="Scheduling priority under contention.")
    no_cache: bool = Field(False, description="Skip the response cache and ask the back ends.")

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: object) -> object:
        """`null` for a field that has a default is that default: strict-mode tool
        callers (OpenAI `strict: true`) must send every field, null for "leave out"."""
        if not isinstance(data, dict):
            return data
        fields = cls.model_fields
        return {
            key: value
            for key, value in data.items()
            if value is not None or key not in fields or fields[key].is_required()
        }

    @field_validator("query", mode="before")
    @classmethod
    def _trim_query(cls, value: object) -> object:
        return value.strip() if isinstance(value, str) else value

    @field_validator("domain_filter")
    @classmethod
    def _normalise_domains(cls, value: list[str]) -> list[str]:
        domains = []
        for raw in value:
            lowered = raw.strip().lower()
            domain = lowered.removeprefix("https://").removeprefix("http://")
            domain = domain.split("/", 1)[0].strip(".")
            if domain.startswith("www.") and "." in domain[4:]:
                domain = domain[4:]
            is_name = domain == lowered and "." not in domain  # a source name as it was given
            if not domain or " " in domain or ("." not in domain and not is_name):
                raise ValueError(
                    f"{raw!r} is not a domain or source name; expected a host name such as "
                    "'python.org' or a knowledge-base source such as 'support_tickets'"
                )
            domains.append(domain)
        return list(dict.fromkeys(domains))

    @field_validator("tags")
    @classmethod
    def _lower_tags(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(tag.lower() for tag in value))


class _QuickCopy(BaseModel):
    """`model_copy` without pydantic's generic `__copy__` (three `copy.copy` calls and a
    private-attribute scan): the stages copy every result several times per search.
    Same result for these models, which forbid extras and hold no private attributes."""

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        if deep:
            return super().model_copy(update=update, deep=deep)
        copied = self.__class__.__new__(self.__class__)
        values = self.__dict__.copy()
        fields_set = set(self.__pydantic_fields_set__)
        if update:
            values.update(update)
            fields_set.update(update)
        object.__setattr__(copied, "__dict__", values)
        object.__setattr__(copied, "__pydantic_extra__", None)
        object.__setattr__(copied, "__pydantic_fields_set__", fields_set)
        object.__setattr__(copied, "__pydantic_private__", None)
        return copied

    @classmethod
    def from_valid(cls, **values: Any) -> Self:
        """`cls(**values)` without validating, for values of exactly the types the
        model declares (which validation keeps as they are): the same fields, defaults
        and set fields as `__init__` gives, in half its time (`model_construct` reads
        every default factory's signature on each call and costs more than validating)."""
        defaults, factories = _defaults(cls)
        fields = defaults.copy()
        fields.update(values)
        for name, factory in factories:
            if name not in values:
                fields[name] = factory()
        built = cls.__new__(cls)
        object.__setattr__(built, "__dict__", fields)
        object.__setattr__(built, "__pydantic_extra__", None)
        object.__setattr__(built, "__pydantic_fields_set__", set(values))
        object.__setattr__(built, "__pydantic_private__", None)
        return built


@cache  # one entry per model class
def _defaults(
    model: type[BaseModel],
) -> tuple[dict[str, Any], tuple[tuple[str, Callable[[], Any]], ...]]:
    """Each field of `model` in order with its default (None where a factory makes it),
    and the fields made by a default factory, with it."""
    fields = model.model_fields.items()
    defaults = {name: None if info.default_factory else info.default for name, info in fields}
    factories = tuple(
        (name, info.default_factory) for name, info in fields if info.default_factory is not None
    )
    return defaults, factories  # type: ignore[return-value]


class ResultItem(_QuickCopy):
    """One result after normalisation, before projection."""

    model_config = ConfigDict(extra="forbid", title="ResultItem")

    id: str = Field(
        description="Stable identifier: a hash of the URL as sent, else of title and snippet."
    )
    url: str | None = Field(description="The link the back end gave; null if it gave none.")
    title: str = ""
    snippet: str = ""
    domain: str | None = None
    providers: list[str] = Field(description="Which back ends returned this result.")
    ranks: dict[str, int] = Field(
        default_factory=dict, description="Each back end's 1-based position for this result."
    )
    published_at: datetime | None = Field(
        None,
        description="As the page states it when its page was read (include content), "
        "else as the back end sent it; never guessed.",
    )
    freshness: Freshness = "unknown"
    dated_from: DatedFrom | None = Field(
        None, description="Where the date behind `freshness` was found; null when undated."
    )
    source_trust_score: float | None = Field(None, ge=0, le=1)
    trust_breakdown: dict[str, float] = Field(
        default_factory=dict, description="The parts of source_trust_score, before weighting."
    )
    sources: list[str] = Field(
        default_factory=list, description="Every URL this result was found at (merged duplicates)."
    )
    relevance: float = Field(0.0, ge=0, le=1)
    fields: dict[str, Any] = Field(
        default_factory=dict, description="Stable provider-specific extras."
    )
    fact_check: FactCheck | None = None
    flags: list[str] = Field(default_factory=list)
    degraded: bool = False
    missing: list[str] = Field(default_factory=list)
    content: str | None = Field(
        None, description="With include content: the page's passages nearest the query."
    )


class ProjectedItem(_QuickCopy):
    """A result as the agent receives it: the always tier plus what `include` asked for.

    Fields that were not projected are absent from the JSON, not null.
    """

    model_config = ConfigDict(extra="forbid", title="Result")

    title: str = ""
    snippet: str = ""
    id: str | None = None
    url: str | None = None
    domain: str | None = None
    providers: list[str] | None = None
    ranks: dict[str, int] | None = None
    published_at: datetime | None = None
    freshness: Freshness | None = None
    dated_from: DatedFrom | None = None
    trust_breakdown: dict[str, float] | None = None
    sources: list[str] | None = None
    source_trust_score: float | None = None
    relevance: float | None = None
    fields: dict[str, Any] | None = None
    fact_check: FactCheck | None = None
    flags: list[str] | None = None
    degraded: bool | None = Field(None, description="Present and true when a field fell back.")
    missing: list[str] | None = Field(None, description="The fields that were missing or empty.")
    content: str | None = Field(
        None, description="The page's passages nearest the query (include content)."
    )

    @model_serializer(mode="wrap")
    def _only_projected(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        # __pydantic_fields_set__, not the model_fields_set property, and read once:
        # the property per key made this 4x slower, the largest cost of a response.
        projected = self.__pydantic_fields_set__
        if (
            info.include is None
            and info.exclude is None
            and not info.exclude_defaults
            and not info.exclude_none
        ):
            # The common item (title, snippet, url): only strings and nulls, which
            # serialise the same without their field's serializer. The handler would
            # serialise all 20 fields to keep 3 (7 us an item, 150 of 180 us for a
            # response of 20).
            plain = _strings_only(self.__dict__, projected)
            if plain is not None:
                return plain
        data: dict[str, Any] = handler(self)
        for key in data.keys() - projected:
            del data[key]
        return data


#: The fields of a projected item in the order its JSON gives them.
_PROJECTED_ORDER = tuple(ProjectedItem.model_fields)


def _strings_only(values: dict[str, Any], projected: set[str]) -> dict[str, Any] | None:
    """The projected fields in field order, when each is a string or null; else None.
    (One loop: a comprehension and an `all` over it took half as long again.)"""
    plain: dict[str, Any] = {}
    for name in _PROJECTED_ORDER:
        if name in projected:
            value = values[name]
            if value is not None and type(value) is not str:
                return None
            plain[name] = value
    return plain


class ErrorInfo(BaseModel):
    """A failure as the caller sees it (published under the name `SearchError`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="SearchError")

    code: str = Field(description="Stable machine-readable code, e.g. provider_timeout.")
    category: ErrorCategory
    provider: str | None = None
    http_status: int | None = Field(None, description="Status the back end answered, if any.")
    message: str
    retry_after_s: float | None = None
    action: ErrorAction = Field("report", description="What sleuth did about it.")
    field: str | None = Field(None, description="For invalid input: the offending field.")
    allowed: list[str] | None = Field(None, description="For invalid input: the accepted values.")


class Citation(BaseModel):
    model_config = _STRICT

    result: int = Field(ge=0, description="Index into `results`.")
    start: int = Field(ge=0, description="Start of the cited span in that result's snippet.")
    end: int = Field(ge=0)


class SummarySentence(BaseModel):
    model_config = _STRICT

    text: str
    citations: list[Citation]


class FactValue(BaseModel):
    """One value claimed for an attribute, and who claimed it."""

    model_config = _STRICT

    value: float
    sources: list[int] = Field(description="Indexes into `results` of the items that state it.")
    domains: list[str] = Field(description="The independent registrable domains that state it.")


class Fact(BaseModel):
    """A numeric claim checked across independent sources.

    `agreed`: two or more independent domains give the same value (within the
    configured tolerance); `disputed`: sources differ, every value is listed;
    `single_source`: only one domain states it.
    """

    model_config = _STRICT

    attribute: str = Field(description="What the number is about, in the query's words.")
    unit: str | None = None
    status: FactStatus
    value: float = Field(description="The best-supported value (the majority's).")
    values: list[FactValue]


class Degradation(BaseModel):
    """One step away from the ideal answer, with the reason."""

    model_config = _STRICT

    kind: str = Field(description="e.g. provider_failed, emulated_time_range, deadline_exceeded.")
    provider: str | None = None
    reason: str


class ProviderReport(BaseModel):
    model_config = _STRICT

    status: ProviderStatus
    latency_ms: float
    results: int
    retries: int = 0


class SearchResponse(BaseModel):
    """What one search returns. `results` are projected; `errors` never hide a partial answer."""

    model_config = ConfigDict(extra="forbid", title="SearchResponse")

    task_id: str
    query: str
    rewritten_query: str
    results: list[ProjectedItem]
    summary: list[SummarySentence] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    confidence: float | None = Field(
        None, ge=0, le=1, description="Null until results are verified."
    )
    degraded: bool = False
    degradations: list[Degradation] = Field(default_factory=list)
    errors: list[ErrorInfo] = Field(default_factory=list)
    providers: dict[str, ProviderReport] = Field(default_factory=dict)
    cache: CacheState = "miss"
    timings: dict[str, float] = Field(default_factory=dict, description="Milliseconds per stage.")


class TaskEvent(BaseModel):
    """One step of a task: accepted, started, provider_started, provider_finished,
    stage, done (and cancel_requested, requeued)."""

    model_config = _STRICT

    seq: int = Field(0, ge=0, description="Position in the task's events, from 1.")
    at: datetime
    kind: str
    detail: dict[str, Any] = Field(default_factory=dict)


class StepReport(BaseModel):
    model_config = ConfigDict(extra="forbid", title="WorkflowStepReport")

    id: str
    kind: str
    items: int | None = Field(None, description="Items the step produced or went through.")
    written: int | None = Field(None, description="Records written (sinks, for_each).")
    failed: int | None = Field(None, description="for_each items that failed.")
    resumed: bool = Field(False, description="Taken from an earlier attempt's checkpoint.")


class FailedItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, title="WorkflowFailedItem")

    step: str
    key: str
    code: str
    reason: str


class WorkflowRun(BaseModel):
    """What a workflow run did (a workflow task's `run`)."""

    model_config = ConfigDict(extra="forbid", title="WorkflowRun")

    workflow: str
    slot: datetime | None = Field(None, description="The schedule slot, for a scheduled run.")
    since: datetime | None = None
    until: datetime | None = None
    steps: list[StepReport] = Field(default_factory=list)
    written: int = Field(0, description="Records written by every sink, this run.")
    failed: list[FailedItem] = Field(default_factory=list)
    attempt: int = Field(1, description="Which attempt finished it (above 1 after a crash).")


class Task(BaseModel):
    """An asynchronous search: submitted, run by a worker, finished with a result or an
    error. Pending and running tasks always reach success or failed."""

    model_config = ConfigDict(extra="forbid", title="Task")

    task_id: str
    status: TaskStatus
    events: list[TaskEvent] = Field(default_factory=list)
    result: SearchResponse | None = None
    error: ErrorInfo | None = None
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None = Field(None, description="When a worker first took it.")
    finished_at: datetime | None = None
    attempts: int = Field(
        0, ge=0, description="How many times a worker took it (more than 1 after a crash)."
    )
    workflow: str | None = Field(None, description="For a workflow run: the workflow's name.")
    run: WorkflowRun | None = Field(
        None, description="For a workflow run that succeeded: what it did (`result` is null)."
    )


SCHEMAS: dict[str, type[BaseModel]] = {
    "input": SearchRequest,
    "output": SearchResponse,
    "error": ErrorInfo,
}


def _literal_values(annotation: object) -> list[str] | None:
    if get_origin(annotation) is Literal:
        return [str(arg) for arg in get_args(annotation)]
    for arg in get_args(annotation):
        found = _literal_values(arg)
        if found:
            return found
    return None


def _field_constraints(model: type[BaseModel], name: str) -> list[str] | None:
    """The values a field accepts, as words for an error message."""
    field = model.model_fields.get(name)
    if field is None:
        return None
    literals = _literal_values(field.annotation)
    if literals:
        return literals
    bounds = {type(m).__name__: m for m in field.metadata}
    lower = getattr(bounds.get("Ge"), "ge", None)
    upper = getattr(bounds.get("Le"), "le", None)
    if lower is not None and upper is not None:
        return [f"{lower}..{upper}"]
    min_len = getattr(bounds.get("MinLen"), "min_length", None)
    max_len = getattr(bounds.get("MaxLen"), "max_length", None)
    if min_len is not None and max_len is not None:
        return [f"{min_len}..{max_len} characters"]
    return None


def describe_validation_error(
    error: ValidationError, model: type[BaseModel] = SearchRequest
) -> list[ErrorInfo]:
    """Turn pydantic's errors into contract errors that name the field and what it accepts."""
    infos = []
    for detail in error.errors(include_url=False):
        loc = detail["loc"]
        field = str(loc[0]) if loc else "request"
        where = ".".join(str(part) for part in loc) or "request"
        allowed = _field_constraints(model, field)
        received = detail.get("input")
        shown = (
            repr(received)
            if not isinstance(received, str) or len(received) <= 60
            else (f"a {len(received)}-character string")
        )
        reason = detail["msg"].removeprefix("Value error, ")
        if detail["type"] == "string_pattern_mismatch":  # the pattern itself helps nobody
            reason = _PATTERN_MEANS.get(field, "not in the expected form")
        message = f"{where}: {reason} (got {shown})"
        if detail["type"] == "extra_forbidden":
            allowed = list(model.model_fields)
            message = f"{where}: unknown field"
        if allowed:
            message += f"; allowed: {', '.join(allowed)}"
        infos.append(
            ErrorInfo(
                code="invalid_request",
                category="non_recoverable",
                http_status=None,
                message=message,
                field=field,
                allowed=allowed,
            )
        )
    return infos
