"""The MCP client room: downstream servers reached through the `mcp` SDK (pool, upstream supervisor,
discovery, wire) and the one fenced module of client-side SDK seams (`direct_post.py`)."""
