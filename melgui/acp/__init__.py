"""`melgui acp`: melgui's own loop and tools served as an Agent Client Protocol agent."""
