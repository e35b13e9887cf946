"""The agent: the loop that runs legs and tools, sessions, and approval policy."""
