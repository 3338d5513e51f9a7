"""Settings: `sleuth.yaml`, overridden by `SLEUTH_*` environment variables.

The file is found from the explicit path, else `SLEUTH_CONFIG`, else `./sleuth.yaml`
when it exists; with none, the documented defaults apply (the embedded default:
local knowledge base only, no keys, no server). Nested keys use `__` in the
environment: `SLEUTH_DEADLINE_S=5`, `SLEUTH_PROVIDERS__SEARXNG__ENABLED=true`,
`SLEUTH_KB__PATH=/data/kb.sqlite`. Every pipeline knob lives in the settings model
of the stage that uses it; `docs/sleuth.example.yaml` lists them all.

>>> Settings().chain
['local']
"""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from sleuth.admission import AdmissionSettings
from sleuth.data_dir import default_data_dir
from sleuth.egress import EgressSettings
from sleuth.errors import ConfigError
from sleuth.extract.settings import ExtractSettings
from sleuth.kb.sources import SourceConfig, check_source_name
from sleuth.observe import ObserveSettings
from sleuth.providers.declared import HttpSpec
from sleuth.redaction import secret_name
from sleuth.resilience.breaker import BreakerSettings
from sleuth.resilience.hedge import HedgeSettings
from sleuth.resilience.ladder import LadderSettings
from sleuth.resilience.quota import QuotaSettings
from sleuth.resilience.retry import RetrySettings
from sleuth.resilience.rules import RulesSettings
from sleuth.resilience.stragglers import StragglerSettings
from sleuth.service_settings import ServeSettings, TaskSettings
from sleuth.stages.facts.agreement import FactSettings
from sleuth.stages.facts.grounding import GroundingSettings
from sleuth.stages.query.rewrite import RewriteSettings
from sleuth.stages.results.clean import CleanSettings
from sleuth.stages.results.dedupe import DedupeSettings
from sleuth.stages.results.project import ProjectionSettings
from sleuth.stages.results.rank import RankSettings
from sleuth.stages.safety.content_policy import ContentPolicySettings
from sleuth.stages.safety.guard import GuardSettings
from sleuth.stages.safety.injection import InjectionSettings
from sleuth.stages.summary.llm_summary import LLMSummarySettings
from sleuth.stages.summary.summarize import SummarySettings
from sleuth.stages.verify.confidence import ConfidenceSettings
from sleuth.stages.verify.dates import DateSettings
from sleuth.stages.verify.trust import TrustSettings
from sleuth.store import CacheSettings, StoreSettings
from sleuth.usage.settings import AuditSettings, UsageSettings
from sleuth.workflows.tool_models import ToolDefinition
from sleuth.yaml_file import read_yaml

log = logging.getLogger(__name__)


