"""The links in the transcript (copy code, open a call, fold Thinking, show more, actions)
and what following one does."""

from __future__ import annotations

from typing import Protocol
from urllib.parse import unquote

from PySide6.QtCore import QUrl, SignalInstance
from PySide6.QtGui import QDesktopServices, QGuiApplication

from melgui.ui.chat.blocks.segment_html import COPY_SCHEME
from melgui.ui.chat.blocks.thinking_block import THINK_SCHEME

CALL_SCHEME = "call"
CARD_SCHEME = "card"  # card:<call id>: fold or unfold a call's card in place
MORE_SCHEME = "more"
ACTION_SCHEME = "act"  # act:<verb>/<argument>: an action on a card or message (undo, …)


class LinkTarget(Protocol):
    callActivated: SignalInstance
    moreRequested: SignalInstance
    laterRequested: SignalInstance
    actionRequested: SignalInstance

    def code_text(self, code_id: int) -> str: ...

    def toggle_thinking(self, number: int) -> None: ...

    def toggle_card(self, call_id: str) -> None: ...


def follow(target: LinkTarget, url: QUrl) -> None:
    scheme = url.scheme()
    if scheme == COPY_SCHEME:
        try:
            code_id = int(url.path())
        except ValueError:
            return
        QGuiApplication.clipboard().setText(target.code_text(code_id))
    elif scheme == CALL_SCHEME:
        target.callActivated.emit(unquote(url.toString().partition(":")[2]))
    elif scheme == CARD_SCHEME:
        target.toggle_card(unquote(url.toString().partition(":")[2]))
    elif scheme == THINK_SCHEME:
        try:
            target.toggle_thinking(int(url.path()))
        except ValueError:
            return
    elif scheme == MORE_SCHEME:
        if url.path() == "later":
            target.laterRequested.emit()
        else:
            target.moreRequested.emit()
    elif scheme == ACTION_SCHEME:
        verb, _, argument = url.toString().partition(":")[2].partition("/")
        target.actionRequested.emit(verb, unquote(argument))
    elif scheme in ("http", "https"):
        QDesktopServices.openUrl(url)
