"""Click feedback and the per-domain click-through prior it feeds into trust.

An agent reports that a result was clicked or used (`POST /v1/feedback`); sleuth
counts, per registrable domain, how often its results were shown (each search's
returned results) and how often they were clicked or used. The prior is the
smoothed click-through rate, (clicks + 1) / (shown + 2): a domain with no history
has none (trust ignores it), one clicked 9 times in 10 shows gets 0.83, one shown 50
times and never clicked gets 0.02. Counts live in the store's counters, so replicas
share them; a search only adds to an in-memory tally, flushed by the service.

>>> round(prior(clicks=9, shown=10), 3), round(prior(clicks=0, shown=50), 3)
(0.833, 0.019)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sleuth.stages.verify.trust import registrable_domain
from sleuth.store import CounterStore

__all__ = ["Feedback", "FeedbackTally", "prior"]

_SHOWN = "feedback:shown:"
_CLICKED = "feedback:clicked:"
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
#: No control character and no space of any kind, spelled out rather than `\s`, which
#: regex engines (pydantic's, Python's, ECMAScript's) read differently.
_URL_CHAR = (
    "[^\\x00-\\x20\\x7f-\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]"
)
#: What `Feedback.url` accepts, said in the schema too: http(s), a dotted ASCII host
#: name (Punycode for international ones), a port of at most four digits, no spaces.
WEB_URL_PATTERN = f"^https?://{_LABEL}(?:\\.{_LABEL})+\\.?(?::[0-9]{{1,4}})?(?:[/?#]{_URL_CHAR}*)?$"


class Feedback(BaseModel):
    """A result the agent clicked or used."""

    model_config = ConfigDict(extra="forbid", title="Feedback")

    url: str = Field(
        min_length=8,
        max_length=2048,
        pattern=WEB_URL_PATTERN,
        description="The result's URL, as returned (http or https, a dotted host name).",
    )
    action: Literal["clicked", "used"] = Field(
        "used", description="clicked: the agent opened it; used: it went into an answer."
    )
    task_id: str | None = Field(
        None, max_length=100, description="The search or task that returned the result."
    )

    @field_validator("url")
    @classmethod
    def _web_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")) or registrable_domain(value) is None:
            raise ValueError("expected an http(s) URL with a domain name")
        return value


def prior(*, clicks: int, shown: int) -> float:
    """Laplace-smoothed click-through rate; never 0 or 1 on little evidence."""
    shown = max(shown, clicks)
    return (clicks + 1) / (shown + 2)


class FeedbackTally:
    """Shows counted in memory per search, clicks written at once, priors read back."""

    def __init__(self) -> None:
        self._shown: Counter[str] = Counter()

    def shown(self, urls: Iterable[str | None]) -> None:
        """Count one show for the domain of each URL (no I/O: a search calls this)."""
        for url in urls:
            if url and (domain := registrable_domain(url)):
                self._shown[domain] += 1

    async def record(self, store: CounterStore, feedback: Feedback) -> str:
        """Count a click or use; returns the domain it was counted for."""
        domain = registrable_domain(feedback.url)
        if domain is None:  # the model's validator refuses such URLs; never count them
            raise ValueError(f"no domain in {feedback.url!r}")
        await store.add(_CLICKED + domain)
        return domain

    async def flush(self, store: CounterStore) -> None:
        tally, self._shown = self._shown, Counter()
        for domain, n in tally.items():
            await store.add(_SHOWN + domain, n)

    async def priors(self, store: CounterStore) -> dict[str, float]:
        """The prior of every domain that has been clicked or used at least once."""
        clicked = await store.counters(_CLICKED)
        shown = await store.counters(_SHOWN)
        return {
            name.removeprefix(_CLICKED): prior(
                clicks=count, shown=shown.get(_SHOWN + name.removeprefix(_CLICKED), 0)
            )
            for name, count in clicked.items()
        }
