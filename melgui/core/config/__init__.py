"""Settings and secrets."""