class ProviderConfig(BaseModel):
    """One back end's settings (`providers.<name>`)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    base_url: str = Field("", description="Endpoint; `{lang}` is filled with the query language.")
    api_key_env: str | None = Field(None, description="Environment variable holding the API key.")
    timeout_s: float = Field(3.0, gt=0, le=60)
    options: dict[str, Any] = Field(default_factory=dict, description="Provider-specific extras.")
    kind: Literal["builtin", "http"] = Field(
        "builtin",
        description="builtin: a provider module; http: any HTTP API, declared in `http:` alone.",
    )
    http: HttpSpec | None = Field(
        None, description="kind http: the call and how to read the answer (docs/providers.md)."
    )

    @model_validator(mode="after")
    def _http_needs_its_spec(self) -> ProviderConfig:
        if self.kind == "http" and self.http is None:
            raise ValueError("kind http needs an `http:` section (url, results, fields)")
        if self.kind != "http" and self.http is not None:
            raise ValueError("an `http:` section needs kind: http")
        return self


def default_providers() -> dict[str, ProviderConfig]:
    return {
        "local": ProviderConfig(base_url="kb:search", timeout_s=2.0),
        "searxng": ProviderConfig(enabled=False, base_url="http://localhost:8888"),
        "wikipedia": ProviderConfig(base_url="https://{lang}.wikipedia.org/w/api.php"),
        "duckduckgo": ProviderConfig(base_url="ddgs:text"),
        "brave": ProviderConfig(
            base_url="https://api.search.brave.com/res/v1/web/search", api_key_env="BRAVE_API_KEY"
        ),
        "google": ProviderConfig(
            base_url="https://www.googleapis.com/customsearch/v1", api_key_env="GOOGLE_API_KEY"
        ),
        "serpapi": ProviderConfig(
            base_url="https://serpapi.com/search", api_key_env="SERPAPI_API_KEY"
        ),
        "tavily": ProviderConfig(
            base_url="https://api.tavily.com/search", api_key_env="TAVILY_API_KEY"
        ),
        "exa": ProviderConfig(base_url="https://api.exa.ai/search", api_key_env="EXA_API_KEY"),
        **_declared_providers(),
    }


def _declared_providers() -> dict[str, ProviderConfig]:
    """Defaults of the registered providers that declare their own endpoint and key
    variable (`ProviderInfo.default_url`, `api_key_env`): a provider added as a module
    needs no entry above."""
    from sleuth import providers  # at call time: the registry imports provider modules

    declared = {}
    for name in providers.names():
        info = providers.get(name).info
        if info.default_url:
            declared[name] = ProviderConfig(base_url=info.default_url, api_key_env=info.api_key_env)
    return declared


class KnowledgeBaseConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: Path = Field(
        default_factory=lambda: default_data_dir() / "kb.sqlite",
        description="The SQLite file of the local knowledge base.",
    )
    tokenizer: Literal["jieba", "trigram"] = Field(
        "jieba", description="How text is tokenised at index time (see docs/knowledge-base.md)."
    )
    exclude: list[str] = Field(
        default_factory=list,
        description=(
            "Globs of files and folders `sleuth index` leaves out, besides hidden ones and "
            "generated folders such as _sources and node_modules: a glob without '/' is "
            "matched against each name, one with '/' against the path from the indexed folder."
        ),
    )
    sources: dict[str, SourceConfig] = Field(
        default_factory=dict,
        description="Named collections (name -> paths, folder tag rules, schedule): "
        "`sleuth index` with no path indexes them, and a search's domain_filter may name "
        "them (docs/knowledge-base.md).",
    )

    @field_validator("path")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        return value.expanduser()

    @field_validator("sources")
    @classmethod
    def _source_names(cls, value: dict[str, SourceConfig]) -> dict[str, SourceConfig]:
        named = {check_source_name(name): source for name, source in value.items()}
        if len(named) < len(value):
            raise ValueError("two sources differ only in case; name each once")
        return named


class Settings(BaseSettings):
    """Everything configurable, with its documented default."""

    model_config = SettingsConfigDict(
        env_prefix="SLEUTH_", env_nested_delimiter="__", extra="forbid", frozen=True
    )

    chain: list[str] = Field(
        default_factory=lambda: ["local"],
        description="Providers asked when a request names none.",
    )
    backups: list[str] = Field(
        default_factory=list,
        description="Providers asked, in order, in place of a chain provider that fails, "
        "is skipped (open breaker, no quota) or is slower than its hedge delay; "
        "only for requests that name no providers.",
    )
    deadline_s: float = Field(3.0, gt=0, le=120, description="Overall deadline of one search.")
    per_provider_results: int = Field(
        10,
        ge=1,
        le=50,
        description="Candidates asked of and taken from each provider before merging; "
        "a request's larger max_results raises it for that request.",
    )
    egress_proxy: str | None = Field(
        None, description="When set, every provider call goes through it."
    )
    replay: Path | None = Field(None, description="Answer provider calls from this cassette.")
    record: Path | None = Field(
        None, description="Append every provider exchange to this cassette."
    )
    max_body_bytes: int = Field(5_000_000, gt=0, description="Larger provider bodies are rejected.")
    providers: dict[str, ProviderConfig] = Field(default_factory=default_providers)
    mappings_dir: Path | None = Field(
        None,
        description="Folder of <provider>.yaml field mappings that override the built-in ones.",
    )
    providers_dir: Path | None = Field(
        None,
        description="Folder of <name>.yaml files, each one `kind: http` provider as "
        "`providers.<name>` takes it (an entry under `providers:` wins key by key).",
    )
    kb: KnowledgeBaseConfig = Field(default_factory=KnowledgeBaseConfig)
    tools: list[ToolDefinition] = Field(
        default_factory=list,
        description="Declared tools: a templated search or a composite (docs/tools.md).",
    )
    tools_dir: Path | None = Field(
        None,
        description="Folder of *.yaml declared tools, re-read when a file changes "
        "(a broken edit keeps the last good set).",
    )
    workflows_dir: Path | None = Field(
        None,
        description="Folder of *.yaml workflows served at /v1/workflows/{name}/runs and "
        "run on their schedules by the task workers (docs/workflows.md).",
    )
    guard: GuardSettings = Field(default_factory=GuardSettings)
    rewrite: RewriteSettings = Field(default_factory=RewriteSettings)
    clean: CleanSettings = Field(default_factory=CleanSettings)
    dedupe: DedupeSettings = Field(default_factory=DedupeSettings)
    rank: RankSettings = Field(default_factory=RankSettings)
    projection: ProjectionSettings = Field(default_factory=ProjectionSettings)
    injection: InjectionSettings = Field(default_factory=InjectionSettings)
    dates: DateSettings = Field(default_factory=DateSettings)
    trust: TrustSettings = Field(default_factory=TrustSettings)
    facts: FactSettings = Field(default_factory=FactSettings)
    summary: SummarySettings = Field(default_factory=SummarySettings)
    grounding: GroundingSettings = Field(default_factory=GroundingSettings)
    llm_summary: LLMSummarySettings = Field(default_factory=LLMSummarySettings)
    confidence: ConfidenceSettings = Field(default_factory=ConfidenceSettings)
    rules: RulesSettings = Field(default_factory=RulesSettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    breaker: BreakerSettings = Field(default_factory=BreakerSettings)
    quota: QuotaSettings = Field(default_factory=QuotaSettings)
    hedge: HedgeSettings = Field(default_factory=HedgeSettings)
    stragglers: StragglerSettings = Field(default_factory=StragglerSettings)
    admission: AdmissionSettings = Field(default_factory=AdmissionSettings)
    ladder: LadderSettings = Field(default_factory=LadderSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    cache: CacheSettings = Field(default_factory=CacheSettings)
    egress: EgressSettings = Field(default_factory=EgressSettings)
    extract: ExtractSettings = Field(default_factory=ExtractSettings)
    content_policy: ContentPolicySettings = Field(default_factory=ContentPolicySettings)
    tasks: TaskSettings = Field(default_factory=TaskSettings)
    serve: ServeSettings = Field(default_factory=ServeSettings)
    observe: ObserveSettings = Field(default_factory=ObserveSettings)
    usage: UsageSettings = Field(default_factory=UsageSettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)

    def secret_env(self) -> list[str]:
        """The environment variables holding this configuration's keys (providers' and
        the model summary's), whose values nothing sleuth writes may contain."""
        names = [conf.api_key_env for conf in self.providers.values() if conf.api_key_env]
        if self.llm_summary.api_key_env:
            names.append(self.llm_summary.api_key_env)
        return names

    @model_validator(mode="before")
    @classmethod
    def _provider_files(cls, data: Any) -> Any:
        """`providers_dir`'s files as `providers:` entries, under those written there."""
        if not isinstance(data, dict) or not data.get("providers_dir"):
            return data
        folder = Path(str(data["providers_dir"])).expanduser()
        if not folder.is_dir():
            raise ValueError(f"providers_dir: {folder} is not a folder")
        declared: dict[str, Any] = {}
        for path in sorted(folder.glob("*.yaml")):
            entry = read_yaml(path, "provider")
            if not isinstance(entry, dict):
                raise ValueError(f"providers_dir: {path} must be a mapping (kind: http, http: ...)")
            declared[path.stem] = {"kind": "http", **entry}
        written = data.get("providers") or {}
        if not isinstance(written, dict):
            return data
        for name, override in written.items():
            base = declared.get(name, {})
            declared[name] = {**base, **override} if isinstance(override, dict) else override
        return {**data, "providers": declared}

    @model_validator(mode="after")
    def _declare_http_providers(self) -> Settings:
        """Each `kind: http` provider joins the registry, as a module's does on import."""
        from sleuth import providers  # at call time: the registry imports provider modules
        from sleuth.providers.declared import provider_for

        for name, conf in self.providers.items():
            if conf.http is None:
                continue
            if name in providers.names():
                raise ValueError(
                    f"providers.{name}: kind http cannot take a built-in provider's name; "
                    "choose another"
                )
            providers.declare(provider_for(name, conf.http))
        return self

    @field_validator("providers", mode="before")
    @classmethod
    def _over_defaults(cls, value: Any) -> Any:
        """A file that configures one provider keeps the defaults of the others."""
        if not isinstance(value, dict):
            return value
        merged: dict[str, Any] = {
            name: config.model_dump() for name, config in default_providers().items()
        }
        for name, override in value.items():
            if isinstance(override, ProviderConfig):
                override = override.model_dump(exclude_unset=True)
            if isinstance(override, dict):
                merged[name] = {**merged.get(name, {}), **override}
            else:
                merged[name] = override
        return merged

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The YAML file arrives as init arguments; the environment overrides it.
        return (env_settings, init_settings)


