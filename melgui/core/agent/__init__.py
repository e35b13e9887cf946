"""The agent: the loop that runs legs and tools, sessions, their hooks and compaction."""
