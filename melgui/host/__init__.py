"""The agent host: desks, sessions, loops and their numbered changes in a process of their
own, served to views (the window, `melgui exec --host`) over newline-delimited JSON-RPC.

The protocol is written down in docs/host-protocol.md. Nothing here imports Qt.
"""
