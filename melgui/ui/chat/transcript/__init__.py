"""The transcript document: drawing messages in, in order, page by page."""
