"""Confinement of the child processes the gateway starts (stdio servers, organ sidecars): docs/servers.md."""