def config_path(explicit: Path | None = None) -> Path | None:
    if explicit is not None:
        return explicit
    if env := os.environ.get("SLEUTH_CONFIG"):
        return Path(env)
    local = Path("sleuth.yaml")
    return local if local.is_file() else None


def _validated(overrides: dict[str, Any]) -> dict[str, Any]:
    """Overrides checked field by field; they win over file and environment alike."""
    checked = {}
    for name, value in overrides.items():
        field = Settings.model_fields.get(name)
        if field is None:
            raise ConfigError(f"unknown setting {name!r}")
        # The field's own constraints (gt=0 and the like) come along in its metadata.
        adapter: TypeAdapter[Any] = TypeAdapter(field.rebuild_annotation())
        try:
            checked[name] = adapter.validate_python(value)
        except ValidationError as exc:
            raise ConfigError(f"{name}: {exc.errors()[0]['msg']}") from exc
    return checked


#: Environment variables with the prefix that are not settings but are read by name.
_ENV_NOT_SETTINGS = frozenset({"SLEUTH_CONFIG"})


def unknown_environment(environ: Mapping[str, str]) -> list[str]:
    """The `SLEUTH_*` variables that name no setting (`SLEUTH_DEADLIN_S`), which the
    settings would silently ignore. Variables holding a secret (`*_KEY`, `*_TOKEN`)
    are left alone: a configuration may name one in `api_key_env`.

    >>> unknown_environment({"SLEUTH_DEADLIN_S": "3", "SLEUTH_DEADLINE_S": "3", "HOME": "/"})
    ['SLEUTH_DEADLIN_S']
    """
    found = []
    for name in sorted(environ):
        if not name.startswith("SLEUTH_") or name in _ENV_NOT_SETTINGS:
            continue
        head = name.removeprefix("SLEUTH_").split("__", 1)[0].lower()
        if head not in Settings.model_fields and not secret_name(name):
            found.append(name)
    return found


