"""The small icon actions under a person's message: copy it, edit a copy of it in the
prompt box, and (when checkpoints give it) rewind the conversation and files to it."""

from __future__ import annotations

from melgui.ui.chat.blocks.links import ACTION_SCHEME
from melgui.ui.chat.blocks.tool_cards import icon_img
from melgui.ui.runtime.look.tokens import ICON_S, Colors


def action_icon(verb: str, index: int, icon: str, words: str, colors: Colors) -> str:
    """An icon link `act:<verb>/<index>`; `words` are its tooltip."""
    image = icon_img(icon, colors.muted, ICON_S, words)
    link = f'href="{ACTION_SCHEME}:{verb}/{index}" style="text-decoration:none"'
    return f'<a {link} title="{words}">{image}</a>'


def message_actions_html(index: int, colors: Colors, more: str = "") -> str:
    """The actions of message `index` as a right-aligned row; `more`: further icons."""
    icons = [
        action_icon("copy", index, "copy", "Copy the message", colors),
        action_icon("edit", index, "pencil", "Edit a copy in the prompt box", colors),
    ]
    if more:
        icons.append(more)
    return '<p align="right" style="margin:0">' + "&nbsp;&nbsp;".join(icons) + "</p>"
