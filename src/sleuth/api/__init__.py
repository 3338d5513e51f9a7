"""Adapters over the core: the CLI now; HTTP, MCP and the dashboard later."""
