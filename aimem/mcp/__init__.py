"""The MCP server: a thin shell over the public API (``aimem mcp``)."""
