"""The Changes view: review a worker's worktree against its base, apply hunks or files to
the main folder, merge its branch, or discard it."""
