"""The chat view: streamed Markdown, tool-call cards, the input box."""
