"""The query before fan-out: keywords from the user's words, follow-ups completed."""

from sleuth.stages.query.rewrite import Rewritten, asks_for_sources, is_time_sensitive, rewrite

__all__ = ["Rewritten", "asks_for_sources", "is_time_sensitive", "rewrite"]
