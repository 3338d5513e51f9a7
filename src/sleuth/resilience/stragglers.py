"""When to stop waiting for a slow provider: the others have answered enough, and it
is past the time it usually takes.

A search asks every chain provider at once. Waiting for the last of them to the
deadline makes a single hung back end cost every search the whole deadline, though
the others answered in 60 ms. So once `enough` providers have finished (answered or
failed), with enough results between them, a provider still out is left behind as
soon as it has run past its learned latency quantile (`LatencyTracker`, as the hedge
delays learn it), never sooner than `floor_s`; the answer says which one was left
and why.

Pure: the tracker is read, nothing is timed here.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from sleuth.resilience.hedge import LatencyTracker

__all__ = ["StragglerSettings", "enough", "patience"]


class StragglerSettings(BaseModel):
    """The `stragglers:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(
        True, description="Off: every provider gets the whole deadline, as slow as it is."
    )
    leave_out: int = Field(
        1,
        ge=0,
        description="At most this many providers of a search may be left behind (1: answer "
        "once all but one have answered); 0 waits for every one.",
    )
    min_results: int | None = Field(
        None,
        ge=1,
        description="The providers that answered must have this many results between "
        "them; default: the request's max_results.",
    )
    quantile: float = Field(
        0.95, gt=0, le=1, description="A provider is late past this quantile of its latencies..."
    )
    min_samples: int = Field(
        20, ge=1, description="...once this many are known; before that, default_s."
    )
    default_s: float = Field(
        1.0, gt=0, description="How long a provider with too few latencies is waited for."
    )
    floor_s: float = Field(
        0.25,
        ge=0,
        description="Never left behind sooner: a provider that is a little slower than "
        "usual keeps its place.",
    )


def patience(provider: str, tracker: LatencyTracker, settings: StragglerSettings) -> float:
    """Seconds after its start past which `provider` is late.

    >>> tracker = LatencyTracker()
    >>> settings = StragglerSettings(min_samples=3)
    >>> patience("exa", tracker, settings)       # nothing learned yet
    1.0
    >>> for latency in (0.05, 0.06, 0.4):
    ...     tracker.record("exa", latency)
    >>> patience("exa", tracker, settings)       # its p95
    0.4
    >>> tracker.record("brave", 0.05)
    >>> patience("brave", tracker, StragglerSettings(min_samples=1))   # the floor
    0.25
    """
    learned = tracker.learned(provider, settings.quantile, settings.min_samples)
    return settings.default_s if learned is None else max(settings.floor_s, learned)


def enough(finished: Sequence[int], slots: int, want: int, settings: StragglerSettings) -> bool:
    """Whether the providers that have finished (`finished`: the results of each, 0
    for one that failed) are enough to leave the rest of the `slots` behind: all but
    `leave_out` of them, with the results wanted between them.

    >>> settings = StragglerSettings()
    >>> enough([10, 10], 3, 10, settings), enough([10], 3, 10, settings)
    (True, False)
    >>> enough([10, 0], 3, 10, settings)         # one answered, one failed: finished
    True
    >>> enough([3, 2], 3, 10, settings)          # all but one finished, too few results
    False
    """
    if not settings.enabled or settings.leave_out == 0:
        return False
    if len(finished) < slots - settings.leave_out:
        return False
    return sum(finished) >= (settings.min_results or want)
