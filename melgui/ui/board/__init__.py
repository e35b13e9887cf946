"""The agents board: every agent of the window in one list."""
