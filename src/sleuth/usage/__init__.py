"""Cost and audit: what each provider call cost, by tenant, key, tool and workflow;
budgets per tenant; the append-only audit log. docs/usage.md has the user's view.

    prices.py      the price table (built-in defaults with their dates, then sleuth.yaml)
    settings.py    the `usage:` and `audit:` sections
    accounting.py  a finished search -> its usage rows and audit entry (pure)
    report.py      rows -> calls, cost, savings, failures per day or month (pure)
    ledger.py      the policy over the store: budgets, recording, reports, retention

The names below are imported on first use (`sleuth.lazy_names`): the settings and
`sleuth usage --help` read one module without loading the others.

Rows and entries are kept by the store (`sleuth.store.usage_records`): SQLite by
default, Redis when the store is Redis, memory for a memory store.
"""

from __future__ import annotations

import typing

from sleuth import lazy_names

if typing.TYPE_CHECKING:
    from sleuth.usage.accounting import Finished, account
    from sleuth.usage.ledger import Ledger, Spending
    from sleuth.usage.prices import Price, PriceEntry, PriceTable, format_micros
    from sleuth.usage.report import GROUPS, Group, summarise, total
    from sleuth.usage.settings import AuditSettings, BudgetRule, Period, UsageSettings

__all__ = [
    "GROUPS",
    "AuditSettings",
    "BudgetRule",
    "Finished",
    "Group",
    "Ledger",
    "Period",
    "Price",
    "PriceEntry",
    "PriceTable",
    "Spending",
    "UsageSettings",
    "account",
    "format_micros",
    "summarise",
    "total",
]

_HOMES = {
    "Finished": "sleuth.usage.accounting",
    "account": "sleuth.usage.accounting",
    "Ledger": "sleuth.usage.ledger",
    "Spending": "sleuth.usage.ledger",
    "Price": "sleuth.usage.prices",
    "PriceEntry": "sleuth.usage.prices",
    "PriceTable": "sleuth.usage.prices",
    "format_micros": "sleuth.usage.prices",
    "GROUPS": "sleuth.usage.report",
    "Group": "sleuth.usage.report",
    "summarise": "sleuth.usage.report",
    "total": "sleuth.usage.report",
    "AuditSettings": "sleuth.usage.settings",
    "BudgetRule": "sleuth.usage.settings",
    "Period": "sleuth.usage.settings",
    "UsageSettings": "sleuth.usage.settings",
}


__getattr__, __dir__ = lazy_names.hooks(__name__, _HOMES)
