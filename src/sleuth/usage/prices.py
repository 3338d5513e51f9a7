"""What each provider's call costs: the price table, in exact micro-units.

Money is never a float here: a price is a decimal string per 1,000 calls, turned into
whole micro-units (millionths of the currency) per call, so any number of calls sums
exactly. Unknown is None, never 0: a call whose price nobody knows is counted as an
unpriced call, not as free.

>>> table = PriceTable.from_settings({"kagi": {"per_1000": "25", "currency": "USD"}})
>>> table.of("kagi").micros_per_call, table.of("kagi").currency
(25000, 'USD')
>>> table.of("brave") is None, table.is_free("local"), table.is_free("brave")
(True, True, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sleuth.yaml_file import read_yaml

__all__ = ["DEFAULT_PRICES_FILE", "Price", "PriceEntry", "PriceTable", "format_micros"]

DEFAULT_PRICES_FILE = Path(__file__).with_name("default_prices.yaml")
MICROS = 1_000_000


class PriceEntry(BaseModel):
    """One provider's price, as `usage.prices.<provider>` writes it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    per_1000: str = Field(description='The price of 1,000 calls, a decimal string ("5.00").')
    currency: str = Field("USD", pattern=r"^[A-Z]{3}$", description="ISO 4217 code, e.g. USD.")
    source: str = Field("", description="Where the price was read.")
    as_of: str | None = Field(None, description="When it was read (YYYY-MM-DD).")

    @field_validator("per_1000")
    @classmethod
    def _whole_micros(cls, value: str) -> str:
        try:
            amount = Decimal(str(value).strip())
        except InvalidOperation:
            raise ValueError(f"{value!r} is not a decimal number") from None
        if not amount.is_finite() or amount < 0:
            raise ValueError(f"{value!r}: give a price of 0 or more")
        if (amount * 1000) != (amount * 1000).to_integral_value():
            raise ValueError(f"{value!r} per 1,000 calls is not a whole micro-unit per call")
        return str(amount)

    def micros_per_call(self) -> int:
        # per_1000 / 1000 units a call, times 1e6 micro-units a unit.
        return int(Decimal(self.per_1000) * 1000)


@dataclass(frozen=True)
class Price:
    """One call's price: whole micro-units of `currency`."""

    micros_per_call: int
    currency: str


class PriceTable:
    """The built-in prices (`default_prices.yaml`) under the configured ones."""

    def __init__(self, prices: Mapping[str, Price | None]) -> None:
        self._prices = dict(prices)

    @classmethod
    def from_settings(
        cls, configured: Mapping[str, PriceEntry | Mapping[str, Any] | None]
    ) -> PriceTable:
        merged: dict[str, PriceEntry | None] = dict(default_entries())
        for name, entry in configured.items():
            merged[name] = (
                entry
                if entry is None or isinstance(entry, PriceEntry)
                else PriceEntry.model_validate(entry)
            )
        return cls(
            {
                name: None if entry is None else Price(entry.micros_per_call(), entry.currency)
                for name, entry in merged.items()
            }
        )

    def of(self, provider: str) -> Price | None:
        return self._prices.get(provider)

    def is_free(self, provider: str) -> bool:
        price = self._prices.get(provider)
        return price is not None and price.micros_per_call == 0


def default_entries() -> dict[str, PriceEntry | None]:
    """The shipped table, validated (a broken shipped file is a bug, so it raises)."""
    data = read_yaml(DEFAULT_PRICES_FILE, "prices") or {}
    return {
        str(name): None if entry is None else PriceEntry.model_validate(entry)
        for name, entry in data.items()
    }


def format_micros(micros: int) -> str:
    """Micro-units as an exact decimal string with six places.

    >>> format_micros(25000), format_micros(1_234_567_890)
    ('0.025000', '1234.567890')
    """
    return str((Decimal(micros) / MICROS).quantize(Decimal("0.000001")))
