"""Checkpoints in the window: changed files on call cards and in the inspector, undo,
rewind, diffs and the three-version conflict chooser."""
