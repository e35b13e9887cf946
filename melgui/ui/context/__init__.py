"""The context meter's popup (what the next request's tokens are spent on, the pinned
facts), the preview before a compaction, and their wiring into the window."""
