"""Panes beside the chat: terminals and worker agents, driven by the orchestration tools."""
