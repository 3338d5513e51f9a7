"""The price table: shipped defaults with their dates, overrides, exact micro-units."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sleuth.usage.prices import PriceEntry, PriceTable, default_entries


def test_the_shipped_table_prices_what_docs_providers_collected_and_dates_it() -> None:
    shipped = default_entries()
    priced = {name: e for name, e in shipped.items() if e is not None and e.per_1000 != "0"}
    assert {name: (e.per_1000, e.currency) for name, e in priced.items()} == {
        "kagi": ("25", "USD"),
        "linkup": ("5", "EUR"),
        "youcom": ("5.00", "USD"),
    }
    assert all(entry.as_of == "2026-12-01" and entry.source for entry in priced.values())


def test_unknown_is_none_never_free() -> None:
    table = PriceTable.from_settings({})
    assert table.of("brave") is None and not table.is_free("brave")
    assert table.of("an_undeclared_one") is None
    assert table.is_free("local") and table.is_free("wikipedia")


def test_configuration_overrides_and_adds_prices() -> None:
    table = PriceTable.from_settings(
        {"brave": {"per_1000": "5", "currency": "USD"}, "kagi": None, "internal": {"per_1000": "0"}}
    )
    brave = table.of("brave")
    assert brave is not None and brave.micros_per_call == 5000
    assert table.of("kagi") is None  # an operator may say "unknown" too
    assert table.is_free("internal")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", "not a decimal number"),
        ("-1", "0 or more"),
        ("0.0001", "not a whole micro-unit per call"),
        ("NaN", "0 or more"),
    ],
)
def test_a_bad_price_is_refused_by_name(value: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        PriceEntry(per_1000=value)


def test_a_currency_is_an_iso_code() -> None:
    with pytest.raises(ValidationError, match="currency"):
        PriceEntry(per_1000="1", currency="dollars")
