"""Signals when an agent needs the person: notifications, urgency hint, badges."""
