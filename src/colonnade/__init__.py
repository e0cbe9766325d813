"""Colonnade: a gateway that makes APIs and MCP servers safe and easy for AI agents to use."""

__version__ = "0.1.0"
