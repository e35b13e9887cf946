"""The embedded engine: a GGUF model run in-process, with grammar-constrained tool calls."""
