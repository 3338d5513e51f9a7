"""What comes back from a back end: `RawHit`s, and the checks every body passes.

`check_status` raises the contract error for a non-2xx answer (with the Retry-After
it names), `expect_object` refuses a body that is not a JSON object, `text_or_none`
reads a string field. Shared by the provider modules (through `sleuth.providers.base`)
and by the declarative field mapping (`sleuth.providers.mapping`). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sleuth.errors import BadResponse, from_status

__all__ = ["RawHit", "check_status", "expect_object", "retry_after_s", "text_or_none"]


@dataclass(frozen=True)
class RawHit:
    """One result exactly as the back end described it, before normalisation."""

    url: str | None
    title: str | None
    snippet: str | None
    published_at: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)
    #: Unified fields whose primary name was missing and a later alias answered.
    fell_back: tuple[str, ...] = ()


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """The Retry-After header in seconds (any case of the name); None when absent or not
    a number of seconds.

    >>> retry_after_s({"Retry-After": "2"}), retry_after_s({"retry-after": "soon"})
    (2.0, None)
    """
    for key, value in headers.items():
        if key.lower() == "retry-after":
            try:
                seconds = float(value.strip())
            except ValueError:
                return None
            return seconds if seconds >= 0 else None
    return None


def check_status(provider: str, status: int, headers: Mapping[str, str], body: Any) -> None:
    """Raise the contract error for a non-2xx answer; shared by every HTTP provider."""
    if 200 <= status < 300:
        return
    text = body if isinstance(body, str) else str(body)
    raise from_status(provider, status, " ".join(text.split())[:200], retry_after_s(headers))


def expect_object(provider: str, body: Any) -> Mapping[str, Any]:
    """The body as a JSON object, or `BadResponse` (a CAPTCHA page dressed as 200, say)."""
    if not isinstance(body, Mapping):
        preview = " ".join(str(body).split())[:120]
        raise BadResponse(
            f"{provider} answered something that is not a JSON object: {preview!r}",
            provider=provider,
        )
    return body


def text_or_none(value: Any) -> str | None:
    """A string field as sent, with empty strings and non-strings counted as missing."""
    if isinstance(value, str) and value.strip():
        return value
    return None
