"""Hooks: commands the person or a trusted project runs at points of the loop, in Claude
Code's settings format (config), with its names (names), run as children (runner), read
by exit code and JSON (answers), for one conversation (hooks)."""
