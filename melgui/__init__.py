"""melgui: a desktop app for working with an AI agent on a project folder."""

__version__ = "0.1.0"