def _env_hint(name: str) -> str:
    head = name.removeprefix("SLEUTH_").split("__", 1)[0].lower()
    close = difflib.get_close_matches(head, list(Settings.model_fields), n=1)
    return f"; did you mean SLEUTH_{close[0].upper()}?" if close else ""


def _problem(error: Any) -> str:
    """One validation error of the settings, naming the place; an unknown key also gets
    the allowed keys there and the nearest one."""
    loc = tuple(str(part) for part in error["loc"])
    where = ".".join(loc)
    if error["type"] != "extra_forbidden":
        return f"{where}: {error['msg']}"
    allowed = _keys_at(loc[:-1])
    close = difflib.get_close_matches(loc[-1], allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{where}: unknown key{hint}; allowed here: {', '.join(allowed)}"


def _keys_at(path: tuple[str, ...]) -> list[str]:
    """The keys the settings allow under `path` (a dict's keys, such as a provider's
    name, are free)."""
    model: Any = Settings
    free_key = False
    for part in path:
        if free_key:
            free_key = False
            continue
        field = model.model_fields.get(part) if model is not None else None
        if field is None:
            return []
        free_key = get_origin(field.annotation) is dict
        model = _model_in(field.annotation)
    return list(model.model_fields) if model is not None and not free_key else []


def _model_in(annotation: Any) -> Any:
    """The settings model an annotation holds: itself, a dict's values, a union's one."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def load_settings(path: Path | None = None, **overrides: Any) -> Settings:
    """Read the settings; `overrides` (e.g. replay=...) win over file and environment."""
    source = config_path(path)
    data: dict[str, Any] = {}
    if source is not None:
        loaded = read_yaml(source, "config")
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"config {source} must be a mapping at the top level")
        data = loaded or {}
    try:
        settings = Settings(**data)
        if overrides:
            settings = settings.model_copy(update=_validated(overrides))
    except ValidationError as exc:
        where = f"config {source}" if source else "settings"
        problems = "; ".join(_problem(err) for err in exc.errors())
        raise ConfigError(f"{where} is invalid: {problems}") from exc
    for name in unknown_environment(os.environ):
        log.warning("%s is not a sleuth setting and is ignored%s", name, _env_hint(name))
    if settings.replay is not None:
        # A missing or broken cassette is the configuration's fault, said once here, not
        # as every provider's failure in an answer that exits 0. (Imported here: the
        # transport brings aiohttp, which a command that only reads settings never uses.)
        from sleuth.transport import read_cassette

        read_cassette(settings.replay)
    for key, names in (("chain", settings.chain), ("backups", settings.backups)):
        unknown = [name for name in names if name not in settings.providers]
        if unknown:
            raise ConfigError(
                f"{key} names providers with no configuration: {', '.join(unknown)}; "
                f"configured: {', '.join(sorted(settings.providers))}"
            )
    return settings
