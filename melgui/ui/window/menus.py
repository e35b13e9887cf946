"""The menu bar: every command of the window as a QAction, with its shortcut.

`build_menus(window)` adds File, View, Panes and Help menus and returns the actions by a
short name (`actions["quit"].trigger()`); the command palette lists the same actions.
Standard `QKeySequence` keys are used where the platform has one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

Keys = QKeySequence.StandardKey | str | None


@dataclass(frozen=True, slots=True)
class Command:
    """One menu entry: a short name, its text, its keys and what it does."""

    name: str
    menu: str
    text: str
    keys: Keys
    run: Callable[[], object]
    tip: str = ""


def _sequence(keys: Keys) -> list[QKeySequence]:
    if keys is None:
        return []
    if isinstance(keys, str):
        return [QKeySequence(keys)]
    found = QKeySequence.keyBindings(keys)
    return list(found) if found else []


def build_menus(window: QMainWindow, commands: list[Command]) -> dict[str, QAction]:
    """Add one menu per `Command.menu` (in first-seen order) with its actions."""
    menus: dict[str, QMenu] = {}
    actions: dict[str, QAction] = {}
    bar = window.menuBar()
    for command in commands:
        menu = menus.get(command.menu)
        if menu is None:
            menu = bar.addMenu(command.menu)
            menu.setObjectName(f"menu{command.menu.strip('&').replace('&', '')}")
            menus[command.menu] = menu
        action = QAction(command.text, window)
        action.setObjectName(f"action_{command.name}")
        action.setProperty("menuName", command.menu.replace("&", ""))
        action.setShortcuts(_sequence(command.keys))
        if command.tip:
            action.setStatusTip(command.tip)
            action.setToolTip(command.tip)
        run = command.run
        action.triggered.connect(lambda _checked=False, run=run: run())
        menu.addAction(action)
        window.addAction(action)  # shortcuts work while the menu bar is hidden too
        actions[command.name] = action
    return actions


def plain_text(action: QAction) -> str:
    """The action's text without the mnemonic marks and the trailing ellipsis."""
    return action.text().replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…")


def keys_text(action: QAction) -> str:
    """The action's main shortcut as the platform writes it, e.g. "Ctrl+Q"."""
    return action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)


def menu_name(action: QAction) -> str:
    """The menu the action is in ("Panes"), or ""."""
    name = action.property("menuName")
    return name if isinstance(name, str) else ""
