"""The tool-call inspector: every call, its approval, its result, and the wire log."""
