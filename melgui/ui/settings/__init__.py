"""The Settings dialog and what it shows beside the settings."""
