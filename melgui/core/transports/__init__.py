"""Transports: from a leg request to a stream of events (relay, OpenAI-compatible,
the embedded model) and the factory that picks one from settings."""
