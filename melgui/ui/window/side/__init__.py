"""The window's right-hand side panel and the Plans page it holds (the inspector and the
MCP servers panel, its other pages, live with their areas)."""
