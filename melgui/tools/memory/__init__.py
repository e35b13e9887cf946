"""The project memory behind remember and recall."""
