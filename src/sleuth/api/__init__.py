"""Adapters over the core, none with pipeline logic of its own: the `sleuth` command
(`cli*.py`), the HTTP service (`http*.py`, with `dashboard/`), and the MCP server
(`mcp*.py`); what the service adapters share (`body_limits`, `strict_body`,
`wire_protocol`, `service_gc`)."""
