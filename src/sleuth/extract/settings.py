"""The `extract:` section of sleuth.yaml: how pages are fetched and read.

>>> ExtractSettings().robots, ExtractSettings().max_bytes
(True, 5000000)
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["USER_AGENT", "ExtractSettings"]

#: Says who is asking and why, so a site can tell sleuth from a crawler it never allowed.
USER_AGENT = "sleuth/0.1 (reads a page an AI agent asked for; honours robots.txt)"


class ExtractSettings(BaseModel):
    """Fetching and reading pages (`sleuth extract`, `/v1/extract`, `include: content`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(
        10.0, gt=0, le=120, description="Per-page deadline: connecting, redirects and the body."
    )
    max_bytes: int = Field(
        5_000_000, gt=0, description="A page larger than this (decompressed) is refused."
    )
    max_redirects: int = Field(5, ge=0, le=20, description="Redirects followed, each re-checked.")
    robots: bool = Field(True, description="Honour robots.txt for the user agent below.")
    user_agent: str = Field(USER_AGENT, min_length=1)
    per_host: int = Field(2, ge=1, le=32, description="Pages fetched at once from one host.")
    max_pages: int = Field(20, ge=1, le=100, description="URLs one extract request may name.")
    max_chars: int = Field(
        100_000, ge=1000, description="Longer text is cut at a block boundary (`truncated`)."
    )
    cache_ttl_s: int = Field(
        3600, ge=0, description="How long an extracted page is answered from the cache."
    )
    search_pages: int = Field(
        5, ge=1, le=10, description="With include content: how many top results' pages are read."
    )
    excerpt_chars: int = Field(
        1200, ge=200, le=20_000, description="With include content: each excerpt's budget."
    )
