"""The per-server endpoint, `/servers/{name}/mcp`: one downstream MCP server served as itself."""
