"""The agents board's model and the counts it shows."""
