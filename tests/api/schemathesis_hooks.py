"""Loaded by Schemathesis (SCHEMATHESIS_HOOKS) in `test_openapi_conformance.py`: its
`positive_data_acceptance`, narrowed by one thing JSON Schema cannot say.

A schema-valid query may still be refused by the guard: nothing searchable left once
control and invisible characters and markup are removed, only punctuation, or the
content policy. Such a refusal must be a 422 naming `query` with one of the guard's
own messages (or a 400 `policy_violation`); any other refusal of positive data is a
failure, exactly as in Schemathesis's check.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from schemathesis.checks import positive_data_acceptance

#: How the guard's refusals begin (sleuth.stages.safety.guard).
GUARD_REFUSALS = (
    "query: nothing searchable remains after",
    "query: only punctuation remains after cleaning",
    "query: refused by the content policy",
)


def refused_by_the_guard(status: int, body: Any) -> bool:
    if not isinstance(body, dict):
        return False
    if status == 400:
        return body.get("code") == "policy_violation" and body.get("field") == "query"
    message = str(body.get("message", ""))
    return status == 422 and body.get("field") == "query" and message.startswith(GUARD_REFUSALS)


@schemathesis.check
def positive_data_accepted_unless_the_guard_refused(ctx: Any, response: Any, case: Any) -> Any:
    if response.status_code in (400, 422):
        try:
            body = response.json()
        except ValueError:
            body = None
        if refused_by_the_guard(response.status_code, body):
            return None
    return positive_data_acceptance(ctx, response, case)
