"""The `usage:` and `audit:` sections of sleuth.yaml: prices, budgets, retention.

>>> UsageSettings().budget_for("acme") is None
True
>>> rule = BudgetRule(limit="12.50")
>>> rule.limit_micros, rule.period, rule.when_spent
(12500000, 'month', 'refuse')
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sleuth.usage.prices import MICROS, PriceEntry

__all__ = ["AuditSettings", "BudgetRule", "Period", "UsageSettings"]

Period = Literal["day", "month"]


class BudgetRule(BaseModel):
    """One tenant's budget: at most `limit` of `currency` per UTC day or month."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    period: Period = Field("month", description="day or month (UTC calendar).")
    limit: str = Field(description='The most the period may cost, a decimal string ("50.00").')
    currency: str = Field("USD", pattern=r"^[A-Z]{3}$", description="Counts calls priced in it.")
    when_spent: Literal["refuse", "degrade"] = Field(
        "refuse",
        description="refuse: the error budget_exceeded; degrade: only free providers "
        "(priced 0) answer until the period ends, refused when there is none.",
    )

    @field_validator("limit")
    @classmethod
    def _amount(cls, value: str) -> str:
        try:
            amount = Decimal(str(value).strip())
        except InvalidOperation:
            raise ValueError(f"{value!r} is not a decimal number") from None
        if not amount.is_finite() or amount < 0:
            raise ValueError(f"{value!r}: give a limit of 0 or more")
        if amount * MICROS != (amount * MICROS).to_integral_value():
            raise ValueError(f"{value!r} has more than six decimal places")
        return str(amount)

    @property
    def limit_micros(self) -> int:
        return int(Decimal(self.limit) * MICROS)


class UsageSettings(BaseModel):
    """Cost accounting: every provider call's price recorded by tenant, key, tool and
    workflow (docs/usage.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(True, description="Record usage rows (and check budgets).")
    prices: dict[str, PriceEntry | None] = Field(
        default_factory=dict,
        description="Per provider, over the built-in table (usage/default_prices.yaml); "
        "null: unknown.",
    )
    budgets: dict[str, BudgetRule] = Field(
        default_factory=dict,
        description='Per tenant; "*" applies to every tenant without a budget of its own.',
    )
    degrade_to: list[str] = Field(
        default_factory=lambda: ["local"],
        description="Free providers a degraded search may use besides the free ones it "
        "would have asked anyway.",
    )
    retention_days: float = Field(
        400.0, gt=0, description="Usage rows older than this are pruned (`sleuth usage --prune`)."
    )

    def budget_for(self, tenant: str) -> BudgetRule | None:
        return self.budgets.get(tenant) or self.budgets.get("*")


class AuditSettings(BaseModel):
    """The append-only audit log: one entry per search."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(True, description="Write an audit entry for every search.")
    record_query: bool = Field(
        False, description="Keep the query text in each entry (otherwise only its SHA-256)."
    )
    retention_days: float = Field(
        90.0, gt=0, description="Entries older than this are pruned (`sleuth audit --prune`)."
    )
