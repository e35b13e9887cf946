"""A line in the chat while the project's MCP servers wait for trust, with a button that
trusts the file and starts them (the servers panel says it too, but behind a tab)."""

from __future__ import annotations

import weakref

from melgui.core.protocol.tools.mcp.view import McpView
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.mcp.servers_panel import ServersPanel
from melgui.ui.mcp.servers_there import waiting_file, waiting_text_there
from melgui.ui.runtime.theme import Colors

TRUST_LINK = ("act:trust-mcp/", "Trust and start")


def waiting_text(view: McpView) -> str | None:
    """What to say in the chat, or None when nothing waits for trust."""
    if view.untrusted is None:
        return None
    names = sorted(s.name for s in view.servers() if s.status == "untrusted")
    listed = ", ".join(names) if names else "its servers"
    return (
        f"MCP servers from {view.untrusted} are waiting for trust and have not started: "
        f"{listed}. Trust the file as it is now to start them (View → MCP servers shows them)."
    )


class TrustNote:
    """Says it once in each chat view it is given and answers the line's button."""

    def __init__(self, panel: ServersPanel, colors: Colors) -> None:
        self.colors = colors
        self._panel = panel
        self._said: weakref.WeakSet[ChatView] = weakref.WeakSet()

    def mention(self, chat: ChatView) -> None:
        text = waiting_text(self._panel.view) or waiting_text_there(self._panel.there)
        if text is None or chat in self._said:
            return
        self._said.add(chat)
        chat.transcript.add_notice(text, self.colors.warn, link=TRUST_LINK)
        said = weakref.ref(chat)
        chat.actionRequested.connect(lambda verb, _argument: self._on_action(verb, said()))

    def _on_action(self, verb: str, chat: ChatView | None) -> None:
        waiting = self._panel.view.untrusted or waiting_file(self._panel.there)
        if verb != "trust-mcp" or waiting is None or chat is None:
            return
        self._panel.trust_project()
        done = "Trusted: the project's MCP servers are starting."
        chat.transcript.add_notice(done, self.colors.muted)
