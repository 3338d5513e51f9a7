"""Which providers a request goes to, and what each is sent.

The chain (or the providers the request names), the backups that may stand in for
them, and each provider's `HttpRequest`, built by the provider's pure `build_request`
from the guarded query (natural-language providers) or the rewritten keywords. The
only outside read is the API key, from the environment variable the configuration
names.
"""

from __future__ import annotations

import os

from sleuth import providers as registry
from sleuth.config import Settings
from sleuth.contract import SearchRequest
from sleuth.errors import InvalidRequest, MissingApiKey
from sleuth.providers.base import HttpRequest, Provider, ProviderQuery, ProviderSettings
from sleuth.stages.rewrite import Rewritten

__all__ = ["backups_for", "call_for", "choose_providers", "request_for"]


def choose_providers(req: SearchRequest, settings: Settings) -> list[Provider]:
    """The providers a request goes to: those it names, else the configured chain; an
    unknown or disabled name is `InvalidRequest` naming the allowed ones."""
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
    if not chosen:
        raise InvalidRequest(
            f"providers: name at least one; allowed: {', '.join(enabled)}",
            field="providers",
            allowed=enabled,
        )
    return chosen


def backups_for(req: SearchRequest, chosen: list[Provider], settings: Settings) -> list[str]:
    """The configured backups for a request that names no providers (one that does
    gets exactly those), leaving out the chosen and the disabled."""
    if req.providers is not None:
        return []
    taken = {provider.name for provider in chosen}
    configured = settings.providers
    return [
        name
        for name in dict.fromkeys(settings.backups)
        if name not in taken
        and name in configured
        and configured[name].enabled
        and (name in registry.names() or configured[name].kind == "http")
    ]


def request_for(
    provider: Provider,
    req: SearchRequest,
    guarded_text: str,
    rewritten: Rewritten,
    settings: Settings,
) -> HttpRequest:
    """The provider's description of its call; `MissingApiKey` when it has no key."""
    query, call = call_for(provider, req, guarded_text, rewritten, settings)
    return provider.build_request(query, call)


def call_for(
    provider: Provider,
    req: SearchRequest,
    guarded_text: str,
    rewritten: Rewritten,
    settings: Settings,
) -> tuple[ProviderQuery, ProviderSettings]:
    """What the provider's pure functions are handed for this request; `MissingApiKey`
    when it needs a key and has none."""
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
    query = ProviderQuery(
        text=guarded_text if natural else rewritten.keywords,
        original=req.query,
        max_results=max(req.max_results, settings.per_provider_results),
        language=rewritten.language,
        time_range=req.time_range if provider.info.time_range else "any",
        domain_filter=tuple(req.domain_filter) if provider.info.domain_filter else (),
    )
    call = ProviderSettings(
        base_url=conf.base_url, timeout_s=conf.timeout_s, api_key=api_key, options=conf.options
    )
    return query, call
