"""The cited summary: extractive (`summarize`), or written by a configured model
(`llm_summary` builds and reads its chat request; `sleuth.model_summary` sends it)."""

from sleuth.stages.summary.summarize import summarize

__all__ = ["summarize"]
