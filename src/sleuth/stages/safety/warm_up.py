"""Compiling the injection screens' default patterns, and reading the query screen's
bundled model, before the first search.

The defaults compile (and the model is read) on first use
(`QueryInjectionSettings.compiled`, `ModelSettings.loaded`), so that a command that
only reads the settings does not pay for them; a service calls this from
`Sleuth.warm_up` so that its first search does not either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sleuth.stages.safety.guard import GuardSettings
    from sleuth.stages.safety.injection import InjectionSettings

__all__ = ["compile_screens"]


def compile_screens(guard: GuardSettings, injection: InjectionSettings) -> None:
    """Compile the query screen's patterns and score words, and the result screen's,
    and read the query screen's bundled model (each read once: reading compiles)."""
    query = guard.injection
    _ = query.compiled, query.score.compiled, query.model.loaded, injection.compiled
    for pattern in query.compiled.patterns:  # the defaults' compile on first use
        _ = pattern.regex
