"""A conversation as one model every view reads: its entries, their changes, and the
reducer that turns the agent loop's events into those changes (Qt-free)."""
