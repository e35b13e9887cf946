"""Which files and lines each worker's worktree changed, and where two workers overlap."""
