"""Approvals: the waiting queue, the bar and controls that answer it, and the rules editor."""
