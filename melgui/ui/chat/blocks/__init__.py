"""The blocks of the transcript as HTML: Markdown segments, tool cards, Thinking, attachments."""
