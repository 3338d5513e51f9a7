from __future__ import annotations

import json

from sleuth.store.usage_records import AuditEntry, UsageRow


def test_an_audit_entry_is_stored_as_compact_json_and_read_back_the_same() -> None:
    entry = AuditEntry(
        at=1_700_000_000.25,
        tenant="acme",
        status="ok",
        query_hash="ab" * 32,
        providers=("brave", "tavily"),
        cost_micros={"USD": 1200},
        unpriced_calls=1,
        cache="miss",
        key="sk_abcd1234",
        adapter="http_search",
        query="café prices",
    )
    text = entry.to_json()
    assert " " not in text.replace("café prices", "")  # compact separators
    assert "café" in text  # not escaped
    assert json.loads(text)["providers"] == ["brave", "tavily"]
    assert json.loads(text)["cost_micros"] == {"USD": 1200}
    assert AuditEntry.from_json(text) == entry


def test_a_usage_row_is_read_back_the_same() -> None:
    row = UsageRow(1_700_000_000.5, "acme", "brave", "ok", 300, currency="USD", task_id="t1")
    assert json.loads(row.to_json())["cost_micros"] == 300
    assert UsageRow.from_json(row.to_json()) == row
