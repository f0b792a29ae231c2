"""The project: its config, scaffold, manifest, caches and the MCP lock."""
