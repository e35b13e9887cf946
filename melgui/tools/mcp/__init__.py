"""MCP servers as tools: configuration, trust, processes, and the bridge into a desk."""
