"""The dashboard's in-process figures, kept once for everyone and once per tenant.

A tenant's key sees only its own tenant's searches, error messages and hot keywords
(acme's "merger" is not beta's business); an operator's key (role `admin`, or anyone
when auth is off) sees the whole process. `Figures` is one such view; `TenantFigures`
holds the global one and a view per tenant seen, the oldest tenant dropped past
`max_tenants` so that a flood of tenants cannot grow memory without bound.

>>> views = TenantFigures(lambda: Figures(SearchWindow(), HotKeywords(), 5), max_tenants=2)
>>> views.add("acme", SearchSample(1.0, 10.0, "ok", (), {}), [], ["merger"])
>>> views.everyone.keywords.top(1), views.of("beta").keywords.top(1)
([('merger', 1)], [])
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sleuth.metrics import HotKeywords, SearchSample, SearchWindow

__all__ = ["Figures", "TenantFigures"]


@dataclass
class Figures:
    """One view: the searches of the window, the hot keywords, the recent errors."""

    window: SearchWindow
    keywords: HotKeywords
    errors_kept: int
    recent_errors: deque[dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.recent_errors = deque(maxlen=self.errors_kept)

    def add(self, sample: SearchSample, errors: Iterable[dict[str, Any]], words: list[str]) -> None:
        self.window.add(sample)
        self.recent_errors.extend(errors)
        if words:
            self.keywords.add(words)


class TenantFigures:
    """The global view and one per tenant (at most `max_tenants`, the least recently
    searching dropped first)."""

    def __init__(self, make: Callable[[], Figures], max_tenants: int = 1000) -> None:
        self._make = make
        self.max_tenants = max_tenants
        self.everyone = make()
        self._tenants: OrderedDict[str, Figures] = OrderedDict()

    def add(
        self, tenant: str, sample: SearchSample, errors: list[dict[str, Any]], words: list[str]
    ) -> None:
        self.everyone.add(sample, errors, words)
        view = self._tenants.pop(tenant, None) or self._make()
        self._tenants[tenant] = view
        while len(self._tenants) > self.max_tenants:
            self._tenants.popitem(last=False)
        view.add(sample, errors, words)

    def of(self, tenant: str | None) -> Figures:
        """`tenant`'s view (an empty one for a tenant not seen); None: everyone's."""
        if tenant is None:
            return self.everyone
        return self._tenants.get(tenant) or self._make()
