"""A worker's change in its worktree: read, diffed, applied to the main folder or discarded."""
