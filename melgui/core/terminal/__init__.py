"""Pseudo-terminals, the terminal screen, and the registry of panes."""
