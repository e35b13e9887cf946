"""Each built-in tool's contract: its docs/tools.md definition, flags and summary, by concern.

The contract sits here, below every layer that reads it (settings' approval defaults, the
policy's read-only set, summaries, the local engine's grammar); each tool's typed input
and handler live in `melgui.tools`, bound to its definition by one `Tool` object.
"""
