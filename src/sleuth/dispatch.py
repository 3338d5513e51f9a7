"""Which providers a request goes to, and what each is sent.

The chain (or the providers the request names), the backups that may stand in for
them, and each provider's `HttpRequest`, built by the provider's pure `build_request`
from the guarded query (natural-language providers) or the rewritten keywords. The
only outside read is the API key, from the environment variable the configuration
names.
"""

from __future__ import annotations

import os
from datetime import datetime

from sleuth import providers as registry
from sleuth.config import Settings
from sleuth.contract import SearchRequest
from sleuth.errors import InvalidRequest, MissingApiKey
from sleuth.providers.base import HttpRequest, Provider, ProviderQuery, ProviderSettings
from sleuth.stages.rewrite import Rewritten
from sleuth.stages.scope import only_sources, split_scope

__all__ = ["backups_for", "choose_providers", "request_for"]


def choose_providers(req: SearchRequest, settings: Settings) -> list[Provider]:
    """The providers a request goes to: those it names, else the configured chain; an
    unknown or disabled name is `InvalidRequest` naming the allowed ones. A request
    that only the knowledge base can answer (tags, or source names and no domain in
    its domain filter) goes only to providers that hold sources; a source name that is
    not configured is `InvalidRequest` naming the configured ones."""
    _check_sources(req, settings)
    enabled = [name for name, conf in settings.providers.items() if conf.enabled]
    names = req.providers if req.providers is not None else settings.chain
    chosen = []
    for name in dict.fromkeys(names):
        provider = registry.get(name)  # unknown names raise InvalidRequest
        if name not in enabled:
            raise InvalidRequest(
                f"providers: {name!r} is not enabled here; allowed: {', '.join(enabled)}",
                field="providers",
                allowed=enabled,
            )
        chosen.append(provider)
    if only_sources(req.domain_filter, req.tags):
        # Web back ends cannot hold what is asked; with none that can, the gateway says so.
        chosen = [provider for provider in chosen if provider.info.sources] or chosen
    if not chosen:
        raise InvalidRequest(
            f"providers: name at least one; allowed: {', '.join(enabled)}",
            field="providers",
            allowed=enabled,
        )
    return chosen


def _check_sources(req: SearchRequest, settings: Settings) -> None:
    _domains, sources = split_scope(req.domain_filter)
    configured = list(settings.kb.sources)
    for name in sources:
        if name not in configured:
            allowed = ", ".join(configured) or "none configured (kb.sources)"
            raise InvalidRequest(
                f"domain_filter: {name!r} is neither a domain (a host name with a dot, such "
                f"as 'python.org') nor a source of the knowledge base; sources: {allowed}",
                field="domain_filter",
                allowed=configured,
            )


def backups_for(req: SearchRequest, chosen: list[Provider], settings: Settings) -> list[str]:
    """The configured backups for a request that names no providers (one that does
    gets exactly those), leaving out the chosen, the disabled, and those that cannot
    answer a request only the knowledge base can."""
    if req.providers is not None:
        return []
    taken = {provider.name for provider in chosen}
    configured = settings.providers
    sources_only = only_sources(req.domain_filter, req.tags)
    return [
        name
        for name in dict.fromkeys(settings.backups)
        if name not in taken
        and name in configured
        and configured[name].enabled
        and (not sources_only or registry.get(name).info.sources)
        and name in registry.names()
    ]


def request_for(
    provider: Provider,
    req: SearchRequest,
    guarded_text: str,
    rewritten: Rewritten,
    settings: Settings,
    now: datetime | None = None,
) -> HttpRequest:
    """The provider's description of its call; `MissingApiKey` when it has no key."""
    conf = settings.providers[provider.name]
    api_key = (os.environ.get(conf.api_key_env) or None) if conf.api_key_env else None
    if api_key is None and settings.replay is not None:
        api_key = "replay-needs-no-key"  # the cassette answers; nothing is sent anywhere
    if api_key is None and (provider.info.needs_key or conf.api_key_env):
        where = f"${conf.api_key_env}" if conf.api_key_env else "no api_key_env configured"
        raise MissingApiKey(
            f"{provider.name} needs an API key ({where}); skipped",
            provider=provider.name,
            action="fallback",
        )
    natural = provider.info.query_style == "natural"
    domains, sources = split_scope(req.domain_filter)
    holds_sources = provider.info.sources
    query = ProviderQuery(
        text=guarded_text if natural else rewritten.keywords,
        original=req.query,
        max_results=max(req.max_results, settings.per_provider_results),
        language=rewritten.language,
        time_range=req.time_range if provider.info.time_range else "any",
        domain_filter=domains if provider.info.domain_filter else (),
        sources=sources if holds_sources else (),
        tags=tuple(req.tags) if holds_sources else (),
        now=now,
    )
    call = ProviderSettings(
        base_url=conf.base_url, timeout_s=conf.timeout_s, api_key=api_key, options=conf.options
    )
    return provider.build_request(query, call)
