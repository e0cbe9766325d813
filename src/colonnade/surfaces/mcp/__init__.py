"""The MCP surface: the catalog as MCP tools over Streamable HTTP and stdio, calls through the pipeline."""
