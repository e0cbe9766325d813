"""What both ends of a proxied MCP tool call share: the caller's relay and the server's answer.

The MCP surfaces serve the caller and the MCP adapter talks to the downstream server; neither
imports the other, so the values that pass between them (through the call's channel, and back on
the result's handover) live here, below both.
"""
