"""Git worktrees for workers: one folder and branch per worker, reviewed and merged back."""
