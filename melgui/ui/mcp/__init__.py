"""The MCP servers panel: state, restart, disable, per-tool enable, logs, project trust."""
